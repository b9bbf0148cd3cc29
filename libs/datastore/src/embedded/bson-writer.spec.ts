import { BSON, Binary, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, UUID } from 'bson';
import { type Document } from '../bson/values';
import { encodeDocument } from './bson-writer';
import { MAX_BSON_SIZE, RecordBuffer, decodeCommit, encodeCommitInto } from './log-files';

/** What the log writes for `doc`, through the fast writer or (for other values) the bson package. */
function logged(doc: Document): Buffer {
  const out = new RecordBuffer(16);
  out.appendDocument(doc);
  return Buffer.from(out.view());
}

function reference(doc: Document): Buffer {
  return Buffer.from(BSON.serialize(doc, { ignoreUndefined: true, checkKeys: false }));
}

/** A pseudo-random generator, so a failing case can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 0x1_0000_0000;
  };
}

function randomValue(rand: () => number, depth: number): unknown {
  const pick = Math.floor(rand() * (depth > 3 ? 9 : 11));
  switch (pick) {
    case 0:
      return Math.floor(rand() * 2 ** 31) * (rand() < 0.5 ? -1 : 1);
    case 1:
      return [0, -0, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 53, 1.5, -1e300, Number.NaN, Infinity, -Infinity][Math.floor(rand() * 11)];
    case 2:
      return ['', 'a', 'héllo wörld', '日本語テキスト', '😀 emoji', 'x'.repeat(Math.floor(rand() * 2000)), 'lone \ud800 surrogate'][Math.floor(rand() * 7)];
    case 3:
      return rand() < 0.5;
    case 4:
      return null;
    case 5:
      return new Date(Math.floor(rand() * 4e12));
    case 6:
      return new ObjectId();
    case 7:
      return undefined;
    case 8:
      return `s${Math.floor(rand() * 1000)}`;
    case 9:
      return Array.from({ length: Math.floor(rand() * 5) }, () => randomValue(rand, depth + 1));
    default: {
      const doc: Document = {};
      for (let i = Math.floor(rand() * 6); i > 0; i--) doc[['a', 'b', 'ключ', 'k😀', '1', '$x', 'a.b'][Math.floor(rand() * 7)] + String(i)] = randomValue(rand, depth + 1);
      return doc;
    }
  }
}

describe('the log BSON writer', () => {
  it('writes the same bytes as the bson package for the values the engine stores', () => {
    const rand = prng(42);
    for (let n = 0; n < 2000; n++) {
      const doc: Document = { _id: n };
      for (let i = Math.floor(rand() * 8); i > 0; i--) doc[`f${i}`] = randomValue(rand, 0);
      expect(logged(doc).equals(reference(doc)), JSON.stringify(doc)).toBe(true);
      // The fast path took it (nothing here needs the bson package).
      const out = new RecordBuffer(16);
      expect(encodeDocument(out, 0, doc)).toBeGreaterThan(0);
    }
  });

  it('writes integer keys, sparse arrays and null-prototype objects like the bson package', () => {
    const sparse: unknown[] = [1];
    sparse[3] = 'x';
    const bare = Object.create(null) as Document;
    bare.a = 1;
    const docs: Document[] = [{ 2: 'two', 1: 'one', b: 1 }, { a: sparse }, { a: bare }, { a: Array.from({ length: 1500 }, (_, i) => i) }, {}];
    for (const doc of docs) expect(logged(doc).equals(reference(doc))).toBe(true);
  });

  it('leaves other BSON values to the bson package and still writes what it would', () => {
    const docs: Document[] = [
      { a: Decimal128.fromString('1.5') },
      { a: new Binary(Buffer.from('abc')), b: new UUID() },
      { a: /x+/i, b: new Timestamp({ t: 1, i: 2 }), c: new MinKey(), d: new MaxKey() },
      { a: new Int32(5) },
      { nested: { deeper: [{ a: 10n }] } },
      { before: new Date(-1000), invalid: new Date(Number.NaN) },
      { m: new Map([['a', 1]]) },
    ];
    for (const doc of docs) {
      expect(encodeDocument(new RecordBuffer(16), 0, doc)).toBe(-1);
      expect(logged(doc).equals(reference(doc))).toBe(true);
    }
  });

  it('writes the stored forms of typed numbers itself (a Double holding an integer, any Long), as bson does', () => {
    const docs: Document[] = [
      { a: Long.fromString('9007199254740993'), b: Long.fromNumber(-5), c: Long.fromString('-9223372036854775808') },
      { a: new Double(1), b: new Double(-2147483648), c: [new Double(0), Long.fromNumber(7)], d: { e: new Double(3) } },
    ];
    for (const doc of docs) {
      expect(encodeDocument(new RecordBuffer(16), 0, doc)).toBeGreaterThan(0);
      expect(logged(doc).equals(reference(doc))).toBe(true);
      expect(BSON.deserialize(logged(doc), { promoteValues: false })).toEqual(BSON.deserialize(reference(doc), { promoteValues: false }));
    }
  });

  it('refuses what the bson package refuses', () => {
    expect(() => logged({ 'a\0b': 1 })).toThrow();
    const cyclic: Document = { a: 1 };
    cyclic.self = cyclic;
    expect(() => logged(cyclic)).toThrow();
  });

  it('refuses a user document over the size limit and accepts a larger record of legal ones', () => {
    const big = { _id: 1, s: 'x'.repeat(MAX_BSON_SIZE) };
    const out = new RecordBuffer(16);
    expect(() => out.appendDocument({ k: 'i', doc: big }, [big])).toThrow(expect.objectContaining({ code: 10334 }));
    expect(out.length).toBe(0);
    // An update of a 10 MB document logs the document and its pre-image: a 20 MB record, both legal.
    const doc = { _id: 1, s: 'y'.repeat(10 * 1024 * 1024), n: Long.fromString('9007199254740993') };
    const pre = { _id: 1, s: 'z'.repeat(10 * 1024 * 1024) };
    const framed = new RecordBuffer(64 * 1024);
    encodeCommitInto(framed, { seq: 7, time: 1, ops: [{ k: 'u', d: 'db', c: 'c', doc, pre }] });
    const decoded = decodeCommit(framed.view().subarray(8));
    expect(decoded.seq).toBe(7);
    expect((decoded.ops[0].doc as Document).s).toBe(doc.s);
    expect((decoded.ops[0].pre as Document).s).toBe(pre.s);
  });
});
