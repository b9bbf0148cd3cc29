import type { CancelSignal } from '@tessera/domain';
import type { Sandbox } from './sandbox';

/** How often a pool with callers waiting looks whether every running call waits on the host (see SandboxPool). */
const WAITING_CHECK_MS = 5;
/**
 * How long every running call must have waited on the host before the pool grows past `maxSize`: a call whose
 * data access the host answers at once does not count (growing for it would only add isolates competing for
 * the same cores), a call waiting on a remote API does.
 */
export const HOST_WAIT_BEFORE_GROWING_MS = 10;

/**
 * Warm sandboxes of one app at one functions version. A sandbox serves one top-level call at a time; up to
 * `maxSize` exist while calls run code, further calls wait for one to come back. A call that waits on the
 * host (data access, `context.http`, a timer) keeps its sandbox but no thread: while every running call
 * waits so, the pool grows past `maxSize`, up to `waitingSize`, so that a few slow requests do not make
 * the app's other calls queue behind them (a function awaiting a 200 ms API would otherwise cap the app at
 * `maxSize` calls per 200 ms). Memory stays within what `maxSize` sandboxes may hold: a sandbox is added
 * only while the waiting calls' heaps (read during their wait), plus the memory limit of each sandbox
 * starting, stay within `maxSize` memory limits. Retiring the pool (a deploy) disposes idle sandboxes now
 * and busy ones when their call ends.
 */
export class SandboxPool {
  private readonly idle: Array<{ sandbox: Sandbox; since: number }> = [];
  private readonly waiters: Array<{ resolve: (sandbox: Sandbox) => void; reject: (error: unknown) => void }> = [];
  /** Sandboxes handed out and not yet released: what shutdown must terminate. */
  private readonly busy = new Set<Sandbox>();
  private size = 0;
  private retired = false;
  /** A sandbox is starting ahead of the calls (prestart): the first call that comes meanwhile waits for it. */
  private prestarting = false;

  /** Looks, while callers wait, whether the pool may grow for them (see `waitingSize`). */
  private waitingCheck: NodeJS.Timeout | undefined;

  constructor(
    readonly appId: string,
    readonly version: string,
    private readonly create: () => Promise<Sandbox>,
    private readonly maxSize: number,
    private readonly waitingSize = maxSize,
    /** A sandbox's memory limit (its heap, in bytes). */
    private readonly sandboxMemoryBytes = Number.POSITIVE_INFINITY,
  ) {}

  get isRetired(): boolean {
    return this.retired;
  }

  /** Number of sandboxes running a call now. */
  get busyCount(): number {
    return this.busy.size;
  }

  /** Number of sandboxes alive (idle or busy). */
  get liveCount(): number {
    return this.size;
  }

  /** A sandbox for one call; waits while all are busy. `signal` gives up waiting (the caller went away). */
  async acquire(signal?: CancelSignal): Promise<Sandbox> {
    const sandbox = await this.take(signal);
    this.busy.add(sandbox);
    return sandbox;
  }

  /** A usable idle sandbox, handed out at once (as `acquire` would hand it out), or undefined when there is none. */
  takeIdle(): Sandbox | undefined {
    if (this.retired) return undefined;
    const sandbox = this.popIdle();
    if (sandbox) this.busy.add(sandbox);
    return sandbox;
  }

  private popIdle(): Sandbox | undefined {
    for (let entry = this.idle.pop(); entry; entry = this.idle.pop()) {
      if (entry.sandbox.isUsable) return entry.sandbox;
      entry.sandbox.dispose();
      this.size--;
    }
    return undefined;
  }

