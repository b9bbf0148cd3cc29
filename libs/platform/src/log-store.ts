import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { newObjectIdHex } from './ids';

/** One application log entry, in the admin API's shape (`GET .../logs` returns `{ logs: [...] }`). */
export interface LogEntry {
  _id: string;
  /** `FUNCTION`, `TRIGGER`, `AUTH`, `SYNC_*`, `GRAPHQL`, `DEPLOYMENT`, ... */
  type: string;
  messages: string[];
  /** ISO 8601. */
  started: string;
  completed: string;
  error?: string;
  error_code?: string;
  function_id?: string;
  function_name?: string;
  user_id?: string;
  [extra: string]: unknown;
}

export interface NewLogEntry {
  type: string;
  messages: string[];
  started?: string;
  completed?: string;
  error?: string;
  error_code?: string;
  function_id?: string;
  function_name?: string;
  user_id?: string;
  [extra: string]: unknown;
}

export interface LogQuery {
  types?: readonly string[];
  errorsOnly?: boolean;
  /** Inclusive bounds on `started`. */
  start?: Date;
  end?: Date;
  /** Most recent entries first; at most this many (default 100). */
  limit?: number;
}

/** Where services write application logs (the function runtime, triggers, sync) and the admin API reads them. */
export abstract class LogStore {
  abstract append(appId: string, entry: NewLogEntry): Promise<LogEntry>;
  abstract list(appId: string, query?: LogQuery): Promise<LogEntry[]>;
}

/** Logs as JSON lines in `<dataDir>/platform/apps/<appId>/logs.jsonl`, appended, read newest first. */
export class FileLogStore extends LogStore {
  constructor(private readonly dataDir: string) {
    super();
  }

  private path(appId: string): string {
    return join(this.dataDir, 'platform', 'apps', appId, 'logs.jsonl');
  }

  async append(appId: string, entry: NewLogEntry): Promise<LogEntry> {
    const now = new Date().toISOString();
    const stored: LogEntry = { ...entry, _id: newObjectIdHex(), started: entry.started ?? now, completed: entry.completed ?? entry.started ?? now };
    await mkdir(dirname(this.path(appId)), { recursive: true });
    await appendFile(this.path(appId), `${JSON.stringify(stored)}\n`);
    return stored;
  }

  async list(appId: string, query: LogQuery = {}): Promise<LogEntry[]> {
    let text: string;
    try {
      text = await readFile(this.path(appId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const entries: LogEntry[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        entries.push(JSON.parse(line) as LogEntry);
      } catch {
        // a torn last line from a crash mid-append: skip it
      }
    }
    const start = query.start?.getTime();
    const end = query.end?.getTime();
    return entries
      .filter((entry) => !query.types?.length || query.types.includes(entry.type))
      .filter((entry) => !query.errorsOnly || entry.error !== undefined)
      .filter((entry) => start === undefined || Date.parse(entry.started) >= start)
      .filter((entry) => end === undefined || Date.parse(entry.started) <= end)
      .reverse()
      .slice(0, query.limit ?? 100);
  }
}
