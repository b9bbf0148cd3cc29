import { ClientApiError } from '../client-api.error';
import { LoginRateLimiter } from './login-rate-limiter';

describe('LoginRateLimiter', () => {
  it('refuses with 429 after the allowed failures, until the window passes', () => {
    const limiter = new LoginRateLimiter({ maxFailures: 2, windowMs: 1000 });
    limiter.check('k', 0);
    limiter.failed('k', 0);
    limiter.failed('k', 10);
    expect(() => limiter.check('k', 20)).toThrow(ClientApiError);
    limiter.check('other', 20);
    limiter.check('k', 1011);
  });

  it('forgets failures after a success', () => {
    const limiter = new LoginRateLimiter({ maxFailures: 1, windowMs: 1000 });
    limiter.failed('k', 0);
    limiter.succeeded('k');
    limiter.check('k', 1);
  });
});
