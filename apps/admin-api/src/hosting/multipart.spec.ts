import { multipartBoundary, parseMultipart } from './multipart';

describe('multipart upload bodies', () => {
  it('reads the boundary of multipart/mixed and multipart/form-data only', () => {
    expect(multipartBoundary('multipart/mixed; boundary=abc123')).toBe('abc123');
    expect(multipartBoundary('multipart/form-data; boundary="a b"')).toBe('a b');
    expect(multipartBoundary('application/json; boundary=abc')).toBeUndefined();
    expect(multipartBoundary('multipart/mixed')).toBeUndefined();
  });

  it('splits the parts with their names, binary content intact', () => {
    const file = Buffer.from([0, 13, 10, 45, 45, 255]);
    const body = Buffer.concat([Buffer.from('--b\r\nContent-Disposition: form-data; name="meta"\r\n\r\n{"path":"/x"}\r\n--b\r\nContent-Disposition: form-data; name="file"\r\nContent-Type: application/octet-stream\r\n\r\n'), file, Buffer.from('\r\n--b--\r\n')]);
    const parts = parseMultipart(body, 'b');
    expect(parts?.map((part) => part.name)).toEqual(['meta', 'file']);
    expect(parts?.[0]?.body.toString()).toBe('{"path":"/x"}');
    expect(parts?.[1]?.body).toEqual(file);
    expect(parts?.[1]?.headers['content-type']).toBe('application/octet-stream');
  });

  it('refuses a body without its closing delimiter or a part without headers end', () => {
    expect(parseMultipart(Buffer.from('--b\r\nContent-Disposition: form-data; name="meta"\r\n\r\n{}'), 'b')).toBeUndefined();
    expect(parseMultipart(Buffer.from('no delimiter at all'), 'b')).toBeUndefined();
    expect(parseMultipart(Buffer.from('--bX'), 'b')).toBeUndefined();
  });
});
