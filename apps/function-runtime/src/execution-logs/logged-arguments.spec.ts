import { EJSON } from 'bson';
import { loggedArgumentsEjson } from './logged-arguments';

const text = (args: unknown[]): string => EJSON.stringify(args, { relaxed: false });

describe('loggedArgumentsEjson', () => {
  const request = {
    query: { secret: 'query-secret', page: '2' },
    headers: { Authorization: ['Bearer a.b.c'], Apikey: ['key'], 'Api-Key': ['key2'], Email: ['ada@example.com'], Password: ['pw', 'pw2'], Jwttokenstring: ['jwt'], 'X-Custom': ['kept'] },
  };

  it('redacts credential headers (every value) and the secret query parameter of a call serving HTTP, keeping the rest', () => {
    const logged = EJSON.parse(loggedArgumentsEjson([request, 'second'], text([request, 'second']), true)) as unknown[];
    expect(logged).toEqual([
      {
        query: { secret: '<redacted>', page: '2' },
        headers: { Authorization: ['<redacted>'], Apikey: ['<redacted>'], 'Api-Key': ['<redacted>'], Email: ['<redacted>'], Password: ['<redacted>', '<redacted>'], Jwttokenstring: ['<redacted>'], 'X-Custom': ['kept'] },
      },
      'second',
    ]);
  });

  it('logs the arguments as they are for a call that serves no HTTP request, or whose request carries no credential', () => {
    const plain = text([request]);
    expect(loggedArgumentsEjson([request], plain, false)).toBe(plain);
    const clean = { query: { page: '1' }, headers: { 'X-Custom': ['kept'] } };
    expect(loggedArgumentsEjson([clean], text([clean]), true)).toBe(text([clean]));
    expect(loggedArgumentsEjson(['not a request'], text(['not a request']), true)).toBe(text(['not a request']));
  });
});
