/**
 * Token buckets by key (one per app): each key may take `burst` requests at once and `ratePerSecond` on
 * average. Pure and synchronous (the clock is passed in), so the edge decides on a request without waiting
 * and tests need no timers. Memory is bounded: buckets that have refilled completely are dropped once the
 * map holds `maxKeys` of them, since a full bucket is the same as a new one.
 */
export interface TokenBucketLimits {
  /** Sustained requests per second per key; 0 turns limiting off. */
  ratePerSecond: number;
  /** Requests a key may make at once after being idle (the bucket's size). */
  burst: number;
}

export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limits: TokenBucketLimits,
    private readonly maxKeys = 10_000,
  ) {}

  get enabled(): boolean {
    return this.limits.ratePerSecond > 0;
  }

  /** Takes one token of `key`'s bucket, or says how many whole seconds until one is there. */
  take(key: string, nowMs: number): TakeResult {
    if (!this.enabled) return { ok: true };
    const { ratePerSecond, burst } = this.limits;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.dropFull(nowMs);
      bucket = { tokens: burst, updatedMs: nowMs };
      this.buckets.set(key, bucket);
    } else {
      const elapsed = Math.max(0, nowMs - bucket.updatedMs);
      bucket.tokens = Math.min(burst, bucket.tokens + (elapsed * ratePerSecond) / 1000);
      bucket.updatedMs = nowMs;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond)) };
  }

  /** Buckets held now (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  private dropFull(nowMs: number): void {
    const { ratePerSecond, burst } = this.limits;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((nowMs - bucket.updatedMs) * ratePerSecond) / 1000 >= burst) this.buckets.delete(key);
    }
  }
}
