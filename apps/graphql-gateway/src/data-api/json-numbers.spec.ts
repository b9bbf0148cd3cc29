import { describe, expect, it } from 'vitest';
import { parseJsonKeepingDoubles } from './json-numbers';

describe('parseJsonKeepingDoubles', () => {
  it('reads an integer written with a fraction or an exponent as a double, everything else as JSON.parse does', () => {
    const text = '{"a": 1.0, "b": 1, "c": 2.5, "d": -3e2, "e": [0.0, -0.0, 1E21, 7], "f": {"g": "1.0 in a string", "h": true, "i": null}, "j": 12.50}';
    expect(parseJsonKeepingDoubles(text)).toEqual({
      a: { $numberDouble: '1.0' },
      b: 1,
      c: 2.5,
      d: { $numberDouble: '-300.0' },
      e: [{ $numberDouble: '0.0' }, { $numberDouble: '-0.0' }, { $numberDouble: '1e+21' }, 7],
      f: { g: '1.0 in a string', h: true, i: null },
      j: 12.5,
    });
  });

  it('gives what JSON.parse gives for a text without such numbers, escapes and duplicate keys included', () => {
    for (const text of ['{"a":"x\\"y\\u00e9\\ud83d\\ude00","b":[1,2,{"c":-0}],"b":3}', '[]', '"s"', ' 5 ', '{"x": "1e5"}', '{"s": "a\\\\", "t": 2.5e-1}']) {
      expect(parseJsonKeepingDoubles(text)).toEqual(JSON.parse(text));
    }
  });

  it('drops __proto__ keys rather than setting a prototype', () => {
    const parsed = parseJsonKeepingDoubles('{"__proto__": {"polluted": 1.0}, "ok": 1.5}') as Record<string, unknown>;
    expect(parsed).toEqual({ ok: 1.5 });
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('refuses what JSON.parse refuses', () => {
    for (const text of ['{"a": 1.}', '{"a": 01.0}', '{"a": 1.0,}', '[1.0', '{"a": 1.0} x', '{a: 1.0}', '{"a": .5}', '{"a": NaN, "b": 1.0}']) {
      expect(() => parseJsonKeepingDoubles(text), text).toThrow(SyntaxError);
    }
  });

  it('refuses nesting deeper than its limit instead of exhausting the stack', () => {
    const deep = '['.repeat(5_000) + '1.0' + ']'.repeat(5_000);
    expect(() => parseJsonKeepingDoubles(deep)).toThrow(SyntaxError);
  });
});
