/**
 * The sessions one function call opened with `startSession()` (through every nested call it makes), keyed by
 * the number the isolate gave each. A session opens on the host with its first operation. Each session's steps
 * run in the order the isolate asked for them, whatever the awaits inside them, so a transaction's first
 * operation opens it before any other operation of that session runs. When the call ends, whatever it left
 * open is aborted and ended: a function cannot keep a transaction (and the locks it holds) past its own end.
 */
import type { DataAccessCaller, DataAccessPort, DataSessionPort } from './ports/data-access.port';

/** Sessions one call may hold open at once (MongoDB's drivers pool them; a function needs one or two). */
export const MAX_SESSIONS_PER_CALL = 16;

interface OpenSession {
  service: string;
  session: Promise<DataSessionPort>;
  /** The last step queued; the next one runs after it settles. */
  tail: Promise<unknown>;
}

export class CallSessions {
  private readonly open = new Map<number, OpenSession>();
  private closed = false;

  constructor(
    private readonly port: DataAccessPort,
    private readonly appId: string,
  ) {}

  /** Queues `step` on session `id` of `service`, opening the session (as `caller`) when the host has not seen it. */
  run<T>(id: number, service: string, caller: DataAccessCaller, step: (session: DataSessionPort) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the function call has already ended'));
    let entry = this.open.get(id);
    if (!entry) {
      if (this.open.size >= MAX_SESSIONS_PER_CALL) return Promise.reject(new Error(`a function call may have at most ${MAX_SESSIONS_PER_CALL} sessions open: end sessions with endSession()`));
      const startSession = this.port.startSession?.bind(this.port);
      if (!startSession) return Promise.reject(new Error('sessions and transactions are not supported by this data source'));
      const session = startSession({ appId: this.appId, service, caller });
      session.catch(() => undefined);
      entry = { service, session, tail: session };
      this.open.set(id, entry);
    }
    if (entry.service !== service) return Promise.reject(new Error(`this session belongs to service '${entry.service}', not '${service}'`));
    return this.queue(entry, step);
  }

  /** A step on a session the host may not have seen (commit, abort, end): nothing to do for one it has not. */
  whenOpen(id: number, step: (session: DataSessionPort) => Promise<void>): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the function call has already ended'));
    const entry = this.open.get(id);
    return entry ? this.queue(entry, step) : Promise.resolve();
  }

  /** Runs `step` on the entry's session after the steps queued before it, whether they succeeded or not. */
  private queue<T>(entry: OpenSession, step: (session: DataSessionPort) => Promise<T>): Promise<T> {
    const next = entry.tail.then(
      () => entry.session.then(step),
      () => entry.session.then(step),
    );
    entry.tail = next.catch(() => undefined);
    return next;
  }

  /** Ends session `id` and forgets it. */
  async end(id: number): Promise<void> {
    await this.whenOpen(id, (session) => session.end());
    this.open.delete(id);
  }

  /** Aborts and ends every session still open; called once, when the call has ended. Never throws. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(entries.map((entry) => entry.tail.then(() => entry.session).then((session) => session.end())));
  }
}
