/**
 * The isolate's EJSON reading, run here on Node's bson (the sandbox runs the browser build of the same
 * version): `fromEjsonText` must give what bson's EJSON.parse gives, with BSON regexes JavaScript can hold
 * made RegExps, as the sandbox always gave its functions.
 */
import * as bson from 'bson';
import fc from 'fast-check';
import { fromEjsonText, toEjsonText } from './ejson-values';

(globalThis as { BSON?: unknown }).BSON = bson;

/**
 * bson's relaxed reading with each `$numberLong` it rounded (no double holds it exactly) read as the Long
 * it is, in plain documents and arrays (`json` is the text's plain JSON; an object with a `$` key is read
 * by bson whole).
 */
function keepingLongs(relaxed: unknown, json: unknown): unknown {
  if (json === null || typeof json !== 'object' || relaxed === null || typeof relaxed !== 'object') {
    const keys = json !== null && typeof json === 'object' ? Object.keys(json) : [];
    if (typeof relaxed !== 'number' || keys.length !== 1 || keys[0] !== '$numberLong') return relaxed;
    const long = bson.EJSON.deserialize(json as bson.Document, { relaxed: false }) as bson.Long;
    return long.lessThanOrEqual(Number.MAX_SAFE_INTEGER) && long.greaterThanOrEqual(Number.MIN_SAFE_INTEGER) ? relaxed : long;
  }
  if (Array.isArray(relaxed) && Array.isArray(json)) return relaxed.map((item, i) => keepingLongs(item, json[i]));
  if ('_bsontype' in relaxed || relaxed instanceof Date || Object.keys(json).some((key) => key.startsWith('$'))) return relaxed;
  for (const key of Object.keys(relaxed)) {
    const value = keepingLongs((relaxed as Record<string, unknown>)[key], (json as Record<string, unknown>)[key]);
    Object.defineProperty(relaxed, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return relaxed;
}

/** The reference: bson's reviver over the whole text (Longs kept, see keepingLongs), then BSON regexes to RegExp where JavaScript can hold them. */
function byBson(text: string): unknown {
  const toRegExp = (value: unknown): unknown => {
    if (value instanceof bson.BSONRegExp) return /^[imsu]*$/.test(value.options) ? new RegExp(value.pattern, value.options) : value;
    if (value === null || typeof value !== 'object' || '_bsontype' in value || value instanceof Date) return value;
    if (Array.isArray(value)) return value.map(toRegExp);
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) Object.defineProperty(out, key, { value: toRegExp(item), enumerable: true, writable: true, configurable: true });
    return out;
  };
  return toRegExp(keepingLongs(bson.EJSON.parse(text), JSON.parse(text)));
}

describe('fromEjsonText (the sandbox side)', () => {
  it('reads the values bson reads, wrappers and operators alike', () => {
    const texts = [
      '{"a":1,"b":[{"$oid":"5f0c5e0b9d1e8a2b3c4d5e6f"},{"$numberInt":"7"},{"$numberLong":"9007199254740993"}],"c":{"d":{"$date":{"$numberLong":"5"}}}}',
      '[{"q":{"$gt":{"$numberDouble":"1.5"}},"r":{"$regex":"a","$options":"i"}},{"$undefined":true},{"$ref":"c","$id":1},null,"s",true]',
      '{"__proto__":{"x":{"$numberDecimal":"1.10"}},"t":{"$timestamp":{"t":1,"i":2}},"bin":{"$binary":{"base64":"aGk=","subType":"00"}},"e":{},"f":[]}',
      '{"re":{"$regularExpression":{"pattern":"^a.c$","options":"im"}},"pcre":{"$regularExpression":{"pattern":"a","options":"x"}},"in":[{"k":{"$regularExpression":{"pattern":"b","options":""}}}]}',
      '[{"$numberInt":"-7"},{"$numberInt":"2147483647"},{"$numberDouble":"-0.0"},{"$numberDouble":"NaN"},{"$numberDouble":"-Infinity"},{"$numberDouble":"1e400"},{"$numberDouble":"0.1"},{"$numberLong":"-5"},{"$oid":"000000000000000000000001"}]',
      '{"$oid":"5f0c5e0b9d1e8a2b3c4d5e6f","extra":1}',
      '[{"$numberInt":"12abc"},{"$numberDouble":"1.5x"},{"$numberInt":7},{"$oid":null}]',
      '{"deep":[[[{"k":[{"$minKey":1},{"$maxKey":1}]}]]]}',
      '"text"',
      '12.5',
      'null',
    ];
    for (const text of texts) expect(fromEjsonText(text), text).toStrictEqual(byBson(text));
  });

  it("refuses what bson refuses, with bson's error", () => {
    expect(() => fromEjsonText('{"a":{"b\\u0000":1}}')).toThrow(/null bytes/);
    expect(() => fromEjsonText('{"a":{"$oid":"not an id"}}')).toThrow(bson.BSONError);
  });

  it('reads nesting past the regex conversion depth as bson does', () => {
    let text = '{"$numberInt":"1"}';
    for (let i = 0; i < 250; i++) text = `{"a":[${text}]}`;
    expect(fromEjsonText(text)).toStrictEqual(byBson(text));
  });

  it('reads any value the sandbox writes as bson does (property)', () => {
    const leaf = fc.oneof(
      fc.string(),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.date({ noInvalidDate: true }).map((d) => d),
      fc.integer().map((n) => new bson.Int32(n | 0)),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => bson.Long.fromBigInt(n)),
      fc.double().map((n) => new bson.Double(n)),
      fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => new bson.ObjectId(bytes)),
      fc.uint8Array({ maxLength: 8 }).map((bytes) => new bson.Binary(bytes)),
      fc.constantFrom('a.c', '^x', 'y$').chain((pattern) => fc.constantFrom('', 'i', 'mx').map((options) => new bson.BSONRegExp(pattern, options))),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 4 })),
    })).node;
    fc.assert(
      fc.property(value, fc.boolean(), (generated, canonical) => {
        const text = bson.EJSON.stringify(generated, { relaxed: !canonical });
        expect(fromEjsonText(text)).toStrictEqual(byBson(text));
      }),
      { numRuns: 500 },
    );
  });

  it('gives a regex back with the pattern it came with, whatever RegExp#source makes of it', () => {
    const texts = [
      '{"empty":{"$regularExpression":{"pattern":"","options":""}}}',
      '{"path":{"$regularExpression":{"pattern":"^/usr/(local|opt)/","options":"i"}}}',
      '{"lines":[{"$regularExpression":{"pattern":"first\\nsecond","options":"ms"}}]}',
      '{"escaped":{"$regularExpression":{"pattern":"a\\/b","options":""}}}',
    ];
    for (const text of texts) expect(JSON.parse(toEjsonText(fromEjsonText(text))), text).toStrictEqual(JSON.parse(text));
    // A RegExp the function makes leaves as its source says.
    expect(JSON.parse(toEjsonText({ made: /x\/y/gi }))).toStrictEqual({ made: { $regularExpression: { pattern: 'x\\/y', options: 'i' } } });
  });

  it('keeps an Int64 no double holds exactly a Long, and gives it back as it came', () => {
    const text = '[{"$numberLong":"-9223372036854775808"},{"$numberLong":"9223372036854775807"},{"$numberLong":"-9007199254740993"},{"n":{"$numberLong":"4503599627370497"}}]';
    const read = fromEjsonText(text) as unknown[];
    expect(read[0]).toBeInstanceOf(bson.Long);
    expect(read[3]).toStrictEqual({ n: 4503599627370497 });
    expect(JSON.parse(toEjsonText(read))).toStrictEqual(JSON.parse(text));
  });

  it('writes an integer beyond 2^53 as the Int64 it is exactly, and 2^63 (no Int64) as a double', () => {
    // bson's EJSON writes Number#toString's digits: 2^60 as "1152921504606847000", -2^63 as "-9223372036854776000".
    const written = JSON.parse(toEjsonText([2 ** 63, { at: 2 ** 63 }, -(2 ** 63), 2 ** 60, -(2 ** 53 + 2), 2 ** 64])) as Array<Record<string, unknown>>;
    expect(Number((written[0] as { $numberDouble: string }).$numberDouble)).toBe(2 ** 63);
    expect(Number((written[1]['at'] as { $numberDouble: string }).$numberDouble)).toBe(2 ** 63);
    expect(written.slice(2, 5)).toStrictEqual([{ $numberLong: '-9223372036854775808' }, { $numberLong: '1152921504606846976' }, { $numberLong: '-9007199254740994' }]);
    expect(Number((written[5] as { $numberDouble: string }).$numberDouble)).toBe(2 ** 64);
  });

  it('round-trips what it reads through toEjsonText', () => {
    const text = '{"_id":{"$oid":"5f0c5e0b9d1e8a2b3c4d5e6f"},"n":{"$numberInt":"3"},"x":{"$numberDouble":"2.5"},"d":{"$date":{"$numberLong":"5"}},"s":["t",true,null]}';
    expect(JSON.parse(toEjsonText(fromEjsonText(text)))).toStrictEqual(JSON.parse(text));
  });
});
