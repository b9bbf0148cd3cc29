import { Sandbox, type SandboxLimits } from './sandbox';

const limits: SandboxLimits = { timeLimitMs: 2_000, memoryLimitMb: 32, maxResultBytes: 1_000_000, maxLogLines: 100, maxLogBytes: 100_000, maxLogLineBytes: 10_000, maxPendingOperations: 100 };
const boot = { appId: 'app', values: { greeting: JSON.stringify('hi') }, environment: JSON.stringify({ tag: 'dev', values: {} }) };

describe('Sandbox', () => {
  it('runs an exported function and returns canonical EJSON', async () => {
    const sandbox = await Sandbox.create(boot, limits);
    try {
      const outcome = await sandbox.run(
        { frame: { id: 1, system: true, user: null }, fn: { name: 'f', source: 'exports = function(a, b) { console.log("adding", a, b); return { sum: a + b, id: new BSON.ObjectId("5f1f1f1f1f1f1f1f1f1f1f1f") }; };' }, args: '[{"$numberInt":"1"},{"$numberInt":"2"}]' },
        () => Promise.reject(new Error('no host operations expected')),
      );
      expect(outcome).toEqual({ kind: 'ok', resultEjson: '{"sum":{"$numberInt":"3"},"id":{"$oid":"5f1f1f1f1f1f1f1f1f1f1f1f"}}', logs: ['adding 1 2'] });
    } finally {
      sandbox.dispose();
    }
  });

  it('starts small: the bson serialisation buffer is allocated only when a function serialises', async () => {
    const sandbox = await Sandbox.create(boot, limits);
    try {
      expect(await sandbox.heapUsed()).toBeLessThan(12 * 1024 * 1024);
      const outcome = await sandbox.run(
        { frame: { id: 1, system: true, user: null }, fn: { name: 'f', source: 'exports = () => BSON.deserialize(BSON.serialize({ a: 1 })).a;' }, args: '[]' },
        () => Promise.reject(new Error('no host operations expected')),
      );
      expect(outcome).toMatchObject({ kind: 'ok', resultEjson: '{"$numberInt":"1"}' });
    } finally {
      sandbox.dispose();
    }
  });

  it('reads the heap size at most once a second, not after every call', async () => {
    const sandbox = await Sandbox.create(boot, limits);
    try {
      const first = sandbox.heapUsed(10_000);
      expect(sandbox.heapUsed(10_999)).toBe(first);
      const later = sandbox.heapUsed(11_000);
      expect(later).not.toBe(first);
      expect(await later).toBeGreaterThan(0);
      // Once read, the reading is a number for the calls within the interval, and a new reading after it.
      expect(sandbox.heapReading(11_500)).toBe(await later);
      const next = sandbox.heapReading(12_000);
      expect(next).toBeInstanceOf(Promise);
      expect(await next).toBeGreaterThan(0);
    } finally {
      sandbox.dispose();
    }
  });
});
