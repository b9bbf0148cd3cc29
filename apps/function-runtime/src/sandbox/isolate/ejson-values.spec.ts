/**
 * The isolate's EJSON reading, run here on Node's bson (the sandbox runs the browser build of the same
 * version): `fromEjsonText` must give what bson's EJSON.parse gives, with BSON regexes JavaScript can hold
 * made RegExps, as the sandbox always gave its functions.
 */
import * as bson from 'bson';
import fc from 'fast-check';
import { fromEjsonText, toEjsonText } from './ejson-values';

(globalThis as { BSON?: unknown }).BSON = bson;

/** The reference: bson's reviver over the whole text, then BSON regexes to RegExp where JavaScript can hold them. */
function byBson(text: string): unknown {
  const toRegExp = (value: unknown): unknown => {
    if (value instanceof bson.BSONRegExp) return /^[imsu]*$/.test(value.options) ? new RegExp(value.pattern, value.options) : value;
    if (value === null || typeof value !== 'object' || '_bsontype' in value || value instanceof Date) return value;
    if (Array.isArray(value)) return value.map(toRegExp);
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) Object.defineProperty(out, key, { value: toRegExp(item), enumerable: true, writable: true, configurable: true });
    return out;
  };
  return toRegExp(bson.EJSON.parse(text));
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

  it('round-trips what it reads through toEjsonText', () => {
    const text = '{"_id":{"$oid":"5f0c5e0b9d1e8a2b3c4d5e6f"},"n":{"$numberInt":"3"},"x":{"$numberDouble":"2.5"},"d":{"$date":{"$numberLong":"5"}},"s":["t",true,null]}';
    expect(JSON.parse(toEjsonText(fromEjsonText(text)))).toStrictEqual(JSON.parse(text));
  });
});
