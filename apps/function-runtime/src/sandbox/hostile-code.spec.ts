/**
 * Hostile code: each test deploys a function that tries to escape the sandbox, damage the host or leave
 * state for the next caller, and checks that the attempt is contained and the runtime keeps serving.
 */
import { FunctionRuntimeError, FunctionRuntimeErrorCode } from '../function-runtime.error';
import { APP, makeRuntime } from '../testing/runtime-fixture';

type Runtime = ReturnType<typeof makeRuntime>;
type Outcome = { ok: true; result: unknown; logs: string[] } | { ok: false; code: string; message: string };

const HEALTHY = 'exports = (x) => ({ echoed: x, proto: Object.keys(Object.prototype).length, typeofProcess: typeof process });';

describe('hostile code is contained', () => {
  let rt: Runtime;
  const hostProtoKeys = Object.getOwnPropertyNames(Object.prototype).sort();

  beforeAll(() => {
    rt = makeRuntime({ timeLimitMs: 1_000, memoryLimitMb: 48, maxResultBytes: 1_000_000, maxLogLines: 50, sandboxesPerApp: 1, maxNestedCalls: 50, maxPendingOperations: 2_000 });
  });
  afterAll(() => rt.runtime.close());

  async function invoke(name: string, args: unknown[] = []): Promise<Outcome> {
    try {
      const out = await rt.call(name, args);
      return { ok: true, result: out.result, logs: out.logs };
    } catch (error) {
      if (!(error instanceof FunctionRuntimeError)) throw error;
      return { ok: false, code: error.errorCode, message: error.message };
    }
  }

  async function attack(source: string, args: unknown[] = []): Promise<Outcome> {
    rt.functions.deploy(APP, { attack: source, healthy: HEALTHY, helper: 'exports = () => "helper";' });
    return invoke('attack', args);
  }

  /**
   * Runs the attack, then the probe in the same deployment: with one sandbox per app, the probe runs in the
   * warm sandbox the attack used (unless the runtime retired it), as the next caller's call would.
   */
  async function attackThenProbe(source: string, probe: string, args: unknown[] = []): Promise<Outcome> {
    rt.functions.deploy(APP, { attack: source, probe, healthy: HEALTHY, helper: 'exports = () => "helper";' });
    await invoke('attack', args);
    return invoke('probe');
  }

  afterEach(async () => {
    // The host is untouched and the runtime still serves a well-behaved call with a clean sandbox.
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(hostProtoKeys);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    const out = await rt.call('healthy', ['still here']);
    expect(out.result).toEqual({ echoed: 'still here', proto: 0, typeofProcess: 'undefined' });
  });

  const failsWith = (outcome: Outcome, code: FunctionRuntimeErrorCode, message?: RegExp) => {
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.code).toBe(code);
    if (message) expect(outcome.message).toMatch(message);
  };

  /** The call failed at the time limit or at the memory limit (which comes first is a race of the machine's speed). */
  const endsAtALimit = (outcome: Outcome) => {
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    if (outcome.code === String(FunctionRuntimeErrorCode.ExecutionTimeLimitExceeded)) return;
    expect(outcome.code).toBe(FunctionRuntimeErrorCode.FunctionExecutionError);
    expect(outcome.message).toMatch(/memory limit/);
  };

  describe('reaching the host', () => {
    it('1. cannot see process', async () => {
      failsWith(await attack('exports = () => process.env;'), FunctionRuntimeErrorCode.FunctionExecutionError, /process is not defined/);
    });

    it('2. cannot require child_process', async () => {
      failsWith(await attack('exports = () => require("child_process").execSync("id").toString();'), FunctionRuntimeErrorCode.FunctionExecutionError, /Cannot find module 'child_process'/);
    });

    it('3. cannot require node:fs through the node: prefix', async () => {
      failsWith(await attack('exports = () => require("node:fs").readFileSync("/etc/passwd", "utf8");'), FunctionRuntimeErrorCode.FunctionExecutionError, /Cannot find module 'node:fs'/);
    });

    it('4. this.constructor.constructor("return process")() finds no process', async () => {
      failsWith(await attack('exports = function() { return this.constructor.constructor("return process")().pid; };'), FunctionRuntimeErrorCode.FunctionExecutionError, /process is not defined/);
    });

    it('5. the Function constructor reached through context gives only the sandbox global', async () => {
      const out = await attack(`exports = () => {
        const g = context.constructor.constructor("return this")();
        return { process: typeof g.process, require: typeof g.require, names: Object.getOwnPropertyNames(g).filter((n) => n.startsWith("__")) };
      };`);
      expect(out).toMatchObject({ ok: true, result: { process: 'undefined', require: 'undefined', names: [] } });
    });

    it('6. module.constructor and require.constructor lead nowhere', async () => {
      const out = await attack(`exports = () => {
        const viaModule = module.constructor.constructor("return typeof process")();
        const viaRequire = require.constructor("return typeof globalThis.require")();
        let load; try { load = typeof module.constructor._load; } catch (e) { load = "threw"; }
        return [viaModule, viaRequire, load];
      };`);
      expect(out).toMatchObject({ ok: true, result: ['undefined', 'undefined', 'undefined'] });
    });

    it('7. eval and new Function cannot reach require or process', async () => {
      const out = await attack('exports = () => [eval("typeof process"), (0, eval)("typeof require"), new Function("return typeof process")(), typeof module.require];');
      expect(out).toMatchObject({ ok: true, result: ['undefined', 'undefined', 'undefined', 'undefined'] });
    });

    it('8. the host callbacks are not reachable from the global object', async () => {
      const out = await attack(`exports = () => Object.getOwnPropertyNames(globalThis).filter((n) => /tessera|host/i.test(n));`);
      expect(out).toMatchObject({ ok: true, result: [] });
    });

    it('9. Error.prepareStackTrace cannot be installed to inspect call sites', async () => {
      const out = await attack(`exports = () => {
        "use strict";
        try { Error.prepareStackTrace = (e, sites) => sites.map((s) => typeof s.getThis()); } catch (e) { return "refused: " + e.constructor.name; }
        return new Error("x").stack;
      };`);
      expect(out).toMatchObject({ ok: true, result: 'refused: TypeError' });
    });

    it('10. a dynamic import is refused', async () => {
      const out = await attack('exports = async () => { try { await import("fs"); return "imported"; } catch (e) { return "refused"; } };');
      expect(out).toMatchObject({ ok: true, result: 'refused' });
    });

    it('11. WebAssembly, SharedArrayBuffer, Atomics and FinalizationRegistry are absent', async () => {
      const out = await attack('exports = () => [typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics, typeof FinalizationRegistry];');
      expect(out).toMatchObject({ ok: true, result: ['undefined', 'undefined', 'undefined', 'undefined'] });
    });

    it('42. a sloppy function cannot walk up to the runtime through .caller or arguments.callee', async () => {
      const out = await attack(`exports = function probe() {
        let viaCaller; try { viaCaller = probe.caller === null ? "null" : typeof probe.caller; } catch (e) { viaCaller = "threw"; }
        let viaCallee; try { viaCallee = arguments.callee.caller === null ? "null" : typeof arguments.callee.caller; } catch (e) { viaCallee = "threw"; }
        return [viaCaller, viaCallee];
      };`);
      expect(out).toMatchObject({ ok: true, result: ['null', 'null'] });
    });

    it('12. a thenable result cannot smuggle host objects', async () => {
      failsWith(await attack('exports = () => ({ then(resolve) { resolve(process); } });'), FunctionRuntimeErrorCode.FunctionExecutionError, /process is not defined/);
    });
  });

  describe('prototype pollution and leaks between calls', () => {
    it('13. Object.prototype cannot be polluted, in the sandbox or the host', async () => {
      const out = await attack('exports = () => { Object.prototype.polluted = true; return ({}).polluted === true; };');
      expect(out).toMatchObject({ ok: true, result: false });
    });

    it('14. a returned __proto__ key does not pollute the host', async () => {
      const out = await attack('exports = () => JSON.parse(\'{"__proto__": {"polluted": true}, "a": 1}\');');
      expect(out.ok).toBe(true);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    });

    it('15. a __proto__ key sent to the data-access port does not pollute the host', async () => {
      const out = await attack(`exports = async () => {
        const doc = JSON.parse('{"__proto__": {"polluted": true}, "name": "x"}');
        await context.services.get("mongodb-atlas").db("d").collection("c").insertOne(doc);
        return "sent";
      };`);
      expect(out).toMatchObject({ ok: true, result: 'sent' });
    });

    it('16. built-in methods cannot be replaced for later calls', async () => {
      const out = await attack(`exports = () => {
        const attempts = [];
        for (const [obj, key] of [[Array.prototype, "map"], [JSON, "parse"], [Promise.prototype, "then"], [String.prototype, "toUpperCase"], [Math, "random"]]) {
          try { obj[key] = () => "hijacked"; attempts.push(obj[key]() === "hijacked"); } catch (e) { attempts.push(false); }
        }
        return attempts;
      };`);
      expect(out).toMatchObject({ ok: true, result: [false, false, false, false, false] });
    });

    it('17. BSON, EJSON and Buffer cannot be replaced or patched', async () => {
      const out = await attack(`exports = () => {
        try { BSON.ObjectId.prototype.toHexString = () => "evil"; } catch (e) {}
        try { EJSON.stringify = () => "evil"; } catch (e) {}
        try { globalThis.Buffer = null; } catch (e) {}
        return [new BSON.ObjectId("5f1f1f1f1f1f1f1f1f1f1f1f").toHexString(), EJSON.stringify({ a: 1 }), typeof Buffer];
      };`);
      expect(out).toMatchObject({ ok: true, result: ['5f1f1f1f1f1f1f1f1f1f1f1f', '{"a":1}', 'function'] });
    });

    it('18. an implicit global from one call is gone in the next', async () => {
      const out = await attackThenProbe(
        'exports = () => { leaked = "secret of the previous caller"; return 1; };',
        'exports = () => typeof leaked === "undefined" ? "clean" : leaked;',
      );
      expect(out).toMatchObject({ ok: true, result: 'clean' });
    });

    it('19. a non-configurable global retires the sandbox instead of leaking', async () => {
      const out = await attackThenProbe(
        'exports = () => { Object.defineProperty(globalThis, "sticky", { value: "secret", configurable: false }); return 1; };',
        'exports = () => typeof sticky === "undefined" ? "clean" : sticky;',
      );
      expect(out).toMatchObject({ ok: true, result: 'clean' });
    });

    it('43. a replaced prototype of the global object is restored before the next call', async () => {
      const out = await attackThenProbe(
        'exports = () => { Object.setPrototypeOf(globalThis, { inherited: "secret" }); return typeof inherited; };',
        'exports = () => typeof inherited;',
      );
      expect(out).toMatchObject({ ok: true, result: 'undefined' });
    });

    it('44. a non-extensible global object retires the sandbox', async () => {
      const out = await attackThenProbe(
        'exports = () => { Object.preventExtensions(globalThis); return 1; };',
        'exports = () => { implicitGlobal = 1; return typeof implicitGlobal; };',
      );
      expect(out).toMatchObject({ ok: true, result: 'number' });
    });

    it('45. the legacy RegExp statics do not reveal the previous call\'s last match', async () => {
      const out = await attackThenProbe(
        'exports = (token) => /secret-(\\w+)/.exec(token)[1];',
        'exports = () => [RegExp.$1, RegExp.input, RegExp.lastMatch];',
        ['secret-hunter2'],
      );
      expect(out).toMatchObject({ ok: true, result: ['', '', ''] });
    });

    it('20. module state starts fresh at every call', async () => {
      rt.functions.deploy(APP, { counter: 'let n = 0; exports = () => ++n;', healthy: HEALTHY });
      expect((await rt.call('counter')).result).toBe(1);
      expect((await rt.call('counter')).result).toBe(1);
    });

    it('21. editing context.user does not change who data access runs as', async () => {
      const before = rt.data.calls.length;
      const out = await attack(`exports = async () => {
        context.user.id = "admin"; context.user.type = "system";
        await context.services.get("mongodb-atlas").db("d").collection("c").findOne({});
        return context.runningAsSystem();
      };`);
      expect(out).toMatchObject({ ok: true, result: false });
      expect(rt.data.calls.slice(before)[0].caller).toMatchObject({ kind: 'user', user: { id: 'alice-id' } });
    });

    it('22. a replaced console only affects the call that replaced it', async () => {
      const out = await attackThenProbe(
        'exports = () => { console.log = () => {}; try { globalThis.console.log = () => {}; } catch (e) {} return 1; };',
        'exports = () => { console.log("visible"); globalThis.console.log("also visible"); return 1; };',
      );
      expect(out).toMatchObject({ ok: true, logs: ['visible', 'also visible'] });
    });
  });

  describe('resource exhaustion', () => {
    it('23. an infinite loop ends with ExecutionTimeLimitExceeded', async () => {
      failsWith(await attack('exports = () => { for (;;) {} };'), FunctionRuntimeErrorCode.ExecutionTimeLimitExceeded);
    });

    it('24. an infinite loop after an await ends with ExecutionTimeLimitExceeded', async () => {
      failsWith(await attack('exports = async () => { await null; await context.functions.execute("helper"); while (true) {} };'), FunctionRuntimeErrorCode.ExecutionTimeLimitExceeded);
    });

    it('25. a promise that never settles ends with ExecutionTimeLimitExceeded', async () => {
      failsWith(await attack('exports = () => new Promise(() => {});'), FunctionRuntimeErrorCode.ExecutionTimeLimitExceeded);
    });

    it('26. an endless microtask chain ends at the time or the memory limit', async () => {
      endsAtALimit(await attack('exports = () => { const spin = () => Promise.resolve().then(spin); spin(); return 1; };'));
    });

    it('27. deep recursion ends with a stack overflow error', async () => {
      failsWith(await attack('exports = () => { const f = (n) => f(n + 1) + 1; return f(0); };'), FunctionRuntimeErrorCode.FunctionExecutionError, /call stack/);
    });

    it('28. a memory bomb is stopped at the memory or the time limit', async () => {
      // Which limit stops it first depends on how fast this machine fills 48 MB; either contains it (afterEach
      // checks the runtime still serves with a clean sandbox).
      endsAtALimit(await attack('exports = () => { const a = []; for (;;) a.push(new Array(1e6).fill(a.length)); };'));
    });

    it('29. a huge ArrayBuffer allocation is refused', async () => {
      const out = await attack('exports = () => { const b = new ArrayBuffer(2 ** 31); return b.byteLength; };');
      expect(out.ok).toBe(false);
    });

    it('30. a huge string is refused', async () => {
      const out = await attack('exports = () => "x".repeat(2 ** 30).length;');
      expect(out.ok).toBe(false);
    });

    it('31. a huge return value is refused with a size error', async () => {
      failsWith(await attack('exports = () => "y".repeat(2_000_000);'), FunctionRuntimeErrorCode.FunctionExecutionError, /above the limit/);
    });

    it('32. a deeply nested return value fails without harming the host', async () => {
      const out = await attack('exports = () => { let o = {}; for (let i = 0; i < 100000; i++) o = { o }; return o; };');
      expect(out.ok).toBe(false);
    });

    it('33. a log flood is truncated', async () => {
      const out = await attack('exports = () => { for (let i = 0; i < 100000; i++) console.log("spam " + i); return "done"; };');
      expect(out.ok).toBe(true);
      if (out.ok) {
        expect(out.logs.length).toBeLessThanOrEqual(51);
        expect(out.logs.at(-1)).toMatch(/log limit/);
      }
    });

    it('34. unbounded recursion through context.functions.execute hits the nested-call limit', async () => {
      rt.functions.deploy(APP, { loop: 'exports = () => context.functions.execute("loop");', healthy: HEALTHY });
      await expect(rt.call('loop')).rejects.toThrow(/nested function calls/);
    });

    it('35. thousands of pending timers are dropped when the call ends', async () => {
      const out = await attack('exports = () => { for (let i = 0; i < 1000; i++) setTimeout(() => {}, 1e9); return "armed"; };');
      expect(out).toMatchObject({ ok: true, result: 'armed' });
    });
  });

  describe('operation floods', () => {
    it('41. a flood of concurrent data-access operations is capped', async () => {
      // A runtime of its own with a time limit no busy machine reaches: the cap must answer, not the clock.
      const flood = makeRuntime({ timeLimitMs: 60_000, memoryLimitMb: 48, sandboxesPerApp: 1, maxPendingOperations: 2_000 });
      // The port holds the operations until well after 2000 (the cap) are in flight.
      const execute = flood.data.execute.bind(flood.data);
      let held = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      flood.data.execute = async (call) => {
        if (++held === 2_000) setTimeout(release, 500);
        await gate;
        return execute(call);
      };
      flood.functions.deploy(APP, {
        attack: `exports = async () => {
          const coll = context.services.get("mongodb-atlas").db("d").collection("flood");
          const results = await Promise.allSettled(Array.from({ length: 3000 }, () => coll.count({})));
          return results.filter((r) => r.status === "rejected").map((r) => r.reason.message)[0];
        };`,
      });
      try {
        const out = await flood.call('attack');
        expect(out.result).toMatch(/too many operations in flight/);
        expect(held).toBe(2_000);
      } finally {
        await flood.runtime.close();
      }
    });
  });

  describe('work that outlives the call', () => {
    it('36. an unhandled rejection fails only its own call, with its message', async () => {
      const out = await attack('exports = () => { Promise.reject(new Error("nobody catches me")); return "returned"; };');
      failsWith(out, FunctionRuntimeErrorCode.FunctionExecutionError, /nobody catches me/);
    });

    it('37. timers and intervals of a finished call never run in the next call', async () => {
      const out = await attackThenProbe(
        `exports = () => {
          setInterval(() => { console.log("ghost tick"); globalThis.console.log("ghost tick"); leaked = true; }, 1);
          setTimeout(() => globalThis.console.log("ghost timeout"), 5);
          return 1;
        };`,
        'exports = () => new Promise((r) => setTimeout(() => r(typeof leaked), 40));',
      );
      expect(out).toMatchObject({ ok: true, result: 'undefined', logs: [] });
    });

    it('38. data access started by a finished call never reaches the port', async () => {
      const before = rt.data.calls.length;
      await attackThenProbe(
        `exports = () => {
          Promise.resolve().then(() => new Promise((r) => setTimeout(r, 5))).then(() =>
            context.services.get("mongodb-atlas").db("d").collection("c").insertOne({ late: true }));
          return 1;
        };`,
        'exports = () => new Promise((r) => setTimeout(() => r(1), 40));',
      );
      expect(rt.data.calls.slice(before).filter((c) => c.action === 'insertOne')).toEqual([]);
    });

    it('39. an error that throws from its message getter is contained', async () => {
      const out = await attack('exports = () => { throw { get message() { throw new Error("gotcha"); } }; };');
      expect(out.ok).toBe(false);
    });

    it('40. a thrown Proxy that loops forever is stopped by the time limit', async () => {
      failsWith(await attack('exports = () => { throw new Proxy({}, { get() { for (;;) {} } }); };'), FunctionRuntimeErrorCode.ExecutionTimeLimitExceeded);
    });
  });
});
