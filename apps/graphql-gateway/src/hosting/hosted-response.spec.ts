import { hostedReply, isNotModified, type HostedFile } from './hosted-response';

const file: HostedFile = { hash: 'abc', size: 10, lastModified: 1_700_000_000, attrs: [{ name: 'Content-Type', value: 'text/css' }, { name: 'Website-Redirect-Location', value: 'https://x' }] };
const lastModified = new Date(1_700_000_000_000).toUTCString();

describe('hostedReply', () => {
  it('sends the file with its attributes, ETag and Last-Modified, but not the redirect attribute', () => {
    const reply = hostedReply(file, 200, {});
    expect(reply).toMatchObject({ status: 200, withBody: true });
    expect(reply.headers).toMatchObject({ 'content-type': 'text/css', etag: '"abc"', 'last-modified': lastModified, 'content-length': '10' });
    expect(reply.headers).not.toHaveProperty('website-redirect-location');
  });

  it('answers 304 when If-None-Match names the ETag, weakly or in a list, or is *', () => {
    for (const value of ['"abc"', 'W/"abc"', '"x", "abc"', '*']) expect(isNotModified(file, { 'if-none-match': value }), value).toBe(true);
    expect(isNotModified(file, { 'if-none-match': '"abd"' })).toBe(false);
    expect(hostedReply(file, 200, { 'if-none-match': '"abc"' })).toMatchObject({ status: 304, withBody: false });
  });

  it('uses If-Modified-Since only without If-None-Match', () => {
    expect(isNotModified(file, { 'if-modified-since': lastModified })).toBe(true);
    expect(isNotModified(file, { 'if-modified-since': new Date(1_600_000_000_000).toUTCString() })).toBe(false);
    expect(isNotModified(file, { 'if-modified-since': 'not a date' })).toBe(false);
    expect(isNotModified(file, { 'if-none-match': '"zzz"', 'if-modified-since': lastModified })).toBe(false);
  });

  it('serves one byte range, refuses one past the end, and ignores a range when If-Range no longer matches', () => {
    expect(hostedReply(file, 200, { range: 'bytes=2-4' })).toMatchObject({ status: 206, range: { start: 2, end: 4 }, headers: { 'content-range': 'bytes 2-4/10', 'content-length': '3' } });
    expect(hostedReply(file, 200, { range: 'bytes=-3' })).toMatchObject({ status: 206, range: { start: 7, end: 9 } });
    expect(hostedReply(file, 200, { range: 'bytes=5-' })).toMatchObject({ status: 206, range: { start: 5, end: 9 } });
    expect(hostedReply(file, 200, { range: 'bytes=10-' })).toMatchObject({ status: 416, headers: { 'content-range': 'bytes */10' } });
    expect(hostedReply(file, 200, { range: 'bytes=0-1,3-4' })).toMatchObject({ status: 200 });
    expect(hostedReply(file, 200, { range: 'bytes=0-1', 'if-range': '"old"' })).toMatchObject({ status: 200 });
  });

  it('fails If-Match unless it names the ETag strongly (or is *), and If-Unmodified-Since only without If-Match, before any 304', () => {
    for (const value of ['"abc"', '"x", "abc"', '*']) expect(hostedReply(file, 200, { 'if-match': value }), value).toMatchObject({ status: 200, withBody: true });
    for (const value of ['W/"abc"', '"abd"']) expect(hostedReply(file, 200, { 'if-match': value }), value).toMatchObject({ status: 412, withBody: false, failedPrecondition: true });
    expect(hostedReply(file, 200, { 'if-unmodified-since': lastModified })).toMatchObject({ status: 200 });
    expect(hostedReply(file, 200, { 'if-unmodified-since': new Date(1_600_000_000_000).toUTCString() })).toMatchObject({ status: 412 });
    expect(hostedReply(file, 200, { 'if-unmodified-since': 'not a date' })).toMatchObject({ status: 200 });
    expect(hostedReply(file, 200, { 'if-match': '"abc"', 'if-unmodified-since': new Date(1_600_000_000_000).toUTCString() })).toMatchObject({ status: 200 });
    expect(hostedReply(file, 200, { 'if-match': '"abd"', 'if-none-match': '"abc"' })).toMatchObject({ status: 412 });
  });

  it('never answers 304 or 206 for the custom error page', () => {
    expect(hostedReply(file, 404, { 'if-none-match': '"abc"', range: 'bytes=0-1' })).toMatchObject({ status: 404, withBody: true });
  });
});