  private async take(signal?: CancelSignal): Promise<Sandbox> {
    if (this.retired) throw new Error(`sandbox pool of ${this.appId}@${this.version} is retired`);
    signal?.throwIfAborted();
    const idle = this.popIdle();
    if (idle) return idle;
    if (this.size < this.maxSize && !(this.prestarting && this.waiters.length === 0)) return this.grow();
    if (this.mayGrowForWaiting()) return this.grow();
    return new Promise<Sandbox>((resolve, reject) => {
      const waiter = {
        resolve: (sandbox: Sandbox) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(sandbox);
        },
        reject: (error: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      };
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        const reason: unknown = signal?.reason;
        reject(reason instanceof Error ? reason : new Error('the caller stopped waiting for a sandbox'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.watchWaiting();
    });
  }

  /**
   * Past `maxSize`: only while at least `maxSize` sandboxes run calls, every one of those calls has waited on
   * the host for HOST_WAIT_BEFORE_GROWING_MS, and their heaps (read during the wait) with a memory limit for
   * each sandbox starting and for the new one fit in `maxSize` memory limits.
   */
  private mayGrowForWaiting(): boolean {
    if (this.size >= this.waitingSize || this.prestarting || this.idle.length > 0 || this.busy.size < this.maxSize) return false;
    const now = performance.now();
    let heap = 0;
    for (const sandbox of this.busy) {
      if (sandbox.hostWaitMs(now) < HOST_WAIT_BEFORE_GROWING_MS) return false;
      // Undefined until a reading taken during the wait is in: the next check (WAITING_CHECK_MS) has it.
      const bytes = sandbox.heapWhileWaiting();
      if (bytes === undefined) return false;
      heap += bytes;
    }
    const starting = this.size - this.busy.size;
    return heap + (starting + 1) * this.sandboxMemoryBytes <= this.maxSize * this.sandboxMemoryBytes;
  }

  /** While callers wait, looks every WAITING_CHECK_MS whether the running calls all wait on the host. */
  private watchWaiting(): void {
    if (this.waitingCheck || this.waitingSize <= this.maxSize) return;
    this.waitingCheck = setInterval(() => {
      if (this.waiters.length === 0 || this.retired) {
        clearInterval(this.waitingCheck);
        this.waitingCheck = undefined;
        return;
      }
      while (this.waiters.length > 0 && this.mayGrowForWaiting()) this.serveWaiter();
    }, WAITING_CHECK_MS);
    this.waitingCheck.unref();
  }

  /** Starts a sandbox ahead of the calls, unless the pool has one (idle, busy or starting). */
  async prestart(): Promise<void> {
    if (this.retired || this.size > 0) return;
    this.prestarting = true;
    let sandbox: Sandbox;
    try {
      sandbox = await this.grow();
    } catch (error) {
      // The call that waited for it starts its own.
      if (!this.retired) this.serveWaiter();
      throw error;
    } finally {
      this.prestarting = false;
    }
    this.release(sandbox);
  }

  release(sandbox: Sandbox): void {
    this.busy.delete(sandbox);
    if (this.retired || !sandbox.isUsable) {
      sandbox.dispose();
      this.size--;
      if (!this.retired) this.serveWaiter();
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(sandbox);
    else this.idle.push({ sandbox, since: Date.now() });
  }

  /** Disposes sandboxes idle for at least `idleMs`; returns how many. */
  evictIdle(idleMs: number, now = Date.now()): number {
    let evicted = 0;
    for (let i = this.idle.length - 1; i >= 0; i--) {
      if (now - this.idle[i].since < idleMs) continue;
      const [entry] = this.idle.splice(i, 1);
      entry.sandbox.dispose();
      this.size--;
      evicted++;
    }
    return evicted;
  }

  retire(): void {
    this.retired = true;
    for (const { sandbox } of this.idle.splice(0)) {
      sandbox.dispose();
      this.size--;
    }
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error(`the functions of ${this.appId} were redeployed; retry the call`));
  }

  /** Terminates the calls running now (shutdown): each ends with a `stopped` outcome and is released. */
  terminateBusy(): void {
    for (const sandbox of this.busy) sandbox.terminate('shutdown');
  }

  private serveWaiter(): void {
    const waiter = this.waiters.shift();
    if (!waiter) return;
    this.grow().then(waiter.resolve, waiter.reject);
  }

  private async grow(): Promise<Sandbox> {
    this.size++;
    try {
      return await this.create();
    } catch (error) {
      this.size--;
      throw error;
    }
  }
}
