import { randomBytes } from 'node:crypto';
import { ClientApiError } from '../client-api.error';
import { bearerToken, issueToken, tokenAppId, verifyToken } from './tokens';

const subject = { appId: '65a000000000000000000001', domainId: '65a000000000000000000002', userId: '65a000000000000000000003', deviceId: '65a000000000000000000004', sessionId: '65a000000000000000000005' };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ClientApiError);
    expect((error as ClientApiError).httpStatus).toBe(401);
    return (error as ClientApiError).message;
  }
  throw new Error('expected a refusal');
}

describe('client tokens', () => {
  const key = randomBytes(32);

  it('issues access tokens with the claims the SDKs read and verifies them', () => {
    const token = issueToken('access', subject, key, 1800, { colour: 'blue' });
    const claims = verifyToken(token, 'access', key);
    expect(claims).toMatchObject({ sub: subject.userId, typ: 'access', baas_device_id: subject.deviceId, user_data: { colour: 'blue' } });
    expect(claims.exp - claims.iat).toBe(1800);
    expect(tokenAppId(token)).toBe(subject.appId);
  });

  it('refuses the wrong type, another key and an expired token with the messages clients react to', () => {
    const refresh = issueToken('refresh', subject, key, 60);
    expect(refusal(() => verifyToken(refresh, 'access', key))).toBe('invalid session');
    expect(refusal(() => verifyToken(refresh, 'refresh', randomBytes(32)))).toBe('invalid session');
    vi.useFakeTimers({ now: Date.now() - 3_600_000 });
    const expired = issueToken('access', subject, key, 1800);
    vi.useRealTimers();
    expect(refusal(() => verifyToken(expired, 'access', key))).toBe('invalid session: access token expired');
  });

  it('still checks the key and the expiry of a token it verified before', () => {
    const token = issueToken('access', subject, key, 60);
    expect(verifyToken(token, 'access', key).sub).toBe(subject.userId);
    expect(refusal(() => verifyToken(token, 'access', randomBytes(32)))).toBe('invalid session');
    expect(verifyToken(token, 'access', key).sub).toBe(subject.userId);
    expect(refusal(() => verifyToken(token, 'refresh', key))).toBe('invalid session');
    vi.useFakeTimers({ now: Date.now() + 61_000 });
    try {
      expect(refusal(() => verifyToken(token, 'access', key))).toBe('invalid session: access token expired');
    } finally {
      vi.useRealTimers();
    }
    const [head, , signature] = token.split('.') as [string, string, string];
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...verifyToken(issueToken('access', subject, key, 60), 'access', key), sub: 'someone-else' })).toString('base64url')}.${signature}`;
    expect(refusal(() => verifyToken(forged, 'access', key))).toBe('invalid session');
  });

  it('refuses a token naming no app', () => {
    expect(refusal(() => tokenAppId('a.b.c'))).toBe('invalid session');
    expect(refusal(() => tokenAppId(`x.${Buffer.from('{"baas_app_id":"../../etc"}').toString('base64url')}.y`))).toBe('invalid session');
  });

  it('reads bearer tokens case-insensitively', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer  abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});
