import { HttpResponseStateSchema } from '@tessera/contracts';
import fc from 'fast-check';
import { responseStateOf } from './http-response-state';

/** What the schema answers for the same input: the parsed state, or undefined when it refuses it. */
function bySchema(value: unknown): unknown {
  const parsed = HttpResponseStateSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

describe('the check of a reported response state', () => {
  it.each([
    [{ headers: {} }],
    [{ statusCode: 418, headers: { 'X-A': ['a', 'b'] }, bodyBase64: 'aGk=' }],
    [{ statusCode: 100, headers: {} }],
    [{ statusCode: 599, headers: {}, extra: true }],
  ])('accepts %j as the schema does, keeping only its fields', (state) => {
    expect(responseStateOf(state)).toEqual(bySchema(state));
    expect(responseStateOf(state)).toBeDefined();
  });

  it.each([
    [null],
    ['state'],
    [[]],
    [{}],
    [{ headers: [] }],
    [{ headers: null }],
    [{ headers: { 'X-A': 'a' } }],
    [{ headers: { 'X-A': ['a', 1] } }],
    [{ headers: {}, statusCode: 99 }],
    [{ headers: {}, statusCode: 600 }],
    [{ headers: {}, statusCode: 200.5 }],
    [{ headers: {}, statusCode: '200' }],
    [{ headers: {}, statusCode: null }],
    [{ headers: {}, bodyBase64: 5 }],
    [{ headers: {}, bodyBase64: null }],
  ])('refuses %j as the schema does', (state) => {
    expect(bySchema(state)).toBeUndefined();
    expect(responseStateOf(state)).toBeUndefined();
  });

  it('leaves out a __proto__ header as the schema does', () => {
    const state: unknown = JSON.parse('{"headers":{"__proto__":["x"],"X-A":["a"]}}');
    expect(responseStateOf(state)).toEqual(bySchema(state));
    expect(Object.getPrototypeOf(responseStateOf(state)?.headers)).toBe(Object.prototype);
  });

  it('answers as the schema on any JSON value shaped like a state', () => {
    const loose = fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 2 }));
    const headers = fc.oneof(fc.dictionary(fc.string(), fc.oneof(fc.array(fc.string()), fc.jsonValue({ maxDepth: 1 }))), fc.jsonValue({ maxDepth: 1 }));
    const status = fc.oneof(fc.integer({ min: 0, max: 700 }), fc.double(), loose);
    const state = fc.record({ statusCode: status, headers, bodyBase64: fc.oneof(fc.string(), loose) }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.oneof(state, fc.jsonValue({ maxDepth: 2 })), (value) => {
        // What the isolate sends is JSON text: the value as it arrives after JSON.parse.
        const wire: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
        expect(responseStateOf(wire)).toEqual(bySchema(wire));
      }),
    );
  });
});
