/**
 * What this project's code reads of an AbortSignal: whether and why it aborted, and `abort` listeners. An
 * AbortSignal is one; `Cancellation` makes one for a fraction of an AbortController's cost. Every HTTP
 * request that calls a function and every bus request a handler serves holds one, and two AbortControllers
 * with their listeners cost 4% of a trivial function call (Node 20: 2.8 us for a controller and its signal).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  /** Why it aborted; undefined while it has not. */
  readonly reason: unknown;
  /** Throws `reason` once aborted. */
  throwIfAborted(): void;
  /** Calls `listener` once when it aborts (never when added after that); the same listener is added once. */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A CancelSignal its owner aborts. */
export class Cancellation implements CancelSignal {
  private aborting: { reason: unknown } | undefined;
  private listeners: Array<() => void> | undefined;

  get aborted(): boolean {
    return this.aborting !== undefined;
  }

  get reason(): unknown {
    return this.aborting?.reason;
  }

  throwIfAborted(): void {
    if (this.aborting) throw this.aborting.reason;
  }

  addEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || this.aborting) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (type !== 'abort' || !listeners) return;
    const index = listeners.indexOf(listener);
    if (index >= 0) listeners.splice(index, 1);
  }

  /**
   * Aborts once (later calls do nothing) and calls every listener; a listener that throws does not keep the
   * others from running, and the first such error is thrown after them.
   */
  abort(reason: unknown = abortError()): void {
    if (this.aborting) return;
    this.aborting = { reason };
    const listeners = this.listeners;
    this.listeners = undefined;
    if (!listeners) return;
    let failure: { error: unknown } | undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}

/** The reason an AbortController gives when it is given none. */
function abortError(): Error {
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}
