import { TokenBuckets } from './token-buckets';

describe('TokenBuckets', () => {
  it('lets a key make its burst at once, then refuses with the seconds until a token is back', () => {
    const buckets = new TokenBuckets({ ratePerSecond: 2, burst: 3 });
    expect([1, 2, 3].map(() => buckets.take('a', 0).ok)).toEqual([true, true, true]);
    expect(buckets.take('a', 0)).toEqual({ ok: false, retryAfterSeconds: 1 });
    // Half a second later one token has come back.
    expect(buckets.take('a', 500).ok).toBe(true);
    expect(buckets.take('a', 500).ok).toBe(false);
  });

  it('keeps each key on its own budget', () => {
    const buckets = new TokenBuckets({ ratePerSecond: 1, burst: 1 });
    expect(buckets.take('flooder', 0).ok).toBe(true);
    expect(buckets.take('flooder', 0).ok).toBe(false);
    expect(buckets.take('quiet', 0).ok).toBe(true);
  });

  it('never holds more than the burst, however long a key was idle', () => {
    const buckets = new TokenBuckets({ ratePerSecond: 100, burst: 2 });
    buckets.take('a', 0);
    const later = 3_600_000;
    expect([1, 2, 3].map(() => buckets.take('a', later).ok)).toEqual([true, true, false]);
  });

  it('says how long to wait at a slow rate', () => {
    const buckets = new TokenBuckets({ ratePerSecond: 0.1, burst: 1 });
    buckets.take('a', 0);
    expect(buckets.take('a', 0)).toEqual({ ok: false, retryAfterSeconds: 10 });
  });

  it('admits everything when the rate is 0 (off) and keeps no buckets', () => {
    const buckets = new TokenBuckets({ ratePerSecond: 0, burst: 0 });
    for (let i = 0; i < 100; i++) expect(buckets.take('a', 0).ok).toBe(true);
    expect(buckets.size).toBe(0);
  });

  it('drops refilled buckets when the key count reaches its bound, so random keys cannot grow memory', () => {
    const buckets = new TokenBuckets({ ratePerSecond: 10, burst: 1 }, 100);
    for (let i = 0; i < 1_000; i++) buckets.take(`key-${i}`, i * 1_000);
    expect(buckets.size).toBeLessThanOrEqual(100);
    // A bucket still being drained is kept.
    buckets.take('busy', 2_000_000);
    for (let i = 0; i < 200; i++) buckets.take(`late-${i}`, 2_000_000);
    expect(buckets.take('busy', 2_000_000).ok).toBe(false);
  });
});
