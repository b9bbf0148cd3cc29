import { cloneValue, normalize } from './values';

describe('stored values', () => {
  it('keeps a __proto__ field as data and never as the prototype', () => {
    const input = JSON.parse('{"a": 1, "__proto__": {"polluted": true}}') as Record<string, unknown>;
    for (const copy of [normalize(input), cloneValue(input)] as Record<string, unknown>[]) {
      expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
      expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
      expect(Object.keys(copy)).toEqual(['a', '__proto__']);
      expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true });
    }
  });
});
