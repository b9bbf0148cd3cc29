import type { Sandbox } from './sandbox';

/**
 * Warm sandboxes of one app at one functions version. A sandbox serves one top-level call at a time; up to
 * `maxSize` exist, further calls wait for one to come back. Retiring the pool (a deploy) disposes idle
 * sandboxes now and busy ones when their call ends.
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

  constructor(
    readonly appId: string,
    readonly version: string,
    private readonly create: () => Promise<Sandbox>,
    private readonly maxSize: number,
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
  async acquire(signal?: AbortSignal): Promise<Sandbox> {
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

  private async take(signal?: AbortSignal): Promise<Sandbox> {
    if (this.retired) throw new Error(`sandbox pool of ${this.appId}@${this.version} is retired`);
    signal?.throwIfAborted();
    const idle = this.popIdle();
    if (idle) return idle;
    if (this.size < this.maxSize && !(this.prestarting && this.waiters.length === 0)) return this.grow();
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
    });
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
