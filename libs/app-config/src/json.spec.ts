import { jsonPath, parseJson, stringifyJson } from './json';

describe('parseJson', () => {
  it.each([
    ['{"a": 1,}', "invalid JSON at line 1, column 9: expected a property name in double quotes but found '}'"],
    ['{\n  "a": 1\n  "b": 2\n}', "invalid JSON at line 3, column 3: expected ',' or '}' but found '\"'"],
    ["{'a': 1}", "invalid JSON at line 1, column 2: expected a property name in double quotes but found '''"],
    ['[1, 2', "invalid JSON at line 1, column 6: expected ',' or ']' but found end of input"],
    ['{"a": tru}', "invalid JSON at line 1, column 7: unexpected 't'"],
    ['{"a": "x\\q"}', 'invalid JSON at line 1, column 10: invalid escape sequence'],
    ['{"a": 1} x', "invalid JSON at line 1, column 10: unexpected 'x' after the end of the document"],
    ['', 'invalid JSON at line 1, column 1: unexpected end of input'],
    ['{"a": 01}', "invalid JSON at line 1, column 8: expected ',' or '}' but found '1'"],
  ])('locates the error in %j', (text, message) => {
    expect(parseJson(text)).toEqual({ ok: false, message });
  });

  it('parses valid JSON', () => {
    expect(parseJson('{"a": [1, "b", null, true]}')).toEqual({ ok: true, value: { a: [1, 'b', null, true] } });
  });
});

describe('stringifyJson', () => {
  it('sorts keys at every depth, keeps array order, indents by two and ends with a newline', () => {
    expect(stringifyJson({ b: 1, a: [{ d: 1, c: 2 }, 3], u: undefined })).toBe(
      '{\n  "a": [\n    {\n      "c": 2,\n      "d": 1\n    },\n    3\n  ],\n  "b": 1\n}\n',
    );
  });

  it('keeps a "__proto__" member as a member', () => {
    const parsed = parseJson('{"__proto__": {"x": 1}, "a": 2}');
    expect(parsed.ok && stringifyJson(parsed.value)).toBe('{\n  "__proto__": {\n    "x": 1\n  },\n  "a": 2\n}\n');
  });
});

describe('jsonPath', () => {
  it('writes plain keys with dots, indexes with brackets and other keys quoted', () => {
    expect(jsonPath(jsonPath(jsonPath('', 'roles'), 0), 'name')).toBe('roles[0].name');
    expect(jsonPath('relationships', 'a.b')).toBe('relationships["a.b"]');
    expect(jsonPath('', 'anon-user')).toBe('anon-user');
  });
});
