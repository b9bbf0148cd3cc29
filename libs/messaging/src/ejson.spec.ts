import { Binary, BSONRegExp, Code, DBRef, Decimal128, type Document, Double, EJSON, Int32, Long, MaxKey, ObjectId, Timestamp } from 'bson';
import fc from 'fast-check';
import { type JsonValue } from '@tessera/contracts';
import { assertWellFormedEjson, decodeEjson, encodeEjson, keepRegexOperators, MalformedEjsonError, MAX_EJSON_DEPTH, parseEjson } from './ejson';

/**
 * bson's reading, but for a relaxed Int64 no double holds exactly, which decodeEjson keeps a Long (bson
 * rounds it): the canonical reading with Int32, Double and the Longs a double holds made numbers.
 */
function bsonReading(json: unknown, relaxed: boolean): unknown {
  const canonical = EJSON.deserialize(keepRegexOperators(json) as Parameters<typeof EJSON.deserialize>[0], { relaxed: false });
  if (!relaxed) return canonical;
  const relax = (value: unknown): unknown => {
    if (value instanceof Int32 || value instanceof Double) return value.value;
    if (value instanceof Long && !(value instanceof Timestamp)) return value.lessThanOrEqual(Number.MAX_SAFE_INTEGER) && value.greaterThanOrEqual(Number.MIN_SAFE_INTEGER) ? value.toNumber() : value;
    if (value instanceof DBRef) return new DBRef(value.collection, relax(value.oid) as ObjectId, value.db, relax(value.fields) as Document);
    if (value instanceof Code) return new Code(value.code, value.scope === null ? null : (relax(value.scope) as Document));
    if (value === null || typeof value !== 'object' || '_bsontype' in value || value instanceof Date) return value;
    if (Array.isArray(value)) return value.map(relax);
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) Object.defineProperty(out, key, { value: relax(item), enumerable: true, writable: true, configurable: true });
    return out;
  };
  return relax(canonical);
}

