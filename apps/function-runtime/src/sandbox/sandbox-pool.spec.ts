import type { Sandbox } from './sandbox';
import { HOST_WAIT_BEFORE_GROWING_MS, SandboxPool } from './sandbox-pool';

class FakeSandbox {
  disposed = false;
  usable = true;
  /** performance.now() since when its call waits on the host; undefined while it runs code. */
  waitingSince: number | undefined;
  get isUsable() {
    return this.usable && !this.disposed;
  }
  dispose() {
    this.disposed = true;
  }
  /** Heap read during its wait (bytes). */
  heap = 1_000_000;
  hostWaitMs(now = performance.now()) {
    return this.waitingSince === undefined ? 0 : now - this.waitingSince;
  }
  heapWhileWaiting() {
    return this.waitingSince === undefined ? undefined : this.heap;
  }
}

const MEMORY_LIMIT = 64_000_000;

function pool(max: number, whileWaiting = max) {
  const created: FakeSandbox[] = [];
  const p = new SandboxPool(
    'app',
    'v1',
    () => {
      const s = new FakeSandbox();
      created.push(s);
      return Promise.resolve(s as unknown as Sandbox);
    },
    max,
    whileWaiting,
    MEMORY_LIMIT,
  );
  return { p, created };
}

const fake = (sandbox: Sandbox): FakeSandbox => sandbox as unknown as FakeSandbox;

