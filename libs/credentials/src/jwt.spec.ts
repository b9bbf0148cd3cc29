import { signJwt, verifyJwt } from './jwt';

describe('JWT', () => {
  const key = Buffer.alloc(32, 7);
  const now = 1_700_000_000;

  it('round-trips claims signed with the key', () => {
    const token = signJwt({ sub: 'u1', iat: now, exp: now + 60, user_data: { a: 1 } }, key);
    expect(token.split('.')).toHaveLength(3);
    expect(verifyJwt(token, key, now)).toEqual({ valid: true, claims: { sub: 'u1', iat: now, exp: now + 60, user_data: { a: 1 } } });
  });

  it('refuses expired, forged, alg none and malformed tokens', () => {
    const token = signJwt({ sub: 'u1', iat: now, exp: now + 60 }, key);
    expect(verifyJwt(token, key, now + 60)).toEqual({ valid: false, reason: 'expired' });
    expect(verifyJwt(token, Buffer.alloc(32, 8), now)).toEqual({ valid: false, reason: 'signature' });
    const [, payload] = token.split('.');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    expect(verifyJwt(none, key, now)).toEqual({ valid: false, reason: 'signature' });
    const tampered = token.replace(payload, Buffer.from(JSON.stringify({ sub: 'admin', iat: now, exp: now + 60 })).toString('base64url'));
    expect(verifyJwt(tampered, key, now)).toEqual({ valid: false, reason: 'signature' });
    expect(verifyJwt('not-a-token', key, now)).toEqual({ valid: false, reason: 'malformed' });
  });
});
