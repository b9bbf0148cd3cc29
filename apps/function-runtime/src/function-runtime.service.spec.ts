import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ObjectId } from 'bson';
import { eventually } from '@tessera/testing';
import type { ExecutionLogQuery } from './execution-logs/execution-log.store';
import { FunctionRuntimeError, FunctionRuntimeErrorCode } from './function-runtime.error';
import { ALICE, APP, makeRuntime } from './testing/runtime-fixture';

type Runtime = ReturnType<typeof makeRuntime>;

/** Execution logs are appended once the sandbox heap size is read, just after the call returns. */
async function lastLog(rt: Runtime, query: Omit<ExecutionLogQuery, 'appId'> = {}) {
  const [entry] = await eventually(async () => {
    const entries = await rt.logs.list({ appId: APP, ...query });
    if (entries.length === 0) throw new Error('no execution log yet');
    return entries;
  });
  return entry;
}

async function expectRuntimeError(promise: Promise<unknown>, code: FunctionRuntimeErrorCode, message?: string | RegExp) {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FunctionRuntimeError);
  expect((error as FunctionRuntimeError).errorCode).toBe(code);
  if (message !== undefined) expect((error as FunctionRuntimeError).message).toMatch(message);
  return error as FunctionRuntimeError;
}

describe('FunctionRuntimeService', () => {
  let rt: Runtime;
  let server: Server;
  let baseUrl: string;
  const received: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        res.setHeader('content-type', 'application/json');
        res.setHeader('x-echo', 'yes');
        res.statusCode = req.url === '/missing' ? 404 : 200;
        res.end(JSON.stringify({ method: req.method, path: req.url, body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    rt = makeRuntime();
    received.length = 0;
  });

  afterEach(() => rt.runtime.close());

  describe('source.js', () => {
    it('runs a function assigned to exports and returns its result', async () => {
      rt.functions.deploy(APP, { add: 'exports = function(a, b) { return { sum: a + b }; };' });
      const out = await rt.call('add', [2, 3]);
      expect(out.result).toEqual({ sum: 5 });
      expect(out.resultEjson).toBe('{"sum":{"$numberInt":"5"}}');
    });

    it('runs an async function assigned to module.exports', async () => {
      rt.functions.deploy(APP, { hello: 'module.exports = async (name) => { await null; return "hello " + name; };' });
      expect((await rt.call('hello', ['bob'])).result).toBe('hello bob');
    });

    it('passes BSON arguments in and out unchanged', async () => {
      rt.functions.deploy(APP, { echo: 'exports = (x) => ({ isId: x.id instanceof BSON.ObjectId, id: x.id, when: x.when });' });
      const id = new ObjectId();
      const when = new Date('2024-01-02T03:04:05Z');
      const out = await rt.call('echo', [{ id, when }]);
      expect(out.result).toEqual({ isId: true, id, when });
    });

    it('returns null for a function that returns nothing', async () => {
      rt.functions.deploy(APP, { nothing: 'exports = function() {};' });
      expect((await rt.call('nothing')).resultEjson).toBe('null');
    });

    it('refuses a source that does not export a function', async () => {
      rt.functions.deploy(APP, { notfn: 'exports = 42;' });
      await expectRuntimeError(rt.call('notfn'), FunctionRuntimeErrorCode.FunctionExecutionError, /does not assign a function/);
    });

    it('reports a syntax error as a FunctionExecutionError', async () => {
      rt.functions.deploy(APP, { broken: 'exports = function( {' });
      await expectRuntimeError(rt.call('broken'), FunctionRuntimeErrorCode.FunctionExecutionError, /does not compile/);
    });
  });

  describe('errors', () => {
    it('answers FunctionNotFound for an unknown function', async () => {
      rt.functions.deploy(APP, {});
      const error = await expectRuntimeError(rt.call('nope'), FunctionRuntimeErrorCode.FunctionNotFound, "function not found: 'nope'");
      expect(error.httpStatus).toBe(404);
      expect(error.toBody()).toEqual({ error: "function not found: 'nope'", error_code: 'FunctionNotFound' });
    });

    it('passes a thrown error message to the caller as FunctionExecutionError', async () => {
      rt.functions.deploy(APP, { fail: 'exports = function() { throw new Error("boom: bad input"); };' });
      const error = await expectRuntimeError(rt.call('fail'), FunctionRuntimeErrorCode.FunctionExecutionError, 'boom: bad input');
      expect(error.httpStatus).toBe(400);
    });

    it('passes a rejected promise and a thrown string to the caller', async () => {
      rt.functions.deploy(APP, {
        reject: 'exports = async function() { await null; throw new TypeError("async nope"); };',
        str: 'exports = function() { throw "plain string"; };',
      });
      await expectRuntimeError(rt.call('reject'), FunctionRuntimeErrorCode.FunctionExecutionError, 'async nope');
      await expectRuntimeError(rt.call('str'), FunctionRuntimeErrorCode.FunctionExecutionError, 'plain string');
    });

    it('refuses arguments that are not an array', async () => {
      rt.functions.deploy(APP, { f: 'exports = () => 1;' });
      await expectRuntimeError(
        rt.runtime.execute({ appId: APP, name: 'f', arguments: 'x' as unknown as unknown[], caller: { type: 'system' }, origin: 'system' }),
        FunctionRuntimeErrorCode.ArgumentsNotAllowed,
      );
    });

    // The realm-tutorial's getMyTeamMembers returns `await collection.find(filter, projection)`, and its
    // clients read the members: App Services answered a returned cursor with its documents.
    it('answers a returned cursor, awaited or not, with its documents, and refuses one inside a result', async () => {
      rt.data.seed('d', 'c', [{ n: 1 }, { n: 2 }]);
      rt.functions.deploy(APP, {
        cur: 'exports = () => context.services.get("mongodb-atlas").db("d").collection("c").find({}, { _id: 0 });',
        awaited: 'exports = async () => { const docs = await context.services.get("mongodb-atlas").db("d").collection("c").find({}, { _id: 0 }); return docs; };',
        agg: 'exports = () => context.services.get("mongodb-atlas").db("d").collection("c").aggregate([{ $match: { n: 2 } }]);',
        caller: 'exports = async () => (await context.functions.execute("cur")).length;',
        nested: 'exports = () => ({ docs: context.services.get("mongodb-atlas").db("d").collection("c").find({}) });',
      });
      expect((await rt.call('cur')).result).toEqual([{ n: 1 }, { n: 2 }]);
      expect((await rt.call('awaited')).result).toEqual([{ n: 1 }, { n: 2 }]);
      expect((await rt.call('agg')).result).toEqual([expect.objectContaining({ n: 2 })]);
      expect((await rt.call('caller')).result).toBe(2);
      await expectRuntimeError(rt.call('nested'), FunctionRuntimeErrorCode.FunctionExecutionError, /cursor cannot be returned/);
    });
  });

  describe('context.services (data access)', () => {
    it('runs data-access operations as the calling user', async () => {
      rt.functions.deploy(APP, {
        add: `exports = async function(doc) {
          const coll = context.services.get("mongodb-atlas").db("shop").collection("items");
          const { insertedId } = await coll.insertOne(doc);
          const found = await coll.findOne({ _id: insertedId });
          return { same: found.name === doc.name, isId: insertedId instanceof BSON.ObjectId, count: await coll.count({}) };
        };`,
      });
      const out = await rt.call('add', [{ name: 'pen' }]);
      expect(out.result).toEqual({ same: true, isId: true, count: 1 });
      expect(rt.data.calls.map((c) => c.action)).toEqual(['insertOne', 'findOne', 'count']);
      expect(rt.data.calls[0]).toMatchObject({ appId: APP, service: 'mongodb-atlas', database: 'shop', collection: 'items', caller: { kind: 'user', user: ALICE } });
      expect(rt.data.calls[0].arguments).toEqual([{ document: { name: 'pen' } }]);
    });

    it("passes the call's correlation id and trace context on to its data access (a rule's %function sends them)", async () => {
      rt.functions.deploy(APP, { look: `exports = async () => context.services.get("mongodb-atlas").db("shop").collection("items").count({});` });
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      await rt.call('look', [], { correlationId: 'corr-1', headers: { 'x-correlation-id': 'corr-1', traceparent } });
      await rt.call('look', [], { correlationId: 'corr-2' });
      await rt.call('look');
      expect(rt.data.calls.map((c) => c.headers)).toEqual([{ 'x-correlation-id': 'corr-1', traceparent }, { 'x-correlation-id': 'corr-2' }, undefined]);
    });

    it('builds find cursors with skip, limit and sort and sends them in one call', async () => {
      rt.data.seed('shop', 'items', [{ n: 3 }, { n: 1 }, { n: 2 }, { n: 4 }]);
      rt.functions.deploy(APP, {
        page: `exports = async function() {
          const cursor = context.services.get("mongodb-atlas").db("shop").collection("items").find({}, { n: 1 }).sort({ n: 1 }).skip(1).limit(2);
          const first = await cursor.next();
          const rest = await cursor.toArray();
          let late = null;
          try { cursor.limit(1); } catch (e) { late = e.message; }
          return { first: first.n, rest: rest.map((d) => d.n), late };
        };`,
      });
      const out = await rt.call('page');
      expect(out.result).toEqual({ first: 2, rest: [3], late: expect.stringMatching(/after documents were retrieved/) });
      expect(rt.data.calls).toHaveLength(1);
      expect(rt.data.calls[0].arguments).toEqual([{ query: {}, project: { n: 1 }, sort: { n: 1 }, skip: 1, limit: 2 }]);
    });

    it('appends skip to an aggregate pipeline and lists databases and collections', async () => {
      rt.data.seed('shop', 'items', [{ k: 'a' }, { k: 'b' }, { k: 'a' }]);
      rt.functions.deploy(APP, {
        agg: `exports = async function() {
          const svc = context.services.get("mongodb-atlas");
          const docs = await svc.db("shop").collection("items").aggregate([{ $match: { k: "a" } }]).skip(1).toArray();
          return { docs: docs.length, dbs: await svc.admin().getDBNames(), colls: await svc.db("shop").getCollectionNames() };
        };`,
      });
      expect((await rt.call('agg', [], { caller: { type: 'system' }, origin: 'system' })).result).toEqual({ docs: 1, dbs: ['shop'], colls: ['items'] });
      expect(rt.data.calls[0].arguments).toEqual([{ pipeline: [{ $match: { k: 'a' } }, { $skip: 1 }] }]);
      expect(rt.data.calls[1]).toMatchObject({ action: 'getDBNames', caller: { kind: 'system' } });
      expect(rt.data.calls[2]).toMatchObject({ action: 'getCollectionNames', database: 'shop' });
    });

    it('sends every collection operation with its client wire name and argument keys', async () => {
      const seen: unknown[] = [];
      rt.data.execute = (call) => {
        seen.push({ action: call.action, db: call.database, coll: call.collection, args: call.arguments });
        return Promise.resolve(call.action === 'find' || call.action === 'aggregate' ? [] : null);
      };
      rt.functions.deploy(APP, {
        all: `exports = async function() {
          const c = context.services.get("mongodb-atlas").db("d").collection("c");
          await c.findOne({ a: 1 }, { a: 1 });
          await c.findOneAndUpdate({ a: 1 }, { $set: { b: 2 } }, { upsert: true, returnNewDocument: true, sort: { a: 1 }, projection: { b: 1 } });
          await c.findOneAndReplace({ a: 1 }, { a: 2 }, { upsert: false });
          await c.findOneAndDelete({ a: 2 }, { sort: { a: -1 } });
          await c.insertMany([{ a: 1 }, { a: 2 }], { ordered: false });
          await c.updateOne({ a: 1 }, { $inc: { n: 1 } }, { upsert: true, arrayFilters: [{ x: 1 }] });
          await c.updateMany({}, { $set: { z: 1 } });
          await c.deleteOne({ a: 1 });
          await c.deleteMany();
          await c.count({ a: 1 }, { limit: 5 });
          await c.distinct("a", { b: 1 });
          await c.bulkWrite([{ insertOne: { document: { a: 9 } } }], { ordered: true });
          await c.find().toArray();
          return "done";
        };`,
      });
      expect((await rt.call('all')).result).toBe('done');
      Reflect.deleteProperty(rt.data, 'execute');
      const base = { db: 'd', coll: 'c' };
      expect(seen).toEqual([
        { ...base, action: 'findOne', args: [{ query: { a: 1 }, project: { a: 1 } }] },
        { ...base, action: 'findOneAndUpdate', args: [{ filter: { a: 1 }, update: { $set: { b: 2 } }, upsert: true, returnNewDocument: true, sort: { a: 1 }, projection: { b: 1 } }] },
        { ...base, action: 'findOneAndReplace', args: [{ filter: { a: 1 }, update: { a: 2 }, upsert: false }] },
        { ...base, action: 'findOneAndDelete', args: [{ filter: { a: 2 }, sort: { a: -1 } }] },
        { ...base, action: 'insertMany', args: [{ documents: [{ a: 1 }, { a: 2 }], ordered: false }] },
        { ...base, action: 'updateOne', args: [{ query: { a: 1 }, update: { $inc: { n: 1 } }, upsert: true, arrayFilters: [{ x: 1 }] }] },
        { ...base, action: 'updateMany', args: [{ query: {}, update: { $set: { z: 1 } } }] },
        { ...base, action: 'deleteOne', args: [{ query: { a: 1 } }] },
        { ...base, action: 'deleteMany', args: [{ query: {} }] },
        { ...base, action: 'count', args: [{ query: { a: 1 }, limit: 5 }] },
        { ...base, action: 'distinct', args: [{ key: 'a', query: { b: 1 } }] },
        { ...base, action: 'bulkWrite', args: [{ operations: [{ insertOne: { document: { a: 9 } } }], ordered: true }] },
        { ...base, action: 'find', args: [{ query: {} }] },
      ]);
    });

    it('rejects the operation promise when the data access fails, catchable in the function', async () => {
      rt.functions.deploy(APP, {
        bad: `exports = async function() {
          try { await context.services.get("no-such-service").db("d").collection("c").findOne({}); }
          catch (e) { return "caught: " + e.message; }
        };`,
      });
      expect((await rt.call('bad')).result).toBe("caught: service not found: 'no-such-service'");
    });
  });

  describe('context members', () => {
    it('exposes context.user of the caller', async () => {
      rt.functions.deploy(APP, { me: 'exports = () => context.user;' });
      expect((await rt.call('me')).result).toEqual(ALICE);
    });

    it('reads values and environment', async () => {
      rt.values.set(APP, { values: { apiBase: 'https://api.example.com', limits: { max: 3 }, secretKey: 's3cr3t' }, environment: { tag: 'production', values: { region: 'eu' } } });
      rt.functions.deploy(APP, {
        vals: `exports = () => {
          const limits = context.values.get("limits");
          limits.max = 99;
          return { base: context.values.get("apiBase"), max: context.values.get("limits").max, secret: context.values.get("secretKey"), missing: context.values.get("nope") === undefined, env: context.environment };
        };`,
      });
      expect((await rt.call('vals')).result).toEqual({ base: 'https://api.example.com', max: 3, secret: 's3cr3t', missing: true, env: { tag: 'production', values: { region: 'eu' } } });
    });

    it('exposes context.request for calls over HTTP and leaves it undefined otherwise', async () => {
      rt.functions.deploy(APP, { req: 'exports = () => context.request === undefined ? "none" : context.request;' });
      const request = { remoteIPAddress: '10.0.0.1', httpMethod: 'POST', rawQueryString: 'a=1', webhookUrl: '/hook', requestHeaders: { 'User-Agent': ['t'] } };
      expect((await rt.call('req', [], { origin: 'http', request })).result).toEqual(request);
      expect((await rt.call('req')).result).toBe('none');
    });

    it('executes other functions with context.functions.execute, copying arguments', async () => {
      rt.functions.deploy(APP, {
        outer: `exports = async function(x) { const arg = { v: x }; const r = await context.functions.execute("inner", arg, 2); return { r, untouched: arg.v }; };`,
        inner: `exports = function(o, k) { const r = o.v * k; o.v = -1; return r; };`,
      });
      expect((await rt.call('outer', [21])).result).toEqual({ r: 42, untouched: 21 });
    });

    it('fails a nested call to an unknown function with FunctionNotFound text the caller can catch', async () => {
      rt.functions.deploy(APP, { outer: 'exports = async () => { try { await context.functions.execute("ghost"); } catch (e) { return e.message; } };' });
      expect((await rt.call('outer')).result).toBe("function not found: 'ghost'");
    });

    it("answers context.functions.execute of a synchronous function with its value, as App Services did, and of an async one with a promise", async () => {
      rt.functions.deploy(APP, {
        // App Services' password-reset template tests the answer without await: a promise would always pass.
        check: `exports = (answer) => { const ok = context.functions.execute("validate", answer); return { type: typeof ok, ok }; };`,
        validate: 'exports = (answer) => answer === 42;',
        later: 'exports = async () => { const p = context.functions.execute("slow"); return { promise: p instanceof Promise, value: await p }; };',
        slow: 'exports = async () => "done";',
        thrower: 'exports = () => { try { context.functions.execute("boom"); return "no throw"; } catch (e) { return "caught " + e.message; } };',
        boom: 'exports = () => { throw new Error("kaboom"); };',
        ghost: 'exports = () => { try { context.functions.execute("nowhere"); return "no throw"; } catch (e) { return e.message; } };',
      });
      expect((await rt.call('check', [41])).result).toEqual({ type: 'boolean', ok: false });
      expect((await rt.call('check', [42])).result).toEqual({ type: 'boolean', ok: true });
      expect((await rt.call('later')).result).toEqual({ promise: true, value: 'done' });
      expect((await rt.call('thrower')).result).toBe('caught kaboom');
      expect((await rt.call('ghost')).result).toBe("function not found: 'nowhere'");
    });

    it('answers context.functions.execute with a promise where the callee runs as a user the host must read first', async () => {
      rt.users.add({ id: 'bob-id', type: 'normal', data: {}, identities: [] });
      rt.functions.deploy(APP, {
        outer: 'exports = async () => { const p = context.functions.execute("asBob"); return { promise: p instanceof Promise, who: await p }; };',
        asBob: { source: 'exports = () => context.user.id;', config: { run_as_user_id: 'bob-id' } },
        missing: 'exports = async () => { try { await context.functions.execute("asGhost"); } catch (e) { return e.message; } };',
        asGhost: { source: 'exports = () => 1;', config: { run_as_user_id: 'ghost' } },
      });
      expect((await rt.call('outer')).result).toEqual({ promise: true, who: 'bob-id' });
      expect((await rt.call('missing')).result).toMatch(/does not exist: 'ghost'/);
    });

    it('still bounds synchronous nested calls: a function calling itself without end stops at the limit', async () => {
      rt.functions.deploy(APP, { again: 'exports = (n) => n > 0 ? context.functions.execute("again", n - 1) : "bottom";' });
      expect((await rt.call('again', [3])).result).toBe('bottom');
      await expectRuntimeError(rt.call('again', [100_000]), FunctionRuntimeErrorCode.FunctionExecutionError, /at most \d+ nested function calls/);
    });

    it('captures console output into the result and the execution log', async () => {
      rt.functions.deploy(APP, { talk: 'exports = () => { console.log("a", 1, { b: true }); console.warn("careful"); console.error(new Error("bad")); return 1; };' });
      const out = await rt.call('talk');
      expect(out.logs[0]).toBe('a 1 {"b":true}');
      expect(out.logs[1]).toBe('WARN: careful');
      expect(out.logs[2]).toMatch(/^ERROR: Error: bad/);
      const entry = await lastLog(rt);
      expect(entry.logs).toEqual(out.logs);
    });

    it('offers BSON, EJSON, Buffer, crypto, URL and utils.crypto', async () => {
      rt.functions.deploy(APP, {
        builtins: `exports = () => {
          const crypto = require("crypto");
          const { Buffer: B } = require("buffer");
          const url = new URL("https://example.com:8443/a/b?x=1&y=two#frag");
          url.searchParams.append("z", "3 4");
          return {
            oid: new BSON.ObjectId("64b7f0f0f0f0f0f0f0f0f0f0").toHexString(),
            ejson: EJSON.stringify({ n: BSON.Long.fromNumber(5) }),
            parsed: EJSON.parse('{"d":{"$date":"2020-01-01T00:00:00Z"}}').d.getUTCFullYear(),
            b64: Buffer.from("héllo").toString("base64"),
            hex: B.from("68656c6c6f", "hex").toString(),
            sha256: crypto.createHash("sha256").update("abc").digest("hex"),
            hmac: crypto.createHmac("sha1", "key").update("msg").digest("base64"),
            md5: utils.crypto.hash("md5", "abc").toString("hex"),
            uhmac: utils.crypto.hmac("msg", "key", "sha256", "hex"),
            random: crypto.randomBytes(8).length,
            host: url.hostname, port: url.port, path: url.pathname, search: url.search, q: url.searchParams.get("y"),
            href: url.href,
          };
        };`,
      });
      const out = (await rt.call('builtins')).result as Record<string, unknown>;
      const { createHash, createHmac } = await import('node:crypto');
      expect(out).toEqual({
        oid: '64b7f0f0f0f0f0f0f0f0f0f0',
        ejson: '{"n":5}',
        parsed: 2020,
        b64: Buffer.from('héllo').toString('base64'),
        hex: 'hello',
        sha256: createHash('sha256').update('abc').digest('hex'),
        hmac: createHmac('sha1', 'key').update('msg').digest('base64'),
        md5: createHash('md5').update('abc').digest('hex'),
        uhmac: createHmac('sha256', 'key').update('msg').digest('hex'),
        random: 8,
        host: 'example.com',
        port: '8443',
        path: '/a/b',
        search: '?x=1&y=two&z=3+4',
        q: 'two',
        href: 'https://example.com:8443/a/b?x=1&y=two&z=3+4#frag',
      });
    });

    it('refuses require of anything outside the allow-list', async () => {
      rt.functions.deploy(APP, { req: 'exports = () => require("fs");' });
      await expectRuntimeError(rt.call('req'), FunctionRuntimeErrorCode.FunctionExecutionError, /Cannot find module 'fs'/);
    });

    it('makes outbound HTTP requests with context.http, App Services style and fetch style', async () => {
      rt.functions.deploy(APP, {
        web: `exports = async function(base) {
          const posted = await context.http.post({ url: base + "/things", body: { a: 1 }, encodeBodyAsJSON: true, headers: { "X-Test": ["1"] } });
          const fetched = await context.http.fetch(base + "/missing");
          return {
            status: posted.statusCode, echoed: EJSON.parse(posted.body.text()), header: posted.headers["X-Echo"],
            fetchStatus: fetched.status, fetchOk: fetched.ok, fetchJson: await fetched.json(), ctype: fetched.headers.get("Content-Type"),
          };
        };`,
      });
      const out = (await rt.call('web', [baseUrl])).result;
      expect(out).toEqual({
        status: 200,
        echoed: { method: 'POST', path: '/things', body: '{"a":1}' },
        header: ['yes'],
        fetchStatus: 404,
        fetchOk: false,
        fetchJson: { method: 'GET', path: '/missing', body: '' },
        ctype: 'application/json',
      });
      expect(received[0].headers['x-test']).toBe('1');
      expect(received[0].headers['content-type']).toBe('application/json');
    });

    it('sends forms, query pieces and every HTTP verb through context.http', async () => {
      rt.functions.deploy(APP, {
        verbs: `exports = async function(base) {
          const host = base.replace("http://", "");
          const put = await context.http.put({ url: base + "/form", form: { a: "1 2", b: "é" } });
          const del = await context.http.delete({ scheme: "http", host, path: "/q", query: { x: ["1", "2"], y: "z" } });
          const patch = await context.http.patch({ url: base + "/p", body: "raw text" });
          const head = await context.http.head({ url: base + "/h" });
          const get = await context.http.get({ url: base + "/g" });
          return [put.statusCode, del.statusCode, patch.statusCode, head.statusCode, get.status];
        };`,
      });
      expect((await rt.call('verbs', [baseUrl])).result).toEqual([200, 200, 200, 200, '200 OK']);
      expect(received.map((r) => [r.method, r.url, r.body])).toEqual([
        ['PUT', '/form', 'a=1+2&b=%C3%A9'],
        ['DELETE', '/q?x=1&x=2&y=z', ''],
        ['PATCH', '/p', 'raw text'],
        ['HEAD', '/h', ''],
        ['GET', '/g', ''],
      ]);
      expect(received[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
    });

    it('refuses outbound URLs that are not http or https', async () => {
      rt.functions.deploy(APP, { file: 'exports = () => context.http.get({ url: "file:///etc/passwd" });' });
      await expectRuntimeError(rt.call('file'), FunctionRuntimeErrorCode.FunctionExecutionError, /only http and https/);
    });

    it('tells whether the function runs as system', async () => {
      rt.functions.deploy(APP, { sys: { source: 'exports = () => context.runningAsSystem();', config: { run_as_system: true } }, usr: 'exports = () => context.runningAsSystem();' });
      expect((await rt.call('sys')).result).toBe(true);
      expect((await rt.call('usr')).result).toBe(false);
    });

    it('runs setTimeout callbacks while the call is alive', async () => {
      rt.functions.deploy(APP, { wait: 'exports = () => new Promise((resolve) => setTimeout(() => resolve("later"), 5));' });
      expect((await rt.call('wait')).result).toBe('later');
    });
  });

  describe('run-as modes', () => {
    const whoami = `exports = async function() {
      await context.services.get("mongodb-atlas").db("d").collection("c").findOne({});
      return { id: context.user.id, type: context.user.type, system: context.runningAsSystem() };
    };`;

    it('runs as the caller by default, and as system when a trigger calls', async () => {
      rt.functions.deploy(APP, { who: whoami });
      expect((await rt.call('who')).result).toEqual({ id: 'alice-id', type: 'normal', system: false });
      expect((await rt.call('who', [], { caller: { type: 'system' }, origin: 'trigger' })).result).toEqual({ id: '000000000000000000000000', type: 'system', system: true });
      expect(rt.data.calls.map((c) => c.caller.kind)).toEqual(['user', 'system']);
    });

    it('runs as system with run_as_system, whoever calls, and still shows the caller in context.user', async () => {
      rt.functions.deploy(APP, { who: { source: whoami, config: { run_as_system: true } } });
      expect((await rt.call('who')).result).toEqual({ id: 'alice-id', type: 'normal', system: true });
      expect((await rt.call('who', [], { caller: { type: 'system' }, origin: 'trigger' })).result).toEqual({ id: '000000000000000000000000', type: 'system', system: true });
      expect(rt.data.calls[0].caller).toEqual({ kind: 'system' });
      const entry = await eventually(async () => {
        const found = (await rt.logs.list({ appId: APP })).find((e) => e.callerId === 'alice-id');
        if (!found) throw new Error('no log of the client call yet');
        return found;
      });
      expect(entry).toMatchObject({ callerId: 'alice-id', runAsId: 'system' });
    });

    it('runs as a fixed user with run_as_user_id', async () => {
      rt.users.add({ id: 'bob-id', type: 'normal', data: {}, identities: [] });
      rt.functions.deploy(APP, { who: { source: whoami, config: { run_as_user_id: 'bob-id' } } });
      expect((await rt.call('who', [], { caller: { type: 'system' }, origin: 'system' })).result).toEqual({ id: 'bob-id', type: 'normal', system: false });
      expect(rt.data.calls[0].caller).toEqual({ kind: 'user', user: { id: 'bob-id', type: 'normal', data: {}, identities: [] } });
    });

    it('fails a run_as_user_id call when the user does not exist', async () => {
      rt.functions.deploy(APP, { who: { source: whoami, config: { run_as_user_id: 'ghost' } } });
      await expectRuntimeError(rt.call('who'), FunctionRuntimeErrorCode.FunctionExecutionError, /does not exist: 'ghost'/);
    });

    it('runs as the user a run_as_user_id_script_source picks, and the script sees the caller', async () => {
      rt.users.add({ id: 'carol-id', type: 'normal', data: {}, identities: [] });
      rt.functions.deploy(APP, {
        who: { source: whoami, config: { run_as_user_id_script_source: 'exports = function() { return context.user.id === "alice-id" ? "carol-id" : "nobody"; };' } },
        who2: { source: whoami, config: { run_as_user_id_script_source: 'function() { return "carol-id"; }' } },
      });
      expect((await rt.call('who')).result).toEqual({ id: 'carol-id', type: 'normal', system: false });
      expect((await rt.call('who2')).result).toEqual({ id: 'carol-id', type: 'normal', system: false });
      expect(rt.data.calls[0].caller).toMatchObject({ kind: 'user', user: { id: 'carol-id' } });
    });

    it('applies the run-as setting of a nested function', async () => {
      rt.functions.deploy(APP, {
        outer: 'exports = async () => ({ outer: context.runningAsSystem(), inner: await context.functions.execute("inner") });',
        inner: { source: 'exports = () => context.runningAsSystem();', config: { run_as_system: true, private: true } },
      });
      expect((await rt.call('outer')).result).toEqual({ outer: false, inner: true });
    });
  });

  describe('private and can_evaluate', () => {
    it('refuses a client call to a private function but lets functions and triggers call it', async () => {
      rt.functions.deploy(APP, {
        secret: { source: 'exports = () => "secret";', config: { private: true } },
        front: 'exports = () => context.functions.execute("secret");',
      });
      const error = await expectRuntimeError(rt.call('secret'), FunctionRuntimeErrorCode.NotCallable, /private/);
      expect(error.httpStatus).toBe(403);
      expect((await rt.call('front')).result).toBe('secret');
      expect((await rt.call('secret', [], { caller: { type: 'system' }, origin: 'trigger' })).result).toBe('secret');
    });

    it('evaluates can_evaluate before a client call, with the caller and the arguments', async () => {
      const seen: unknown[] = [];
      rt = makeRuntime({}, {
        canEvaluate: (expression, input) => {
          seen.push({ expression, user: input.user?.id, args: input.arguments });
          return Promise.resolve(Array.isArray(input.arguments) && input.arguments[0] === 'open sesame');
        },
      });
      rt.functions.deploy(APP, { guarded: { source: 'exports = () => "in";', config: { can_evaluate: { '%%true': true } } } });
      expect((await rt.call('guarded', ['open sesame'])).result).toBe('in');
      await expectRuntimeError(rt.call('guarded', ['wrong']), FunctionRuntimeErrorCode.NotCallable, /can_evaluate/);
      expect(seen).toEqual([
        { expression: { '%%true': true }, user: 'alice-id', args: ['open sesame'] },
        { expression: { '%%true': true }, user: 'alice-id', args: ['wrong'] },
      ]);
      expect((await rt.call('guarded', ['wrong'], { caller: { type: 'system' }, origin: 'trigger' })).result).toBe('in');
    });

    it('refuses client calls guarded by can_evaluate when no evaluator is configured, and ignores an empty expression', async () => {
      rt.functions.deploy(APP, {
        guarded: { source: 'exports = () => 1;', config: { can_evaluate: { '%%true': true } } },
        open: { source: 'exports = () => 2;', config: { can_evaluate: {} } },
      });
      await expectRuntimeError(rt.call('guarded'), FunctionRuntimeErrorCode.NotCallable);
      expect((await rt.call('open')).result).toBe(2);
    });

    it('refuses to run a function with an invalid configuration', async () => {
      rt.functions.deploy(APP, { bad: { source: 'exports = () => 1;', config: { run_as_system: true, run_as_user_id: 'x' } } });
      await expectRuntimeError(rt.call('bad'), FunctionRuntimeErrorCode.InvalidFunctionConfiguration, /exclude each other/);
    });
  });

  describe('execution logs', () => {
    it('records function, user, duration, memory, logs and arguments', async () => {
      rt.functions.deploy(APP, { f: 'exports = (x) => { console.log("x is", x); return x; };' });
      await rt.call('f', [7]);
      const entry = await lastLog(rt, { functionName: 'f' });
      expect(entry).toMatchObject({ appId: APP, functionName: 'f', callerId: 'alice-id', runAsId: 'alice-id', origin: 'client', logs: ['x is 7'], arguments: '[{"$numberInt":"7"}]', argumentsOmitted: false });
      expect(entry.durationMs).toBeGreaterThan(0);
      expect(entry.memoryBytes).toBeGreaterThan(0);
      expect(entry.error).toBeUndefined();
    });

    it('keeps the correlation id, the function id and the caller address', async () => {
      rt.functions.deploy(APP, { f: { source: 'exports = () => 1;', config: { id: 'fn-id-1' } } });
      await rt.call('f', [], { origin: 'http', correlationId: 'corr-9', request: { remoteIPAddress: '10.1.2.3' } });
      expect(await lastLog(rt)).toMatchObject({ functionId: 'fn-id-1', correlationId: 'corr-9', remoteIPAddress: '10.1.2.3' });
    });

    it('omits arguments with disable_arg_logs and records errors', async () => {
      rt.functions.deploy(APP, { f: { source: 'exports = (password) => { throw new Error("nope"); };', config: { disable_arg_logs: true } } });
      await expect(rt.call('f', ['hunter2'])).rejects.toThrow('nope');
      const entry = await lastLog(rt);
      expect(entry.arguments).toBeUndefined();
      expect(entry.argumentsOmitted).toBe(true);
      expect(JSON.stringify(entry)).not.toContain('hunter2');
      expect(entry.error).toEqual({ code: 'FunctionExecutionError', message: 'nope' });
    });
  });

  describe('failing ports', () => {
    it('answers InternalServerError when the functions or the values cannot be read, and recovers', async () => {
      rt.functions.deploy(APP, { f: 'exports = () => context.values.get("v");' });
      const getFunctions = rt.functions.getFunctions.bind(rt.functions);
      rt.functions.getFunctions = () => Promise.reject(new Error('store down'));
      await expectRuntimeError(rt.call('f'), FunctionRuntimeErrorCode.InternalServerError, 'internal error while running the function');
      rt.functions.getFunctions = getFunctions;
      const getValues = rt.values.getValues.bind(rt.values);
      rt.values.getValues = () => Promise.reject(new Error('secrets down'));
      await expectRuntimeError(rt.call('f'), FunctionRuntimeErrorCode.InternalServerError);
      rt.values.getValues = getValues;
      rt.values.set(APP, { values: { v: 'back' }, environment: { tag: '', values: {} } });
      expect((await rt.call('f')).result).toBe('back');
    });
  });

  describe('warm sandboxes', () => {
    it('never shares a sandbox or values between apps', async () => {
      rt.values.set(APP, { values: { secret: 'of app 1' }, environment: { tag: '', values: {} } });
      rt.functions.deploy(APP, { read: 'exports = () => context.values.get("secret") ?? null;' });
      rt.functions.deploy('app-2', { read: 'exports = () => context.values.get("secret") ?? null;' });
      expect((await rt.call('read')).result).toBe('of app 1');
      expect((await rt.call('read', [], { appId: 'app-2' })).result).toBeNull();
      expect(rt.runtime.sandboxCount(APP)).toBe(1);
      expect(rt.runtime.sandboxCount('app-2')).toBe(1);
    });

    it('disposes sandboxes left idle beyond idleSandboxTtlMs', async () => {
      await rt.runtime.close();
      rt = makeRuntime({ idleSandboxTtlMs: 50 });
      rt.functions.deploy(APP, { v: 'exports = () => 1;' });
      await rt.call('v');
      expect(rt.runtime.sandboxCount(APP)).toBe(1);
      await eventually(() => rt.runtime.sandboxCount(APP) === 0, { timeoutMs: 5_000 });
      expect((await rt.call('v')).result).toBe(1);
    });

    it('starts a sandbox ahead of the first call with warm()', async () => {
      rt.functions.deploy(APP, { v: 'exports = () => 1;' });
      await rt.runtime.warm(APP);
      expect(rt.runtime.sandboxCount(APP)).toBe(1);
      expect((await rt.call('v')).result).toBe(1);
      expect(rt.runtime.sandboxCount(APP)).toBe(1);
    });

    it('starts none ahead for an app without functions, nor beside the sandbox a call started', async () => {
      rt.functions.deploy(APP, {});
      await rt.runtime.warm(APP);
      expect(rt.runtime.sandboxCount(APP)).toBe(0);
      rt.functions.deploy(APP, { v: 'exports = () => 1;' });
      await rt.call('v');
      await rt.runtime.warm(APP);
      expect(rt.runtime.sandboxCount(APP)).toBe(1);
    });

    it('reuses a warm sandbox across calls and retires it on deploy', async () => {
      rt.functions.deploy(APP, { v: 'exports = () => 1;' });
      await rt.call('v');
      await rt.call('v');
      expect(rt.runtime.sandboxCount(APP)).toBe(1);
      rt.functions.deploy(APP, { v: 'exports = () => 2;' });
      expect((await rt.call('v')).result).toBe(2);
      rt.runtime.invalidate(APP);
      expect(rt.runtime.sandboxCount(APP)).toBe(0);
      expect((await rt.call('v')).result).toBe(2);
    });

    it('reloads values after invalidate', async () => {
      rt.values.set(APP, { values: { v: 'one' }, environment: { tag: '', values: {} } });
      rt.functions.deploy(APP, { v: 'exports = () => context.values.get("v");' });
      expect((await rt.call('v')).result).toBe('one');
      rt.values.set(APP, { values: { v: 'two' }, environment: { tag: '', values: {} } });
      rt.runtime.invalidate(APP);
      expect((await rt.call('v')).result).toBe('two');
    });

    it('keeps serving a mix of concurrent good calls and calls killed by the time limit', async () => {
      await rt.runtime.close();
      rt = makeRuntime({ timeLimitMs: 500, sandboxesPerApp: 2, sandboxesPerAppWhileWaiting: 2 });
      rt.functions.deploy(APP, {
        good: 'exports = async (x) => { await context.functions.execute("helper"); return x; };',
        helper: 'exports = () => new Promise((r) => setTimeout(r, 5));',
        spin: 'exports = () => { for (;;) {} };',
      });
      const calls = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? rt.call('spin') : rt.call('good', [i])));
      const settled = await Promise.allSettled(calls);
      settled.forEach((outcome, i) => {
        if (i % 3 === 0) {
          expect(outcome.status).toBe('rejected');
          expect((outcome as PromiseRejectedResult).reason).toMatchObject({ errorCode: 'ExecutionTimeLimitExceeded' });
        } else {
          expect(outcome).toMatchObject({ status: 'fulfilled', value: { result: i } });
        }
      });
      expect(rt.runtime.sandboxCount(APP)).toBeLessThanOrEqual(2);
      expect((await rt.call('good', ['after'])).result).toBe('after');
    });

    it('runs concurrent calls in separate sandboxes up to the pool size', async () => {
      await rt.runtime.close();
      rt = makeRuntime({ sandboxesPerApp: 2, sandboxesPerAppWhileWaiting: 2 });
      rt.functions.deploy(APP, { slow: 'exports = (x) => new Promise((r) => setTimeout(() => r(x), 20));' });
      const results = await Promise.all([1, 2, 3, 4, 5].map((x) => rt.call('slow', [x])));
      expect(results.map((r) => r.result)).toEqual([1, 2, 3, 4, 5]);
      expect(rt.runtime.sandboxCount(APP)).toBe(2);
    });

    it('runs calls that wait on the host side by side past the pool size, up to the size for waiting calls', async () => {
      await rt.runtime.close();
      rt = makeRuntime({ timeLimitMs: 30_000, sandboxesPerApp: 2, sandboxesPerAppWhileWaiting: 6 });
      // Each call reports when it started and ended its wait: a call that queued behind another starts after it ended.
      rt.functions.deploy(APP, { wait: 'exports = async () => { const start = Date.now(); await new Promise((r) => setTimeout(r, 1500)); return [start, Date.now()]; };' });
      const results = await Promise.all(Array.from({ length: 8 }, () => rt.call('wait')));
      const spans = results.map((r) => r.result as [number, number]);
      const overlapping = (at: number): number => spans.filter(([start, end]) => start <= at && at < end).length;
      // Six waited at the same moment (two sandboxes, then four more while all running calls waited), the other two after.
      expect(Math.max(...spans.map(([start]) => overlapping(start)))).toBe(6);
      expect(rt.runtime.sandboxCount(APP)).toBe(6);
    });

    it('does not grow for waiting calls that hold the memory its pool size may use', async () => {
      await rt.runtime.close();
      // Two sandboxes of 64 MB: 128 MB for the pool. Each call holds 40 MB while it waits, so a third would not fit.
      rt = makeRuntime({ timeLimitMs: 30_000, memoryLimitMb: 64, sandboxesPerApp: 2, sandboxesPerAppWhileWaiting: 6 });
      rt.functions.deploy(APP, { hold: 'exports = async () => { const big = new Array(5e6).fill(1.5); await new Promise((r) => setTimeout(r, 300)); return big.length; };' });
      const results = await Promise.all(Array.from({ length: 6 }, () => rt.call('hold')));
      expect(results.map((r) => r.result)).toEqual(Array.from({ length: 6 }, () => 5e6));
      expect(rt.runtime.sandboxCount(APP)).toBe(2);
    });
  });
});
