import { Binary, BSONRegExp, Decimal128, EJSON, MaxKey, MinKey, ObjectId, Timestamp } from 'bson';
import fc from 'fast-check';
import type { JsonValue } from '@tessera/contracts';
import { canonicalHeaderName, canonicalHeaders, flattenedJson, requestArgument, resultBody } from './http-exchange';

/** App Services' rule, spelled as a pattern: the first letter and each letter after a dash upper-cased. */
const byPattern = (name: string): string => name.toLowerCase().replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());

function outcome(make: () => string): { text: string } | { failed: true } {
  try {
    return { text: make() };
  } catch {
    return { failed: true };
  }
}

const exchange = (rawQuery: string, rawHeaders: string[]) => ({ method: 'GET', path: '/r', rawQuery, headers: {}, rawHeaders, body: Buffer.alloc(0), remoteAddress: '127.0.0.1' });

describe('the request argument', () => {
  it.each([
    ['content-type', 'Content-Type'],
    ['X-CUSTOM-id', 'X-Custom-Id'],
    ['x--a', 'X--A'],
    ['-a', '-A'],
    ['1-b_c', '1-B_c'],
  ])('names the header %s %s', (name, canonical) => {
    expect(canonicalHeaderName(name)).toBe(canonical);
    expect(canonicalHeaderName(name)).toBe(canonical);
  });

  it('names every header as the pattern does', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' })), (name) => {
        expect(canonicalHeaderName(name)).toBe(byPattern(name));
      }),
    );
  });

  it('groups repeated headers under one canonical name, in the order sent', () => {
    expect(canonicalHeaders(['x-a', '1', 'Host', 'h', 'X-A', '2'])).toEqual({ 'X-A': ['1', '2'], Host: ['h'] });
  });

  it('keeps the first value of a repeated query parameter, and gives an empty query without one', () => {
    expect(requestArgument(exchange('a=1&b=2&a=3', []))).toEqual({ query: { a: '1', b: '2' }, headers: {} });
    expect(requestArgument(exchange('', ['Host', 'h']))).toEqual({ query: {}, headers: { Host: ['h'] } });
  });
});

describe('the JSON return type', () => {
  it.each<[JsonValue, string]>([
    [{ ok: true, list: ['a', null, { b: false }] }, '{"ok":true,"list":["a",null,{"b":false}]}'],
    ['text', '"text"'],
    [null, 'null'],
    [{ n: { $numberInt: '5' }, id: { $oid: '5f0000000000000000000000' } }, '{"n":5,"id":"5f0000000000000000000000"}'],
    [{ when: { $date: { $numberLong: '0' } } }, '{"when":"1970-01-01T00:00:00.000Z"}'],
  ])('writes %j as %s', (result, text) => {
    expect(resultBody(result, 'JSON').body.toString()).toBe(text);
  });

  it.each(['{"__proto__":{"a":"x"},"b":"y"}', '{"_bsontype":"ObjectId"}', '{"a\\u0000":"x"}'])('answers %s as the full conversion does', (text) => {
    const result = JSON.parse(text) as JsonValue;
    expect(outcome(() => resultBody(result, 'JSON').body.toString())).toEqual(outcome(() => flattenedJson(result)));
  });

  it('writes what the full conversion writes, for results with and without EJSON wrappers', () => {
    const key = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('$numberInt', '$oid', '$date', '__proto__', '_bsontype', 'a\u0000b', '$undefined', '$ref', '$id'));
    const value = fc.letrec<{ json: JsonValue }>((tie) => ({
      json: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.string(),
        fc.boolean(),
        fc.constant(null),
        fc.integer().map((n) => ({ $numberInt: String(n) })),
        fc.array(tie('json'), { maxLength: 4 }),
        fc.dictionary(key, tie('json'), { maxKeys: 4 }),
      ),
    })).json;
    fc.assert(
      fc.property(fc.oneof(value, fc.jsonValue() as fc.Arbitrary<JsonValue>), (generated) => {
        // Results arrive as JSON text: the value as JSON.parse makes it (`__proto__` an own key).
        const result = JSON.parse(JSON.stringify(generated)) as JsonValue;
        expect(outcome(() => resultBody(result, 'JSON').body.toString())).toEqual(outcome(() => flattenedJson(result)));
      }),
      { numRuns: 500 },
    );
  });
});

describe("an endpoint's JSON return type", () => {
  it("writes the types JSON has no equivalent of as App Services' data formats page shows them", () => {
    const result = EJSON.serialize(
      { binary: new Binary(Buffer.from('e67803a39588be8a95731a21e27d7391', 'base64'), 5), regex: new BSONRegExp('^H', 'i'), ts: new Timestamp({ t: 1565545664, i: 1 }), min: new MinKey(), max: new MaxKey(), decimal: Decimal128.fromString('9823.1297'), id: new ObjectId('5d505646cf6d4fe581014ab2'), date: new Date(1641954803067), double: 10.5, int: 10 },
      { relaxed: false },
    ) as JsonValue;
    expect(JSON.parse(resultBody(result, 'JSON').body.toString())).toEqual({
      binary: { Subtype: 5, Data: 'e67803a39588be8a95731a21e27d7391' },
      regex: { Pattern: '^H', Options: 'i' },
      ts: { T: 1565545664, I: 1 },
      min: {},
      max: {},
      decimal: '9823.1297',
      id: '5d505646cf6d4fe581014ab2',
      date: '2022-01-12T02:33:23.067Z',
      double: 10.5,
      int: 10,
    });
  });
});
