import { useEffect, useRef, useState } from 'preact/hooks';
import { DataTable, ErrorNote, Json, messageOf, text, type AppPageProps } from '../ui';

interface LogEntry {
  _id: string;
  type: string;
  started: string;
  completed: string;
  messages?: string[];
  error?: string;
  error_code?: string;
  function_name?: string;
  user_id?: string;
  [field: string]: unknown;
}

interface Filters {
  type: string;
  status: 'all' | 'errors';
  user: string;
  text: string;
  from: string;
  to: string;
}

// App Services' log types (the admin API's `type` filter), as realm-cli names them.
const logTypes = [
  'FUNCTION',
  'DB_TRIGGER',
  'SCHEDULED_TRIGGER',
  'AUTH_TRIGGER',
  'AUTH',
  'ENDPOINT',
  'WEBHOOK',
  'GRAPHQL',
  'SYNC_CONNECTION_START',
  'SYNC_CONNECTION_END',
  'SYNC_ERROR',
  'SCHEMA_GENERATION',
  'LOG_FORWARDER',
];
const tailEveryMs = 1500;
const kept = 500;

/**
 * The app's log, every filter applied by the admin API (type, errors only, user, text, time range), so
 * what is shown is what the server matched, not a filtered page of it. Live tail asks, with the same
 * filters, for the entries from the newest one shown onwards.
 */
export function LogsPage({ api, appId }: AppPageProps) {
  const [filters, setFilters] = useState<Filters>({ type: '', status: 'all', user: '', text: '', from: '', to: '' });
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [tail, setTail] = useState(false);
  const [selected, setSelected] = useState<LogEntry | undefined>();
  const [arrived, setArrived] = useState(0);
  const [round, setRound] = useState(0);
  const newest = useRef<string | undefined>();
  const filterKeys = [appId, filters.type, filters.status, filters.user, filters.text, filters.from, filters.to];

  const query = (extra: Record<string, string>) => {
    const params = new URLSearchParams();
    if (filters.type) params.set('type', filters.type);
    if (filters.status === 'errors') params.set('errors_only', 'true');
    if (filters.user.trim()) params.set('user_id', filters.user.trim());
    if (filters.text.trim()) params.set('text', filters.text.trim());
    if (filters.from) params.set('start_date', new Date(filters.from).toISOString());
    if (filters.to) params.set('end_date', new Date(filters.to).toISOString());
    for (const [key, value] of Object.entries(extra)) params.set(key, value);
    return api.get<{ logs: LogEntry[] }>(api.app(appId, `/logs?${params.toString()}`));
  };

  useEffect(() => {
    let current = true;
    setError(undefined);
    query({ limit: '100' }).then(
      (answer) => {
        if (!current) return;
        setEntries(answer.logs);
        newest.current = answer.logs[0]?.started;
      },
      (failure: unknown) => current && setError(messageOf(failure)),
    );
    return () => {
      current = false;
    };
  }, [...filterKeys, round]);

  useEffect(() => {
    if (!tail) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        // The API's start_date is exclusive: from just before the newest entry shown, so an entry of the same
        // millisecond written after it is not missed (the ones already shown are dropped below).
        const since = newest.current ? new Date(Date.parse(newest.current) - 1).toISOString() : filters.from ? new Date(filters.from).toISOString() : new Date(Date.now() - 60_000).toISOString();
        const answer = await query({ limit: '100', start_date: since });
        if (stopped) return;
        setEntries((shown) => {
          const known = new Set(shown.map((entry) => entry._id));
          const fresh = answer.logs.filter((entry) => !known.has(entry._id));
          if (fresh.length === 0) return shown;
          setArrived((count) => count + fresh.length);
          const merged = [...fresh, ...shown].sort((a, b) => (a.started < b.started ? 1 : a.started > b.started ? -1 : 0)).slice(0, kept);
          newest.current = merged[0]?.started;
          return merged;
        });
        setError(undefined);
      } catch (failure) {
        if (!stopped) setError(messageOf(failure));
      }
      if (!stopped) timer = setTimeout(() => void poll(), tailEveryMs);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [tail, ...filterKeys]);

  const set = (field: keyof Filters) => (event: Event) => setFilters({ ...filters, [field]: (event.currentTarget as HTMLInputElement).value });
  // The user and text fields apply when committed (Enter or leaving the field), not at each keystroke; what
  // is typed meanwhile is kept here, so a live-tail update does not reset the field.
  const [typed, setTyped] = useState({ user: '', text: '' });
  const type = (field: 'user' | 'text') => ({
    value: typed[field],
    onInput: (event: Event) => setTyped({ ...typed, [field]: (event.currentTarget as HTMLInputElement).value }),
    onChange: set(field),
  });

  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Logs</h1>
      <form class="card filters" aria-label="Log filters" onSubmit={(event) => (event.preventDefault(), setRound((value) => value + 1))}>
        <label>
          Type
          <select value={filters.type} onChange={set('type')}>
            <option value="">All types</option>
            {logTypes.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={filters.status} onChange={set('status')}>
            <option value="all">All</option>
            <option value="errors">Errors only</option>
          </select>
        </label>
        <label>
          User id
          <input name="user-id" {...type('user')} />
        </label>
        <label>
          Text
          <input type="search" name="text" {...type('text')} />
        </label>
        <label>
          From
          <input type="datetime-local" value={filters.from} onChange={set('from')} />
        </label>
        <label>
          To
          <input type="datetime-local" value={filters.to} onChange={set('to')} />
        </label>
        <label class="inline">
          <input type="checkbox" checked={tail} onChange={(event) => setTail(event.currentTarget.checked)} /> Live tail
        </label>
        <button type="submit">Refresh</button>
      </form>
      <ErrorNote error={error} />
      <p class="sr-only" aria-live="polite">
        {tail && arrived > 0 ? `${arrived} new log entries` : ''}
      </p>
      <div class="split">
        <DataTable
          caption={`${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}${tail ? ' · live' : ''}`}
          columns={['Started', 'Type', 'Name', 'Status', 'User']}
          items={entries}
          row={(entry) => (
            <tr key={entry._id} class={entry === selected ? 'selected' : ''}>
              <td>
                <button type="button" class="link" aria-pressed={entry === selected} onClick={() => setSelected(entry)}>
                  {new Date(entry.started).toLocaleTimeString()}
                </button>
              </td>
              <td>{entry.type}</td>
              <td>{entry.function_name ?? nameOf(entry)}</td>
              <td class={entry.error ? 'bad' : 'good'}>{entry.error ? 'error' : 'ok'}</td>
              <td>
                <code>{entry.user_id ?? ''}</code>
              </td>
            </tr>
          )}
        />
        {selected && <LogRecord entry={selected} onClose={() => setSelected(undefined)} />}
      </div>
    </section>
  );
}

