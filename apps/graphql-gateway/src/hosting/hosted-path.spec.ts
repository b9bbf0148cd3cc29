import { encodeResourcePath, hostedPath } from './hosted-path';

describe('hostedPath', () => {
  it('decodes a resource path once and tells a directory by its trailing slash', () => {
    expect(hostedPath('/docs/a%20b.html')).toEqual({ ok: true, path: '/docs/a b.html', directory: false });
    expect(hostedPath('/docs/')).toEqual({ ok: true, path: '/docs', directory: true });
    expect(hostedPath('')).toEqual({ ok: true, path: '/', directory: true });
    expect(hostedPath('/%25zz.txt')).toEqual({ ok: true, path: '/%zz.txt', directory: false });
  });

  it.each([
    ['/../x'],
    ['/a/./b'],
    ['/%2e%2e/x'],
    ['/%2E%2e/x'],
    ['/a%2f..%2fb'],
    ['/a%5cb'],
    ['/a\\b'],
    ['/a%00b'],
    ['/a\u0000b'],
    ['/a//b'],
    ['/%zz'],
    ['relative'],
  ])('refuses %j', (raw) => {
    expect(hostedPath(raw)).toEqual({ ok: false });
  });

  it('encodes a path back for a Location header', () => {
    expect(encodeResourcePath('/docs/a b?.html')).toBe('/docs/a%20b%3F.html');
  });
});
