/**
 * realm-cli's JSON output (`-f, --output-format json`): every message a command prints is one line
 * `{"time", "level", ...payload}`, as realm-cli 2.6.3's internal/terminal (log.go, text.go, list.go,
 * table.go, json.go, error.go) writes it, so that scripts reading realm-cli's lines (`| jq '.data'`) read
 * Tessera's. Commands say which logs they print with the builders here; `Output` decides whether they are
 * printed. Nothing here does I/O.
 */

export type RealmCliLevel = 'info' | 'warn' | 'error' | 'debug';

/** One of realm-cli's terminal logs: a text, a list, a table, a JSON document or an error. */
export type RealmCliLog =
  | { kind: 'text'; level: RealmCliLevel; message: string }
  | { kind: 'list'; level: RealmCliLevel; message: string; data: string[] }
  | { kind: 'table'; level: RealmCliLevel; message: string; headers: string[]; data: Record<string, string>[] }
  | { kind: 'doc'; level: RealmCliLevel; message: string; doc: unknown }
  | { kind: 'error'; level: 'error'; err: string };

/**
 * What a command prints under -f json: its logs, a function making them (called only in that mode), or a
 * short message, which prints the command's result as a JSON document log (Tessera's own commands).
 */
export type RealmCliOutput = string | RealmCliLog | readonly RealmCliLog[] | (() => RealmCliLog | readonly RealmCliLog[]);

/**
 * A value as realm-cli puts it in a list item or table cell (its `parseValue`: text as it is, nothing as
 * blank, anything else as Go's `%+v` prints it; objects, which Go would print as `map[...]`, are JSON here).
 */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return `[${value.map(cellText).join(' ')}]`;
  return JSON.stringify(value);
}

/** The builders, one per realm-cli log constructor (NewTextLog, NewWarningLog, NewListLog, ...). */
export const realmCliLog = {
  text: (message: string): RealmCliLog => ({ kind: 'text', level: 'info', message }),
  warning: (message: string): RealmCliLog => ({ kind: 'text', level: 'warn', message }),
  debug: (message: string): RealmCliLog => ({ kind: 'text', level: 'debug', message }),
  list: (message: string, items: readonly unknown[]): RealmCliLog => ({ kind: 'list', level: 'info', message, data: items.map(cellText) }),
  /** NewFollowupLog: suggestions and next steps, a list at level debug. */
  followup: (message: string, items: readonly unknown[]): RealmCliLog => ({ kind: 'list', level: 'debug', message, data: items.map(cellText) }),
  /**
   * NewTableLog: each row keeps only the headers' cells, as text; an empty row is dropped. Keys are in
   * sorted order, as Go writes a map.
   */
  table: (message: string, headers: readonly string[], rows: readonly Record<string, unknown>[]): RealmCliLog => ({
    kind: 'table',
    level: 'info',
    message,
    headers: [...headers],
    data: rows.filter((row) => Object.keys(row).length > 0).map((row) => Object.fromEntries([...headers].sort().map((header) => [header, cellText(row[header])]))),
  }),
  doc: (message: string, doc: unknown): RealmCliLog => ({ kind: 'doc', level: 'info', message, doc: doc ?? null }),
  error: (message: string): RealmCliLog => ({ kind: 'error', level: 'error', err: message }),
};

/** The logs a command's output stands for (a message alone: its result as a document). */
export function realmCliLogs(output: RealmCliOutput, result: unknown): readonly RealmCliLog[] {
  if (typeof output === 'string') return [realmCliLog.doc(output, result)];
  const logs = typeof output === 'function' ? output() : output;
  return isLogList(logs) ? logs : [logs];
}

const isLogList = (logs: RealmCliLog | readonly RealmCliLog[]): logs is readonly RealmCliLog[] => Array.isArray(logs);

/** The line realm-cli prints for a log: time and level first, then the payload's fields in its order. */
export function realmCliLine(log: RealmCliLog, time: Date = new Date()): string {
  const head = { time: time.toISOString(), level: log.level };
  switch (log.kind) {
    case 'text':
      return JSON.stringify({ ...head, message: log.message });
    case 'list':
      return JSON.stringify({ ...head, message: log.message, data: log.data });
    case 'table':
      return JSON.stringify({ ...head, message: log.message, data: log.data, headers: log.headers });
    case 'doc':
      return JSON.stringify({ ...head, message: log.message, doc: log.doc });
    case 'error':
      return JSON.stringify({ ...head, err: log.err });
  }
}

/**
 * realm-cli's name for a command in its error line (`<name> failed: <error>`): its commands' Display (or
 * Use) names. Tessera's own commands keep their path.
 */
const REALM_CLI_DISPLAY: Readonly<Record<string, string>> = {
  'apps create': 'app create',
  'apps delete': 'app delete',
  'apps describe': 'app describe',
  'apps diff': 'app diff',
  diff: 'app diff',
  'apps init': 'app init',
  'accessList create': 'accesslist create',
  'accessList delete': 'accesslist delete',
  'accessList list': 'accesslist list',
  'accessList update': 'accesslist update',
  'function run': 'run',
  'secrets update': 'secret update',
  'users create': 'user create',
  'users delete': 'user delete',
  'users disable': 'user disable',
  'users enable': 'user enable',
  'users list': 'list',
  'users revoke': 'user revoke',
};

export function realmCliDisplay(commandPath: string): string {
  return REALM_CLI_DISPLAY[commandPath] ?? commandPath;
}

/** realm-cli's `Display()` of an auth provider type (the title of its users tables). */
export const PROVIDER_DISPLAY: ReadonlyArray<readonly [type: string, display: string]> = [
  ['local-userpass', 'User/Password'],
  ['api-key', 'ApiKey'],
  ['oauth2-facebook', 'Facebook'],
  ['oauth2-google', 'Google'],
  ['anon-user', 'Anonymous'],
  ['custom-token', 'Custom JWT'],
  ['oauth2-apple', 'Apple'],
  ['custom-function', 'Custom Function'],
];

/** A duration as Go's `time.Duration.String()` writes it (`0s`, `12ms`, `1.5s`, `1m5s`), from milliseconds. */
export function goDuration(milliseconds: number): string {
  if (!Number.isFinite(milliseconds) || milliseconds === 0) return '0s';
  const sign = milliseconds < 0 ? '-' : '';
  const ms = Math.abs(Math.round(milliseconds));
  if (ms < 1000) return `${sign}${ms}ms`;
  const trim = (seconds: number): string => String(Number((seconds / 1000).toFixed(3)));
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = `${trim(ms % 60_000)}s`;
  if (hours) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/** A time as realm-cli's `logs list` writes it (Go layout `2006-01-02T15:04:05.000-0700`), in UTC. */
export function logsDate(date: Date): string {
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)}+0000`;
}

/** A Unix time as Go's `time.Unix(s, 0).UTC().String()` writes it (`2006-01-02 15:04:05 +0000 UTC`). */
export function goUtcString(unixSeconds: number): string {
  const date = new Date(unixSeconds * 1000);
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000 UTC`;
}
