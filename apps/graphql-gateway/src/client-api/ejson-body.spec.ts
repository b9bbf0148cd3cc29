import { EJSON, Int32, Long, ObjectId } from 'bson';
import { ClientApiError } from './client-api.error';
import { fromEjson, parseJsonBody, ProtoKeyError, toCanonical } from './ejson-body';

describe('request and response bodies of the client API', () => {
  it('refuses __proto__ keys however the key is spelled (dropping one widened a filter to every document), and reads an empty body as none', () => {
    for (const text of ['{"__proto__": {"admin": true}, "a": 1}', '{"\\u005f_proto__": {"admin": true}, "a": 1}', '{"b": [{"_\\u005fproto__": 1, "a": 1}]}', '{"q": {"__pr\\u006fto__": {}}}']) {
      expect(() => parseJsonBody(text)).toThrow(ProtoKeyError);
      expect(({} as Record<string, unknown>)['admin']).toBeUndefined();
    }
    expect(parseJsonBody('{"a":"__proto__","b":"x\\u00e9"}')).toEqual({ a: '__proto__', b: 'xé' });
    expect(parseJsonBody('{"a":"x\\u00e9","b":[1,{"c":null}]}')).toEqual({ a: 'xé', b: [1, { c: null }] });
    expect(parseJsonBody('  ')).toBeUndefined();
    expect(() => parseJsonBody('{"a":')).toThrow(SyntaxError);
  });

  it('reads Extended JSON bodies as bson does, regex operators kept, and refuses malformed ones with a 400', () => {
    const body = { name: 'find', arguments: [{ query: { _id: { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, n: { $gt: { $numberLong: '5' } }, s: { $regex: 'a', $nin: ['abc'] } }, limit: { $numberInt: '20' } }] };
    const value = fromEjson(JSON.parse(JSON.stringify(body))) as { arguments: Array<{ query: Record<string, Record<string, unknown>>; limit: unknown }> };
    const [args] = value.arguments;
    expect(args?.query['_id']).toEqual(new ObjectId('5f0c5e0b9d1e8a2b3c4d5e6f'));
    expect(args?.query['n']?.['$gt']).toEqual(Long.fromNumber(5));
    expect(Object.keys(args?.query['s'] ?? {})).toEqual(['$regex', '$nin']);
    expect(args?.limit).toEqual(new Int32(20));
    expect(() => fromEjson({ a: { $binary: { base64: '***', subType: '00' } } })).toThrow(ClientApiError);
    expect(() => fromEjson({ a: { $oid: 'not an id' } })).toThrow(ClientApiError);
  });

  it('answers canonical Extended JSON exactly as bson writes it', () => {
    const documents = Array.from({ length: 3 }, (_, n) => ({ _id: new ObjectId(), n, half: n / 2, big: Long.fromString('9007199254740993'), at: new Date(n), tags: ['x', null], nested: { deep: new Int32(n) } }));
    expect(toCanonical(documents)).toEqual(EJSON.serialize(documents, { relaxed: false }));
    expect(toCanonical(Long.fromNumber(3))).toEqual({ $numberLong: '3' });
  });
});