describe('EJSON payload helpers', () => {
  it('encodes BSON values as canonical Extended JSON and decodes them without loss', () => {
    const id = new ObjectId('5f0c5e0b9d1e8a2b3c4d5e6f');
    const value = [id, Long.fromString('9007199254740993'), new Date(0), Decimal128.fromString('1.10'), 'text', null];
    const encoded = encodeEjson(value);
    expect(encoded).toEqual([
      { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' },
      { $numberLong: '9007199254740993' },
      { $date: { $numberLong: '0' } },
      { $numberDecimal: '1.10' },
      'text',
      null,
    ]);
    const decoded = decodeEjson(JSON.parse(JSON.stringify(encoded))) as unknown[];
    expect((decoded[0] as ObjectId).equals(id)).toBe(true);
    expect((decoded[1] as Long).toString()).toBe('9007199254740993');
    expect(decoded[2]).toEqual(new Date(0));
    expect(String(decoded[3])).toBe('1.10');
  });

  it('gives plain numbers when asked for relaxed values', () => {
    expect(decodeEjson([{ $numberInt: '7' }, { $numberDouble: '2.5' }], { relaxed: true })).toEqual([7, 2.5]);
  });

  it('reads numbers in the datastore\'s stored form when asked: only a double holding an int32 stays a Double, every long a Long', () => {
    const text = '{"i":{"$numberInt":"7"},"d":{"$numberDouble":"1.0"},"f":{"$numberDouble":"2.5"},"big":{"$numberDouble":"1e10"},"l":{"$numberLong":"5"},"plain":3,"u":{"$set":{"x":{"$numberDouble":"-4"},"y":[{"$numberLong":"1"},{"$numberInt":"2"}]}}}';
    const read = parseEjson(text, { stored: true }) as Record<string, unknown>;
    expect(read).toEqual({ i: 7, d: new Double(1), f: 2.5, big: 1e10, l: Long.fromNumber(5), plain: 3, u: { $set: { x: new Double(-4), y: [Long.fromNumber(1), 2] } } });
    expect(read['i']).toBe(7);
    expect(read['l']).toBeInstanceOf(Long);
  });

  it('keeps a relaxed Int64 a Long when no double holds it exactly', () => {
    const texts = ['9007199254740991', '-9007199254740991', '9007199254740992', '-9223372036854775808', '9223372036854775807'];
    const read = texts.map((text) => decodeEjson({ $numberLong: text }, { relaxed: true }));
    expect(read.slice(0, 2)).toEqual([9007199254740991, -9007199254740991]);
    expect(read.slice(2).map((value) => (value instanceof Long ? value.toString() : value))).toEqual(texts.slice(2));
    expect(parseEjson('{"big":{"$numberLong":"4611686018427387905"}}')).toEqual({ big: Long.fromString('4611686018427387905') });
    expect(encodeEjson(parseEjson('[{"$numberLong":"-4611686018427387905"}]'))).toEqual([{ $numberLong: '-4611686018427387905' }]);
  });

  it('encodes every kind of value exactly as bson\'s EJSON.serialize does', () => {
    const shared = { x: 1 };
    const withProto = JSON.parse('{"__proto__": {"$oid": "x"}, "a": 1}') as unknown;
    const values: unknown[] = [
      { a: undefined, b: [undefined, () => 1, Symbol('s')], c: () => 2, d: Symbol('d'), e: -0, f: NaN, g: 1.5, h: 2 ** 40, i: 2 ** 70, j: -(2 ** 53 - 1), k: Infinity },
      { int: new Int32(7), double: new Double(2), long: Long.fromString('-9223372036854775808'), decimal: Decimal128.fromString('-0.00'), big: 12n, date: new Date(-1), bad: new Date(NaN) },
      { binary: new Binary(Buffer.from('hi')), ts: new Timestamp({ t: 5, i: 6 }), code: new Code('f()', { a: 1 }), max: new MaxKey(), re: /a+/i, map: new Map([['k', 1]]), bytes: new Uint8Array([1, 2]) },
      { nested: [[{ deep: [shared, shared] }]], nullProto: Object.assign(Object.create(null) as object, { z: 'z' }), withProto, 3: 'int key', s: 'é\ud800' },
      [new ObjectId('5f0c5e0b9d1e8a2b3c4d5e6f'), null, true, 'x', 0, -1, 2147483648],
      undefined,
      null,
      'plain',
    ];
    for (const value of values) expect(encodeEjson(value)).toStrictEqual(EJSON.serialize(value, { relaxed: false }));
  });

  it('writes an integer beyond 2^53 as the Int64 it is exactly, and 2^63 (which no Int64 holds) as a double', () => {
    // bson writes Number#toString's digits ("-9223372036854776000" for -2^63, out of range) and 2^63 as a $numberLong.
    expect(encodeEjson([-(2 ** 63), 2 ** 60 + 2 ** 9, 2 ** 53])).toEqual([{ $numberLong: '-9223372036854775808' }, { $numberLong: '1152921504606847488' }, { $numberLong: '9007199254740992' }]);
    const [twoTo63] = encodeEjson([2 ** 63]) as Array<{ $numberDouble: string }>;
    expect(Number(twoTo63.$numberDouble)).toBe(2 ** 63);
    expect(() => assertWellFormedEjson(encodeEjson({ values: [2 ** 63, -(2 ** 63), 2 ** 62 + 2 ** 11] }))).not.toThrow();
  });

  it('refuses a cycle with bson\'s error', () => {
    const cyclic: Record<string, unknown> = { a: [1] };
    (cyclic['a'] as unknown[]).push(cyclic);
    expect(() => encodeEjson(cyclic)).toThrow(/circular structure/);
  });

  it('parses relaxed Extended JSON text exactly as bson\'s EJSON.parse does', () => {
    const texts = [
      '{"a":1,"b":[{"$oid":"5f0c5e0b9d1e8a2b3c4d5e6f"},{"$numberInt":"7"},{"$numberLong":"9007199254740993"}],"c":{"d":{"$date":{"$numberLong":"5"}}}}',
      '[{"q":{"$gt":{"$numberDouble":"1.5"}},"r":{"$regex":"a","$nin":["abc"]}},{"$undefined":true},{"$ref":"c","$id":1},null,"s",true]',
      '{"__proto__":{"x":{"$numberDecimal":"1.10"}},"t":{"$timestamp":{"t":1,"i":2}},"bin":{"$binary":{"base64":"aGk=","subType":"00"}},"e":{},"f":[]}',
      '{"deep":[[[{"k":[{"$minKey":1}]}]]]}',
      '[{"$numberInt":"-7"},{"$numberInt":"2147483647"},{"$numberDouble":"-0.0"},{"$numberDouble":"NaN"},{"$numberDouble":"-Infinity"},{"$numberDouble":"1e400"},{"$numberDouble":"0.1"},{"$numberLong":"-5"},{"$oid":"000000000000000000000001"}]',
      '"text"',
      '12.5',
    ];
    for (const text of texts) expect(parseEjson(text)).toStrictEqual(bsonReading(JSON.parse(text), true));
    expect(() => parseEjson('{"a":{"b\\u0000":1}}')).toThrow(/null bytes/);
    for (const text of texts) {
      const expected = EJSON.deserialize(keepRegexOperators(JSON.parse(text)) as Parameters<typeof EJSON.deserialize>[0], { relaxed: false });
      expect(parseEjson(text, { relaxed: false })).toStrictEqual(expected);
    }
  });

  it('decodes Extended JSON values exactly as bson\'s EJSON.deserialize does, leaving them as they were', () => {
    const values: unknown[] = [
      { a: 1, b: -0, c: NaN, d: [1.5, 2 ** 40, 2 ** 70, -(2 ** 31)], e: { $numberInt: '3' }, f: [{ $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, { $numberDouble: '-0.0' }] },
      { g: { $date: { $numberLong: '5' } }, h: { $numberLong: '9007199254740993' }, i: { q: { $in: [1, { $numberInt: '2' }] } }, j: { $regex: 'a', $nin: ['b'] } },
      { k: new Date(0), l: undefined, m: [undefined], withToJson: { toJSON: () => 'x' } },
      [null, 'text', true, {}, []],
      7,
    ];
    for (const relaxed of [false, true]) {
      for (const value of values) {
        const before = JSON.stringify(value);
        expect(decodeEjson(value as JsonValue, { relaxed })).toStrictEqual(bsonReading(value, relaxed));
        expect(JSON.stringify(value)).toBe(before);
      }
    }
  });
});

describe('assertWellFormedEjson', () => {
  it.each([
    ['$numberInt that is no integer', { $numberInt: 'abc' }],
    ['$numberInt over 32 bits', { $numberInt: '99999999999' }],
    ['$numberLong over 64 bits (bson wraps it negative)', { $numberLong: '9223372036854775808' }],
    ['$numberLong under 64 bits', { $numberLong: '-9223372036854775809' }],
    ['$numberDouble that is no number', { $numberDouble: 'xyz' }],
    ['$date text that is no date', { $date: 'garbage' }],
    ['$date past the last representable instant', { $date: { $numberLong: '8640000000000001' } }],
    ['$date that is no integer', { $date: { $numberLong: '1e3' } }],
  ])('refuses a %s (bson would read it as some other value)', (_name, wrapper) => {
    expect(() => assertWellFormedEjson({ args: [{ field: wrapper }] })).toThrow(MalformedEjsonError);
  });

  it.each([
    ['$oid with a key beside it', { $oid: '65a1b2c3d4e5f60718293a4b', note: 'x' }],
    ['$symbol given as a number', { $symbol: 12 }],
    ['$numberInt given as a JSON number', { $numberInt: 17 }],
    ['$numberDouble given as a JSON number', { $numberDouble: 2.5 }],
    ['$numberLong with a key beside it', { $numberLong: '3', kind: 'long' }],
    ['$numberDecimal with a key beside it', { $numberDecimal: '2.50', unit: 'eur' }],
    ['$date given as a JSON number', { $date: 1700000000000 }],
    ['$date with a key beside it', { $date: { $numberLong: '0' }, tz: 'UTC' }],
    ['$date whose $numberLong has a key beside it', { $date: { $numberLong: '0', tz: 'UTC' } }],
    ['$binary without its subType', { $binary: { base64: 'AAEC' } }],
    ['$binary with a third key', { $binary: { base64: 'AAEC', subType: '00', note: 1 } }],
    ['$binary with a key beside it', { $binary: { base64: 'AAEC', subType: '00' }, note: 1 }],
    ['legacy $binary without $type', { $binary: 'AAEC' }],
    ['$regularExpression without options', { $regularExpression: { pattern: '^x' } }],
    ['$regularExpression with a numeric pattern', { $regularExpression: { pattern: 7, options: '' } }],
    ['$regularExpression with a third key', { $regularExpression: { pattern: 'x', options: 'i', flags: 'g' } }],
    ['$timestamp with text fields', { $timestamp: { t: '10', i: 1 } }],
    ['$timestamp with a third key', { $timestamp: { t: 1, i: 2, z: 3 } }],
    ['$timestamp with a negative increment', { $timestamp: { t: 1, i: -2 } }],
    ['$minKey of 0', { $minKey: 0 }],
    ['$maxKey of true', { $maxKey: true }],
    ['$maxKey with a key beside it', { $maxKey: 1, also: 1 }],
    ['$code given as a number', { $code: 7 }],
    ['$code with a scope that is no document', { $code: 'return 1', $scope: 5 }],
    ['$code with a key other than $scope', { $code: 'x()', lang: 'js' }],
    ['$undefined of false', { $undefined: false }],
    ['$dbPointer with a third key', { $dbPointer: { $ref: 'orders', $id: { $oid: '65a1b2c3d4e5f60718293a4b' }, $db: 'shop' } }],
  ])('refuses a %s, as the Extended JSON spec does (bson reads it as something else)', (_name, wrapper) => {
    expect(() => assertWellFormedEjson([{ field: wrapper }])).toThrow(MalformedEjsonError);
  });

  it('accepts every wrapper in its canonical, relaxed and legacy forms, DBRefs with fields of their own, and query operators', () => {
    const id = { $oid: '65a1b2c3d4e5f60718293a4b' };
    expect(() =>
      assertWellFormedEjson({
        forms: [
          { $binary: { base64: 'c3VyZQ==', subType: '04' } },
          { $binary: 'c3VyZQ==', $type: '80' },
          { $type: '05', $binary: '' },
          { $uuid: 'c8edabc3-f738-4ca3-b68d-ab92a91478a3' },
          { $code: 'return 1' },
          { $scope: { n: 1 }, $code: 'return n' },
          { $timestamp: { t: 4294967295, i: 0 } },
          { $regularExpression: { pattern: '', options: 'imsux' } },
          { $date: '1969-07-20T20:17:40Z' },
          { $date: { $numberLong: '-14159025000' } },
          { $minKey: 1 },
          { $maxKey: 1 },
          { $undefined: true },
          { $symbol: 'sym' },
          { $numberDecimal: '-1.5E-6176' },
          { $dbPointer: { $id: id, $ref: 'orders' } },
          { $ref: 'orders', $id: id, $db: 'shop', note: 'a DBRef may carry more fields' },
        ],
        query: { qty: { $type: 'double', $gt: { $numberDouble: '1.5' } }, name: { $regex: 'a', $options: 'i', $nin: ['ab'] }, 'a.b': { $exists: true } },
      }),
    ).not.toThrow();
  });

  it('accepts whatever bson writes as Extended JSON, canonical or relaxed (property)', () => {
    const leaf = fc.oneof(
      fc.string(),
      fc.double(),
      fc.integer().map((n) => new Int32(n | 0)),
      fc.double().map((n) => new Double(n)),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => Long.fromBigInt(n)),
      fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }),
      fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => new ObjectId(bytes)),
      fc.tuple(fc.uint8Array({ maxLength: 16 }), fc.constantFrom(0, 4, 5, 0x80)).map(([bytes, subType]) => new Binary(bytes, subType)),
      fc.tuple(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff })).map(([t, i]) => new Timestamp({ t, i })),
      fc.constantFrom(new MaxKey(), new Code('f()'), new Code('g()', { k: 1 }), Decimal128.fromString('-0.00E+12'), new BSONRegExp('a/b', 'mi')),
      fc.constantFrom(null, true),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }).filter((key) => !key.startsWith('$') && !key.includes('\0')), tie('node'), { maxKeys: 4 })),
    })).node;
    fc.assert(
      fc.property(value, fc.boolean(), (generated, relaxed) => {
        assertWellFormedEjson(JSON.parse(EJSON.stringify({ v: generated }, { relaxed })));
      }),
      { numRuns: 300 },
    );
  });

  it('names where the malformed value sits', () => {
    expect(() => assertWellFormedEjson({ args: [{ field: { $numberInt: 'abc' } }] })).toThrow('invalid $numberInt at args[0].field:');
    expect(() => assertWellFormedEjson([[{ $binary: { base64: '!', subType: '00' } }]])).toThrow('invalid $binary at [0][0]:');
    expect(() => assertWellFormedEjson({ $date: 'garbage' })).toThrow('invalid $date at (root):');
  });

  it('accepts the edges of every range', () => {
    expect(() =>
      assertWellFormedEjson([
        { $numberInt: '-2147483648' },
        { $numberInt: '2147483647' },
        { $numberLong: '9223372036854775807' },
        { $numberLong: '-9223372036854775808' },
        { $numberDouble: '-Infinity' },
        { $numberDouble: 'NaN' },
        { $numberDouble: '1.5e-7' },
        { $date: { $numberLong: '8640000000000000' } },
        { $date: '2024-05-01T12:00:00Z' },
      ]),
    ).not.toThrow();
  });

  it(`refuses values nested deeper than ${MAX_EJSON_DEPTH} levels without a recursive walk, and accepts that depth`, () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(() => assertWellFormedEjson(deep)).toThrow(/nested deeper than/);
    let fits: unknown = 1;
    for (let i = 0; i < MAX_EJSON_DEPTH; i++) fits = [fits];
    expect(() => assertWellFormedEjson(fits)).not.toThrow();
    expect(() => assertWellFormedEjson([fits])).toThrow(/nested deeper than/);
  });
});
