/**
 * Rates for the datastore benches: operations per wall-clock second and per second of CPU this process
 * used (the machine may be shared, so the CPU figure is the steadier one).
 */
export interface Rate {
  wall: number;
  cpu: number;
}

export async function timed(count: () => number, work: () => Promise<void>): Promise<Rate> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await work();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { wall: count() / seconds, cpu: count() / ((used.user + used.system) / 1e6) };
}

/** Runs `op` one at a time until `budgetMs` elapsed (and at least `minOps` times). */
export async function measure(budgetMs: number, minOps: number, op: (i: number) => unknown): Promise<Rate> {
  let n = 0;
  const start = Date.now();
  return timed(
    () => n,
    async () => {
      while (Date.now() - start < budgetMs || n < minOps) await op(n++);
    },
  );
}

/** Like measure, with `window` operations in flight at a time (writes share fsyncs: group commit). */
export async function measureConcurrent(budgetMs: number, window: number, op: (i: number) => Promise<unknown>): Promise<Rate> {
  let n = 0;
  const start = Date.now();
  return timed(
    () => n,
    async () => {
      while (Date.now() - start < budgetMs) {
        const batch: Promise<unknown>[] = [];
        for (let k = 0; k < window; k++) batch.push(op(n++));
        await Promise.all(batch);
      }
    },
  );
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
