import { LoginRateLimiter, LoginThrottledError } from './login-throttle';
import { randomBytes, scryptSync } from 'node:crypto';
import { hashPassword, verifyPassword } from './passwords';

describe('LoginRateLimiter', () => {
  const failing = (limiter: LoginRateLimiter, key: string): Promise<unknown> =>
    limiter.attempt(key, () => Promise.reject(new Error('bad password')), () => true).catch((error: unknown) => error);

  it('refuses with 429 after the allowed failures, until the window passes', () => {
    const limiter = new LoginRateLimiter({ maxFailures: 2, windowMs: 1000 });
    limiter.begin('k', 0);
    limiter.end('k', 'failure', 0);
    limiter.begin('k', 10);
    limiter.end('k', 'failure', 10);
    expect(() => limiter.begin('k', 20)).toThrow(LoginThrottledError);
    limiter.begin('other', 20);
    limiter.begin('k', 1011);
  });

  it('forgets failures after a success', async () => {
    const limiter = new LoginRateLimiter({ maxFailures: 1, windowMs: 60_000 });
    await limiter.attempt('k', () => Promise.resolve('ok'), () => true);
    expect(await failing(limiter, 'k')).toBeInstanceOf(Error);
    expect(await failing(limiter, 'k')).toBeInstanceOf(LoginThrottledError);
  });

  it('counts attempts still running, so a concurrent flood is cut off at the limit', async () => {
    const limiter = new LoginRateLimiter({ maxFailures: 3, windowMs: 60_000 });
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => failing(limiter, 'k')));
    expect(outcomes.filter((outcome) => outcome instanceof LoginThrottledError)).toHaveLength(17);
    expect((await failing(limiter, 'k')) instanceof LoginThrottledError).toBe(true);
  });

  it('does not count errors that are not failed logins', async () => {
    const limiter = new LoginRateLimiter({ maxFailures: 1, windowMs: 60_000 });
    for (let i = 0; i < 3; i += 1) await limiter.attempt('k', () => Promise.reject(new Error('503')), () => false).catch(() => undefined);
    expect(await failing(limiter, 'k')).not.toBeInstanceOf(LoginThrottledError);
  });
});

describe('password hashing', () => {
  it('runs a bounded number of hashes at once and refuses the overflow with 429 instead of queueing it', async () => {
    // A cheap stored hash (the cost is read from it), so the test measures the bound, not scrypt's speed.
    const salt = randomBytes(16);
    const encoded = ['scrypt', 1024, 8, 1, salt.toString('base64'), scryptSync('right', salt, 32, { N: 1024, r: 8, p: 1 }).toString('base64')].join('$');
    const outcomes = await Promise.all(Array.from({ length: 60 }, () => verifyPassword('wrong', encoded).catch((error: unknown) => error)));
    // Two run, sixteen wait their turn, the rest are refused at once.
    expect(outcomes.filter((outcome) => outcome === false)).toHaveLength(18);
    expect(outcomes.filter((outcome) => outcome instanceof LoginThrottledError)).toHaveLength(42);
    expect(await verifyPassword('right', encoded)).toBe(true);
    expect(await verifyPassword('right', await hashPassword('right'))).toBe(true);
  }, 60_000);
});
