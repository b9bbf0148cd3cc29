/**
 * What the embedded engine tells its host: recovery steps, a change stream a listener failure closed, a
 * write-ahead log that failed. The host (apps/server) routes these lines to its logger once at boot; until
 * then (and in tools and tests that configure nothing) they go to stderr, so nothing is ever silent. It
 * also carries the one operator decision recovery may need: where to cut a corrupt log (TESSERA_DATASTORE_TRUNCATE_LOG).
 */
import { inspect } from 'node:util';

export type DatastoreLogLevel = 'info' | 'warn' | 'error';

export interface EmbeddedDatastoreOptions {
  /** Where the engine's lines go (default: stderr). */
  log?: (level: DatastoreLogLevel, message: string) => void;
  /**
   * `<absolute segment path>:<byte offset>`: recovery may discard the log from that point on, and only
   * there, when that is exactly where it finds corruption (the damaged bytes are kept aside).
   */
  truncateLogAt?: string;
}

let options: EmbeddedDatastoreOptions = {};

/** Set once by the host before any store opens; later calls replace the earlier options. */
export function configureEmbeddedDatastore(next: EmbeddedDatastoreOptions): void {
  options = { ...next };
}

export function embeddedDatastoreOptions(): Readonly<EmbeddedDatastoreOptions> {
  return options;
}

export function reportDatastore(level: DatastoreLogLevel, message: string): void {
  try {
    if (options.log) {
      options.log(level, message);
      return;
    }
  } catch {
    // A logger that throws must not take the write path down with it: fall back to stderr.
  }
  process.stderr.write(`[datastore] ${level}: ${message}\n`);
}

/** An error's message and its causes, one after the other (`a: b: c`), for log lines and probes. */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 5; depth++) {
    parts.push(current instanceof Error ? current.message : typeof current === 'string' ? current : inspect(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ');
}
