import { ClientApiError, ClientApiErrorCode } from '../client-api.error';

export interface RateLimitOptions {
  /** Failed logins allowed per key within the window. */
  maxFailures: number;
  windowMs: number;
}

/**
 * Slows password and key guessing: after `maxFailures` failed logins for one app, provider and identity
 * within `windowMs`, further attempts get 429 until the window passes. A success clears the count.
 * Per process: replicas each count on their own, which still bounds guessing per replica.
 */
export class LoginRateLimiter {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(private readonly options: RateLimitOptions = { maxFailures: 10, windowMs: 5 * 60_000 }) {}

  check(key: string, now = Date.now()): void {
    const entry = this.failures.get(key);
    if (!entry) return;
    if (now - entry.since > this.options.windowMs) {
      this.failures.delete(key);
      return;
    }
    if (entry.count >= this.options.maxFailures) {
      throw new ClientApiError(ClientApiErrorCode.TooManyRequests, 'too many failed login attempts; try again later');
    }
  }

  failed(key: string, now = Date.now()): void {
    const entry = this.failures.get(key);
    if (!entry || now - entry.since > this.options.windowMs) this.failures.set(key, { count: 1, since: now });
    else entry.count += 1;
    if (this.failures.size > 100_000) this.prune(now);
  }

  succeeded(key: string): void {
    this.failures.delete(key);
  }

  private prune(now: number): void {
    for (const [key, entry] of this.failures) if (now - entry.since > this.options.windowMs) this.failures.delete(key);
  }
}
