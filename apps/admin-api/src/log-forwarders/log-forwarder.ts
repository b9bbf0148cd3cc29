import type { AppConfig, AppFiles } from '@tessera/app-config';
import type { LogEntry } from '@tessera/platform';
import { z } from 'zod';

/** App Services' `LogType` values a forwarder selects entries by. */
export const LOG_TYPES = ['auth', 'endpoint', 'function', 'graphql', 'push', 'schema', 'service', 'sync', 'trigger', 'trigger_error_handler'] as const;

const actionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('collection'), name: z.string().optional(), data_source: z.string().min(1), database: z.string().min(1), collection: z.string().min(1) }),
  z.object({ type: z.literal('function'), name: z.string().min(1) }),
  // Tessera: entries POSTed as JSON to a URL (App Services reached one through a function).
  z.object({ type: z.literal('http'), url: z.string().url().refine((url) => /^https?:\/\//.test(url), 'must be an http(s) URL') }),
]);

/** `LogForwarderConstructor` of the admin API v3 (openapi-admin-v3.yaml), validated as it arrives. */
export const logForwarderSchema = z.object({
  name: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, 'may only contain letters, digits, underscores and hyphens'),
  disabled: z.boolean(),
  log_types: z.array(z.enum(LOG_TYPES)).min(1),
  log_statuses: z.array(z.enum(['error', 'success'])).min(1),
  policy: z.object({ type: z.enum(['single', 'batch']) }),
  action: actionSchema,
});

export type LogForwarderConfig = z.infer<typeof logForwarderSchema>;
export type LogForwarder = LogForwarderConfig & { _id: string };

const PREFIX = 'log_forwarders/';

/** The forwarders of an app: its `log_forwarders/<name>.json` files, as App Services exported them. */
export function forwardersOf(app: AppConfig): LogForwarder[] {
  return forwardersIn(app.extraFiles);
}

/** The forwarders among an app's files (its deployment's, or the model's unmodelled ones). */
export function forwardersIn(files: AppFiles): LogForwarder[] {
  const forwarders: LogForwarder[] = [];
  for (const [path, bytes] of files) {
    if (!path.startsWith(PREFIX) || !path.endsWith('.json')) continue;
    try {
      const value = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
      const parsed = logForwarderSchema.safeParse(value);
      if (parsed.success) forwarders.push({ ...parsed.data, _id: typeof value['_id'] === 'string' ? value['_id'] : parsed.data.name });
    } catch {
      // A file that is not a forwarder forwards nothing.
    }
  }
  return forwarders.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Writes (or with `undefined`, removes) a forwarder's file in the app. */
export function setForwarder(app: AppConfig, name: string, forwarder: LogForwarder | undefined): void {
  app.extraFiles.delete(`${PREFIX}${name}.json`);
  if (forwarder) app.extraFiles.set(`${PREFIX}${forwarder.name}.json`, Buffer.from(`${JSON.stringify(forwarder, null, 2)}\n`));
}

/** The App Services log type of an entry's `type` (`DB_TRIGGER` is a trigger's, `SYNC_SESSION_START` sync's). */
export function logTypeOf(entryType: string): (typeof LOG_TYPES)[number] | undefined {
  const type = entryType.toUpperCase();
  if (type === 'TRIGGER_ERROR_HANDLER') return 'trigger_error_handler';
  if (type.endsWith('TRIGGER')) return 'trigger';
  if (type.startsWith('SYNC')) return 'sync';
  if (type.startsWith('SCHEMA')) return 'schema';
  if (type.startsWith('PUSH')) return 'push';
  if (type === 'FUNCTION') return 'function';
  if (type === 'AUTH') return 'auth';
  if (type === 'ENDPOINT' || type === 'WEBHOOK') return 'endpoint';
  if (type === 'GRAPHQL') return 'graphql';
  if (type.startsWith('SERVICE') || type === 'MONGODB') return 'service';
  return undefined;
}

/** Whether a forwarder takes an entry: its type is one of `log_types` and its outcome one of `log_statuses`. */
export function forwards(forwarder: LogForwarderConfig, entry: LogEntry): boolean {
  const type = logTypeOf(entry.type);
  const status = entry.error !== undefined ? 'error' : 'success';
  return type !== undefined && forwarder.log_types.includes(type) && forwarder.log_statuses.includes(status);
}