describe('SandboxPool', () => {
  it('reuses an idle sandbox', async () => {
    const { p, created } = pool(2);
    const a = await p.acquire();
    p.release(a);
    expect(await p.acquire()).toBe(a);
    expect(created).toHaveLength(1);
  });

  it('hands an idle sandbox over at once, and none when there is none usable or the pool is retired', async () => {
    const { p, created } = pool(2);
    expect(p.takeIdle()).toBeUndefined();
    const a = await p.acquire();
    const b = await p.acquire();
    p.release(a);
    p.release(b);
    (b as unknown as FakeSandbox).usable = false;
    expect(p.takeIdle()).toBe(a);
    expect(p.busyCount).toBe(1);
    expect((b as unknown as FakeSandbox).disposed).toBe(true);
    expect(p.liveCount).toBe(1);
    p.release(a);
    p.retire();
    expect(p.takeIdle()).toBeUndefined();
    expect(created).toHaveLength(2);
  });

  it('starts a sandbox ahead of the calls: the first call meanwhile waits for it, a second starts its own', async () => {
    let finish: (sandbox: Sandbox) => void = () => undefined;
    const created: FakeSandbox[] = [];
    const p = new SandboxPool('app', 'v1', () => {
      const s = new FakeSandbox();
      created.push(s);
      if (created.length === 1) return new Promise<Sandbox>((resolve) => (finish = resolve));
      return Promise.resolve(s as unknown as Sandbox);
    }, 2);
    const starting = p.prestart();
    const first = p.acquire();
    const second = await p.acquire();
    expect(created).toHaveLength(2);
    expect(second).toBe(created[1]);
    finish(created[0] as unknown as Sandbox);
    await starting;
    expect(await first).toBe(created[0]);
    // A pool that has sandboxes starts none ahead.
    await p.prestart();
    expect(created).toHaveLength(2);
  });

  it('lets the call that waited for a sandbox that failed to start start its own', async () => {
    let attempts = 0;
    const p = new SandboxPool('app', 'v1', () => (++attempts === 1 ? Promise.reject(new Error('no isolate')) : Promise.resolve(new FakeSandbox() as unknown as Sandbox)), 1);
    const starting = p.prestart();
    const call = p.acquire();
    await expect(starting).rejects.toThrow('no isolate');
    expect(await call).toBeInstanceOf(FakeSandbox);
    expect(p.liveCount).toBe(1);
  });

  it('makes callers wait when every sandbox is busy, then hands over the released one', async () => {
    const { p, created } = pool(1);
    const a = await p.acquire();
    let second: Sandbox | undefined;
    const waiting = p.acquire().then((s) => (second = s));
    await Promise.resolve();
    expect(second).toBeUndefined();
    p.release(a);
    await waiting;
    expect(second).toBe(a);
    expect(created).toHaveLength(1);
  });

  it('replaces a sandbox that is no longer usable', async () => {
    const { p, created } = pool(1);
    const a = await p.acquire();
    const waiting = p.acquire();
    (a as unknown as FakeSandbox).usable = false;
    p.release(a);
    const b = await waiting;
    expect(b).not.toBe(a);
    expect((a as unknown as FakeSandbox).disposed).toBe(true);
    expect(created).toHaveLength(2);
    expect(p.liveCount).toBe(1);
  });

  it('disposes idle sandboxes on retire, busy ones on release, and rejects waiters', async () => {
    const { p } = pool(2);
    const idle = await p.acquire();
    const busy = await p.acquire();
    p.release(idle);
    await p.acquire();
    const waiter = p.acquire();
    p.release(idle);
    await waiter;
    const lateWaiter = p.acquire();
    p.retire();
    await expect(lateWaiter).rejects.toThrow(/redeployed/);
    expect((busy as unknown as FakeSandbox).disposed).toBe(false);
    p.release(busy);
    p.release(idle);
    expect((busy as unknown as FakeSandbox).disposed).toBe(true);
    expect((idle as unknown as FakeSandbox).disposed).toBe(true);
    expect(p.liveCount).toBe(0);
    await expect(p.acquire()).rejects.toThrow(/retired/);
  });

  it('disposes idle sandboxes as soon as it is retired', async () => {
    const { p } = pool(2);
    const idle = await p.acquire();
    p.release(idle);
    p.retire();
    expect((idle as unknown as FakeSandbox).disposed).toBe(true);
    expect(p.liveCount).toBe(0);
  });

  it('disposes sandboxes that stayed idle too long', async () => {
    const { p } = pool(2);
    const a = await p.acquire();
    const b = await p.acquire();
    p.release(a);
    p.release(b);
    expect(p.evictIdle(60_000, Date.now() + 1_000)).toBe(0);
    expect(p.evictIdle(60_000, Date.now() + 61_000)).toBe(2);
    expect((a as unknown as FakeSandbox).disposed).toBe(true);
    expect(p.liveCount).toBe(0);
  });

  it('grows past its size while every running call has waited on the host, up to its size for waiting calls', async () => {
    const { p, created } = pool(2, 3);
    const a = await p.acquire();
    const b = await p.acquire();
    // Both run code: a third caller waits.
    let third: Sandbox | undefined;
    const thirdCall = p.acquire().then((s) => (third = s));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(third).toBeUndefined();
    // One waits on the host, the other still runs code: still no third sandbox.
    fake(a).waitingSince = performance.now() - HOST_WAIT_BEFORE_GROWING_MS;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(third).toBeUndefined();
    // Both wait on the host: the waiting caller gets a sandbox of its own.
    fake(b).waitingSince = performance.now() - HOST_WAIT_BEFORE_GROWING_MS;
    await thirdCall;
    expect(created).toHaveLength(3);
    expect(third).toBe(created[2]);
    // A caller arriving while all three wait on the host finds the pool at its size for waiting calls.
    created[2].waitingSince = performance.now() - HOST_WAIT_BEFORE_GROWING_MS;
    let fourth: Sandbox | undefined;
    const fourthCall = p.acquire().then((s) => (fourth = s));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fourth).toBeUndefined();
    p.release(a);
    await fourthCall;
    expect(fourth).toBe(a);
    expect(created).toHaveLength(3);
  });

  it('does not grow for calls whose host operations have only just started, nor past the size it was given', async () => {
    const { p, created } = pool(1, 4);
    const a = await p.acquire();
    fake(a).waitingSince = performance.now() + 60_000; // waiting, but for less than HOST_WAIT_BEFORE_GROWING_MS
    let second: Sandbox | undefined;
    const secondCall = p.acquire().then((s) => (second = s));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(second).toBeUndefined();
    p.release(a);
    await secondCall;
    expect(created).toHaveLength(1);

    const { p: fixed, created: fixedCreated } = pool(1);
    const only = await fixed.acquire();
    fake(only).waitingSince = performance.now() - 1_000;
    let other: Sandbox | undefined;
    const otherCall = fixed.acquire().then((s) => (other = s));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(other).toBeUndefined();
    fixed.release(only);
    await otherCall;
    expect(fixedCreated).toHaveLength(1);
  });

  it('does not grow while the waiting calls hold the memory that its size of sandboxes may use', async () => {
    const { p, created } = pool(2, 8);
    const a = await p.acquire();
    const b = await p.acquire();
    // Two waiting calls holding half a memory limit each leave room for one sandbox more: not for two.
    for (const sandbox of [a, b]) {
      fake(sandbox).waitingSince = performance.now() - HOST_WAIT_BEFORE_GROWING_MS;
      fake(sandbox).heap = MEMORY_LIMIT / 2;
    }
    const third = await p.acquire();
    expect(created).toHaveLength(3);
    fake(third).waitingSince = performance.now() - HOST_WAIT_BEFORE_GROWING_MS;
    fake(third).heap = MEMORY_LIMIT / 2;
    let fourth: Sandbox | undefined;
    const fourthCall = p.acquire().then((s) => (fourth = s));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fourth).toBeUndefined();
    // The heaps shrink (read again during the wait): there is room again.
    for (const sandbox of [a, b, third]) fake(sandbox).heap = 1_000_000;
    await fourthCall;
    expect(created).toHaveLength(4);
  });
});
