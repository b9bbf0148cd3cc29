import { describe, expect, it } from 'vitest';
import { EjsonDocumentSchema, EjsonValueSchema } from './ejson.schema';

describe('EjsonValueSchema', () => {
  it('accepts plain JSON values and returns them unchanged', () => {
    const value = { a: [1, 'two', true, null, { $numberLong: '3' }], b: { c: { d: [] } }, e: -0.5 };
    const parsed = EjsonValueSchema.parse(value);
    expect(parsed).toBe(value);
    expect(EjsonValueSchema.parse(Object.assign(Object.create(null) as object, { x: 1 }))).toEqual({ x: 1 });
  });

  it.each([
    ['NaN', { a: [1, Number.NaN] }, ['a', 1]],
    ['Infinity', Number.POSITIVE_INFINITY, []],
    ['undefined inside an array', [undefined], [0]],
    ['a Date', { when: new Date(0) }, ['when']],
    ['a Map', { m: new Map() }, ['m']],
    ['a class instance', { x: new (class Point {})() }, ['x']],
    ['a function', { f: () => 1 }, ['f']],
    ['a bigint', { n: 1n }, ['n']],
  ])('refuses %s and names where', (_name, value, path) => {
    const result = EjsonValueSchema.safeParse(value);
    expect(result.success).toBe(false);
    if (!result.success) expect(result.error.issues[0]?.path).toEqual(path);
  });

  it('refuses a cycle or a hostile nesting instead of overflowing the stack', () => {
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(EjsonValueSchema.safeParse(cycle).success).toBe(false);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(EjsonValueSchema.safeParse(deep).success).toBe(false);
  });

  it('reports issues with their path inside a document', () => {
    const result = EjsonDocumentSchema.safeParse({ doc: { list: [1, Number.NaN] } });
    expect(result.success).toBe(false);
    if (!result.success) expect(result.error.issues[0]?.path).toEqual(['doc', 'list', 1]);
  });
});
