/** The Node-like built-ins the sandbox provides, checked against Node's own behaviour. */
import fc from 'fast-check';
import { APP, makeRuntime } from '../testing/runtime-fixture';

describe('sandbox built-ins', () => {
  const rt = makeRuntime();
  afterAll(() => rt.runtime.close());

  async function run(body: string, args: unknown[] = []): Promise<unknown> {
    rt.functions.deploy(APP, { f: `exports = function(input) { ${body} };` });
    return (await rt.call('f', args)).result;
  }

  it('names its built-ins as Node and the web platform do, though they are bundled into one script', async () => {
    const names = await run(
      `const crypto = require("crypto");
       return [Buffer, URL, URLSearchParams, TextEncoder, TextDecoder, atob, btoa, crypto.createHash, globalThis.crypto.getRandomValues, globalThis.crypto.randomUUID].map((f) => f.name);`,
    );
    expect(names).toEqual(['Buffer', 'URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder', 'atob', 'btoa', 'createHash', 'getRandomValues', 'randomUUID']);
  });

  // App Services' functions/globals page: `{ "_id": BSON.ObjectId("5ad84b81b8b998278f773c1b") }`,
  // `BSON.BSONRegExp("the great", "ig")`, `BSON.Binary.fromBase64(...)`; most real exports call them so.
  it("gives functions App Services' BSON: value types callable without new, Binary's hex, base64 and text helpers", async () => {
    const out = (await run(
      `const id = BSON.ObjectId("5ad84b81b8b998278f773c1b");
       const bin = BSON.Binary.fromBase64("VGVzdCBtZXNzYWdl");
       const hex = BSON.Binary.fromHex("54657374", 4);
       const re = BSON.BSONRegExp("the great", "ig");
       return {
         id: id.toHexString(), sameClass: id instanceof BSON.ObjectId && new BSON.ObjectId() instanceof BSON.ObjectId,
         generated: BSON.ObjectId().toHexString().length, valid: BSON.ObjectId.isValid("5ad84b81b8b998278f773c1b"),
         text: bin.text(), toHex: bin.toHex(), toBase64: hex.toBase64(), subType: hex.sub_type, isBinary: bin instanceof BSON.Binary,
         re: [re.pattern, re.options], int32: BSON.Int32(5).valueOf(), double: BSON.Double(5.5).valueOf(),
         long: BSON.Long(1, 1).toString(), decimal: BSON.Decimal128.fromString("1234.5678910123456").toString(),
         timestamp: BSON.Timestamp({ t: 1, i: 2 }).toString(), doc: EJSON.stringify({ _id: id, n: BSON.Int32(1) }, { relaxed: false }),
       };`,
    )) as Record<string, unknown>;
    expect(out).toEqual({
      id: '5ad84b81b8b998278f773c1b',
      sameClass: true,
      generated: 24,
      valid: true,
      text: 'Test message',
      toHex: '54657374206d657373616765',
      toBase64: 'VGVzdA==',
      subType: 4,
      isBinary: true,
      re: ['the great', 'i'],
      int32: 5,
      double: 5.5,
      long: '4294967297',
      decimal: '1234.5678910123456',
      timestamp: '4294967298',
      doc: '{"_id":{"$oid":"5ad84b81b8b998278f773c1b"},"n":{"$numberInt":"1"}}',
    });
  });

  it('builds the parts of context a function reads once per call, and only those', async () => {
    const same = await run('return [context.user === context.user, context.environment === context.environment, context.http === context.http, context.user.id];');
    expect(same).toEqual([true, true, true, 'alice-id']);
  });

  it('encodes and decodes Buffer like Node for every supported encoding', async () => {
    const text = 'héllo wörld ✓ 😀';
    const out = (await run(
      `const b = Buffer.from(input);
       return { utf8: b.toString(), hex: b.toString("hex"), base64: b.toString("base64"), base64url: b.toString("base64url"),
         latin1: Buffer.from("ÿé", "latin1").toString("hex"), utf16: Buffer.from("hi", "utf16le").toString("hex"),
         fromB64: Buffer.from(b.toString("base64"), "base64").toString(), fromB64url: Buffer.from(b.toString("base64url"), "base64url").toString(),
         len: Buffer.byteLength(input), concat: Buffer.concat([Buffer.from("ab"), Buffer.from("cd")]).toString(),
         slice: b.slice(0, 5).toString(), equals: Buffer.from("x").equals(Buffer.from("x")), isBuffer: Buffer.isBuffer(b),
         alloc: Buffer.alloc(4, "ab").toString(), json: Buffer.from([1, 2]).toJSON(), u32: Buffer.from([0, 0, 1, 0]).readUInt32BE(0) };`,
      [text],
    )) as Record<string, unknown>;
    const b = Buffer.from(text);
    expect(out).toEqual({
      utf8: text,
      hex: b.toString('hex'),
      base64: b.toString('base64'),
      base64url: b.toString('base64url'),
      latin1: Buffer.from('ÿé', 'latin1').toString('hex'),
      utf16: Buffer.from('hi', 'utf16le').toString('hex'),
      fromB64: text,
      fromB64url: text,
      len: Buffer.byteLength(text),
      concat: 'abcd',
      slice: b.subarray(0, 5).toString(),
      equals: true,
      isBuffer: true,
      alloc: 'abab',
      json: { type: 'Buffer', data: [1, 2] },
      u32: 256,
    });
  });

  it('decodes invalid UTF-8 with replacement characters, or throws when fatal', async () => {
    const out = await run(`
      const bad = new Uint8Array([0x61, 0xff, 0x62, 0xe2, 0x82]);
      let fatal; try { new TextDecoder("utf-8", { fatal: true }).decode(bad); } catch (e) { fatal = e.constructor.name; }
      return { lenient: new TextDecoder().decode(bad), fatal, encoded: Array.from(new TextEncoder().encode("€")) };`);
    expect(out).toEqual({ lenient: Buffer.from([0x61, 0xff, 0x62, 0xe2, 0x82]).toString(), fatal: 'TypeError', encoded: [0xe2, 0x82, 0xac] });
  });

  it('agrees with Node on UTF-8 for random bytes and random UTF-16 strings', async () => {
    const byteSamples = fc.sample(fc.uint8Array({ maxLength: 12 }), 300).map((bytes) => Array.from(bytes));
    const charUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
    const strings = fc.sample(fc.string({ unit: charUnit, maxLength: 8 }), 300);
    const out = (await run(
      `const [bytes, strings] = input;
       return { decoded: bytes.map((b) => new TextDecoder().decode(new Uint8Array(b))), encoded: strings.map((s) => Buffer.from(s).toString("hex")) };`,
      [[byteSamples, strings]],
    )) as { decoded: string[]; encoded: string[] };
    expect(out.decoded).toEqual(byteSamples.map((b) => Buffer.from(b).toString('utf8')));
    expect(out.encoded).toEqual(strings.map((s) => Buffer.from(s).toString('hex')));
  });

  it('offers atob, btoa and URLSearchParams like the web platform', async () => {
    const out = await run(`
      const p = new URLSearchParams("a=1&b=x+y&a=2&c=%C3%A9");
      p.set("a", "3"); p.append("d", "it's ~ok");
      return { atob: atob("aGVsbG8="), btoa: btoa("hello"), a: p.getAll("a"), b: p.get("b"), c: p.get("c"), s: p.toString(), has: p.has("zz") };`);
    const p = new URLSearchParams('a=1&b=x+y&a=2&c=%C3%A9');
    p.set('a', '3');
    p.append('d', "it's ~ok");
    expect(out).toEqual({ atob: 'hello', btoa: 'aGVsbG8=', a: ['3'], b: 'x y', c: 'é', s: p.toString(), has: false });
  });

  it('parses and edits URLs like Node, and rejects invalid ones', async () => {
    const out = await run(`
      const u = new URL("../x?q=1", "https://user:pw@example.com/a/b/c");
      u.hash = "top"; u.searchParams.set("q", "2"); u.pathname = "/new path";
      let invalid; try { new URL("not a url"); } catch (e) { invalid = e.constructor.name; }
      return { href: u.href, origin: u.origin, user: u.username, canParse: URL.canParse("http://x"), invalid, json: JSON.stringify({ u }) };`);
    const u = new URL('../x?q=1', 'https://user:pw@example.com/a/b/c');
    u.hash = 'top';
    u.searchParams.set('q', '2');
    u.pathname = '/new path';
    expect(out).toEqual({ href: u.href, origin: u.origin, user: 'user', canParse: true, invalid: 'TypeError', json: JSON.stringify({ u: u.href }) });
  });

  it('returns and stores Buffers and typed arrays as BSON Binary', async () => {
    rt.functions.deploy(APP, {
      bytes: `exports = async () => {
        await context.services.get("mongodb-atlas").db("d").collection("files").insertOne({ data: Buffer.from("hi"), list: [new Uint8Array([1, 2])] });
        return { buf: Buffer.from("hi"), nested: { arr: [new Uint8Array([7])] }, plain: { a: [1] } };
      };`,
    });
    const out = await rt.call('bytes');
    expect(out.resultEjson).toBe(
      '{"buf":{"$binary":{"base64":"aGk=","subType":"00"}},"nested":{"arr":[{"$binary":{"base64":"Bw==","subType":"00"}}]},"plain":{"a":[{"$numberInt":"1"}]}}',
    );
    const inserted = rt.data.calls.at(-1)?.arguments[0] as { document: { data: { buffer: Uint8Array }; list: Array<{ buffer: Uint8Array }> } };
    expect(Buffer.from(inserted.document.data.buffer).toString()).toBe('hi');
    expect(Array.from(inserted.document.list[0].buffer)).toEqual([1, 2]);
  });

  it('generates ObjectIds and UUIDs with host randomness', async () => {
    const out = (await run(`
      const a = new BSON.ObjectId(), b = new BSON.ObjectId();
      return { distinct: !a.equals(b), uuid: require("crypto").randomUUID(), uuid2: new BSON.UUID().toHexString(true) };`)) as Record<string, unknown>;
    expect(out['distinct']).toBe(true);
    expect(out['uuid']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(out['uuid2']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('still lets functions override toString, name and constructor on their own objects', async () => {
    const out = await run(`
      "use strict";
      const o = {}; o.toString = () => "custom"; o.constructor = "mine";
      const e = new Error("m"); e.name = "MyError";
      function K() {} K.prototype.toString = function () { return "K!"; };
      return [String(o), o.constructor, e.name, String(e), String(new K())];`);
    expect(out).toEqual(['custom', 'mine', 'MyError', 'MyError: m', 'K!']);
  });
});
