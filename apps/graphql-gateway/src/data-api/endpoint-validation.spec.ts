import { createHmac } from 'node:crypto';
import { ENDPOINT_SIGNATURE, requestProofRefusal, WEBHOOK_SIGNATURE } from './endpoint-validation';

const secret = 's3cret';
const body = Buffer.from('{"event":"paid"}');
const request = (rawQuery: string, headers: Record<string, string> = {}) => ({ rawQuery, headers, body });
const hmac = (algorithm: 'sha256' | 'sha1', key: string) => createHmac(algorithm, key).update(body).digest('hex');

describe('requestProofRefusal', () => {
  it('passes every request without validation, and refuses every request when the secret is missing', () => {
    expect(requestProofRefusal('NO_VALIDATION', undefined, request(''), ENDPOINT_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal(undefined, undefined, request(''), ENDPOINT_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal('SECRET_AS_QUERY_PARAM', undefined, request('secret='), ENDPOINT_SIGNATURE)).toMatch(/not set/);
    expect(requestProofRefusal('VERIFY_PAYLOAD', '', request(''), ENDPOINT_SIGNATURE)).toMatch(/not set/);
  });

  it('compares the first secret query parameter, decoded', () => {
    expect(requestProofRefusal('SECRET_AS_QUERY_PARAM', 'a b&c', request('secret=a%20b%26c&secret=x'), ENDPOINT_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal('SECRET_AS_QUERY_PARAM', secret, request(`secret=wrong&secret=${secret}`), ENDPOINT_SIGNATURE)).toMatch(/invalid secret/);
    expect(requestProofRefusal('SECRET_AS_QUERY_PARAM', secret, request(''), ENDPOINT_SIGNATURE)).toMatch(/invalid secret/);
    expect(requestProofRefusal('SECRET_AS_QUERY_PARAM', secret, request(`secret=${secret}x`), ENDPOINT_SIGNATURE)).toMatch(/invalid secret/);
  });

  it('checks the Endpoint-Signature HMAC-SHA256 of the raw body (hex, either case)', () => {
    // The example of App Services' custom endpoint documentation: this secret, this body, this signature.
    const documented = { rawQuery: '', body: Buffer.from('{ "message": "Hello!" }'), headers: { 'endpoint-signature': 'sha256=d4f0537db4e230d7a6028a6f7c3bb1b57c9d16f39176d78697e559ac333e0b36' } };
    expect(requestProofRefusal('VERIFY_PAYLOAD', 'Super5ecr3tPa55w0rd', documented, ENDPOINT_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal('VERIFY_PAYLOAD', 'Super5ecr3tPa55w0rd', { ...documented, body: Buffer.from('{"message": "Hello!"}') }, ENDPOINT_SIGNATURE)).toMatch(/does not match/);
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'endpoint-signature': `sha256=${hmac('sha256', secret)}` }), ENDPOINT_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'endpoint-signature': `SHA256=${hmac('sha256', secret).toUpperCase()}` }), ENDPOINT_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'endpoint-signature': `sha256=${hmac('sha256', 'other')}` }), ENDPOINT_SIGNATURE)).toMatch(/does not match/);
    // An HMAC-SHA1, which a webhook takes, is not an endpoint's.
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'endpoint-signature': `sha1=${hmac('sha1', secret)}` }), ENDPOINT_SIGNATURE)).toMatch(/must be sha256=/);
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request(`secret=${secret}`), ENDPOINT_SIGNATURE)).toMatch(/must be sha256=/);
  });

  it("checks the X-Hook-Signature HMAC-SHA256 of incoming webhooks (App Services' documented example), and an HMAC-SHA1", () => {
    // The example of App Services' webhook documentation: secret 12345, this body, this signature.
    const documented = { rawQuery: '', body: Buffer.from('{"message":"MESSAGE"}'), headers: { 'x-hook-signature': 'sha256=828ee180512eaf8a6229eda7eea72323f68e9c0f0093b11a578b0544c5777862' } };
    expect(requestProofRefusal('VERIFY_PAYLOAD', '12345', documented, WEBHOOK_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal('VERIFY_PAYLOAD', '12346', documented, WEBHOOK_SIGNATURE)).toMatch(/does not match/);
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'x-hook-signature': `sha256=${hmac('sha256', secret)}` }), WEBHOOK_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'x-hook-signature': `sha1=${hmac('sha1', secret)}` }), WEBHOOK_SIGNATURE)).toBeUndefined();
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'x-hook-signature': `sha1=${hmac('sha1', 'other')}` }), WEBHOOK_SIGNATURE)).toMatch(/does not match/);
    // Each digest is checked with the algorithm its prefix names.
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'x-hook-signature': `sha1=${hmac('sha256', secret)}` }), WEBHOOK_SIGNATURE)).toMatch(/does not match/);
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'x-hook-signature': hmac('sha256', secret) }), WEBHOOK_SIGNATURE)).toMatch(/must be sha256=/);
    expect(requestProofRefusal('VERIFY_PAYLOAD', secret, request('', { 'endpoint-signature': `sha256=${hmac('sha256', secret)}` }), WEBHOOK_SIGNATURE)).toMatch(/x-hook-signature/);
  });

  it('refuses a validation method it does not know', () => {
    expect(requestProofRefusal('SOMETHING_ELSE', secret, request(`secret=${secret}`), ENDPOINT_SIGNATURE)).toMatch(/unknown validation method/);
  });
});