function nameOf(entry: LogEntry): string {
  for (const field of ['name', 'trigger_name', 'endpoint', 'event_subscription_name']) if (typeof entry[field] === 'string') return entry[field];
  return '';
}

/** One entry's whole record: arguments (unless the function disables them), result or error, duration, trace id. */
function LogRecord({ entry, onClose }: { entry: LogEntry; onClose: () => void }) {
  const duration = Date.parse(entry.completed) - Date.parse(entry.started);
  return (
    <aside class="card record" aria-label="Log entry">
      <div class="row">
        <h2>
          {entry.type} {entry.function_name ?? ''}
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <dl>
        <dt>Started</dt>
        <dd>{entry.started}</dd>
        <dt>Duration</dt>
        <dd>{Number.isFinite(duration) ? `${duration} ms` : '—'}</dd>
        <dt>Status</dt>
        <dd>{entry.error ? `error: ${entry.error}${entry.error_code ? ` (${entry.error_code})` : ''}` : 'ok'}</dd>
        <dt>Trace id</dt>
        <dd>
          <code>{text(entry['trace_id'] ?? entry['traceId']) || '—'}</code>
        </dd>
        <dt>Arguments</dt>
        <dd>{entry['arguments'] !== undefined ? <code>{text(entry['arguments'])}</code> : entry['arguments_omitted'] ? 'not logged (disable_arg_logs)' : '—'}</dd>
      </dl>
      <h3>Whole record</h3>
      <Json value={entry} label="Whole log record" />
    </aside>
  );
}
