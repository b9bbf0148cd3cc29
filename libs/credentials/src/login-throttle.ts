import { TesseraError } from '@tessera/domain';

/** 429 `TooManyRequests`: a login refused before its credentials were checked. */
export class LoginThrottledError extends TesseraError {
  readonly errorCode = 'TooManyRequests';
  readonly httpStatus = 429;
}

export interface LoginRateLimitOptions {
  /** Failed (or still running) logins allowed per key within the window. */
  maxFailures: number;
  windowMs: number;
}

/**
 * Slows password and key guessing, for the client API's providers and the admin API alike: once
 * `maxFailures` logins for one key (app, provider and identity; or the admin username; or a client address)
 * failed within `windowMs`, or are still being checked, further attempts get 429 until the window passes.
 * Counting the attempts in flight is what makes a concurrent flood hit the limit: a check of 200 parallel
 * attempts would otherwise see no failure yet. A success clears the count. Per process: replicas each count
 * on their own, which still bounds guessing per replica.
 */
export class LoginRateLimiter {
  private readonly entries = new Map<string, { failures: number; pending: number; since: number }>();

  constructor(private readonly options: LoginRateLimitOptions = { maxFailures: 10, windowMs: 5 * 60_000 }) {}

  /** Runs `check` as one attempt for `key`; `isFailure` tells which errors count as a failed login. */
  async attempt<T>(key: string, check: () => Promise<T>, isFailure: (error: unknown) => boolean): Promise<T> {
    this.begin(key);
    let outcome: 'success' | 'failure' | 'other' = 'other';
    try {
      const result = await check();
      outcome = 'success';
      return result;
    } catch (error) {
      if (isFailure(error)) outcome = 'failure';
      throw error;
    } finally {
      this.end(key, outcome);
    }
  }

  /** Counts an attempt as running; throws LoginThrottledError when the key has no attempts left. */
  begin(key: string, now = Date.now()): void {
    let entry = this.entries.get(key);
    if (entry && entry.pending === 0 && now - entry.since > this.options.windowMs) {
      this.entries.delete(key);
      entry = undefined;
    }
    if (entry && entry.failures + entry.pending >= this.options.maxFailures) {
      throw new LoginThrottledError('too many failed login attempts; try again later');
    }
    if (entry) entry.pending += 1;
    else this.entries.set(key, { failures: 0, pending: 1, since: now });
    if (this.entries.size > 100_000) this.prune(now);
  }

  /** Ends an attempt `begin` counted: a failure stays counted for the window, a success clears the key. */
  end(key: string, outcome: 'success' | 'failure' | 'other', now = Date.now()): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.pending = Math.max(0, entry.pending - 1);
    if (outcome === 'success') {
      if (entry.pending === 0) this.entries.delete(key);
      else entry.failures = 0;
      return;
    }
    if (outcome === 'failure') {
      if (now - entry.since > this.options.windowMs) {
        entry.failures = 0;
        entry.since = now;
      }
      entry.failures += 1;
    }
    if (entry.failures === 0 && entry.pending === 0) this.entries.delete(key);
  }

  private prune(now: number): void {
    for (const [key, entry] of this.entries) if (entry.pending === 0 && now - entry.since > this.options.windowMs) this.entries.delete(key);
  }
}
