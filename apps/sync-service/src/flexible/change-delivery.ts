/**
 * The time from a change's commit to the last DOWNLOAD it caused, per change: what a flexible-sync user
 * waits for a write made elsewhere to reach every device it concerns (issue 17's goal), recorded as
 * `tessera.sync.flexible.fan_out` (milliseconds, from the change feed's wall time to the moment the last of
 * the sessions it was fanned out to handed its DOWNLOAD to the socket).
 */
import { type Histogram, metrics } from '@opentelemetry/api';

/** Bucket bounds in milliseconds: whole milliseconds below 10 (the wall time's resolution), coarser above. */
export const FAN_OUT_BUCKETS_MS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 30, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000];

let histogram: Histogram | undefined;

/** The instrument, made on first use (after main.ts registered the process's meter provider, if it does). */
function fanOutHistogram(): Histogram {
  histogram ??= metrics.getMeter('@tessera/sync-service').createHistogram('tessera.sync.flexible.fan_out', {
    description: "From a change's commit to the last flexible-sync DOWNLOAD it caused",
    unit: 'ms',
    advice: { explicitBucketBoundaries: FAN_OUT_BUCKETS_MS },
  });
  return histogram;
}

/** One change on its way to the sessions it was fanned out to; each reports once when it has handled it. */
export class ChangeDelivery {
  private lastSentMs = 0;

  constructor(
    readonly appId: string,
    /** The commit's wall time (epoch milliseconds). */
    readonly committedAtMs: number,
    private pending: number,
    private readonly record: (ms: number, appId: string) => void = (ms, appId) => fanOutHistogram().record(ms, { 'tessera.app_id': appId }),
  ) {}

  /** A session is done with the change: `sentAtMs` when it sent a DOWNLOAD for it, nothing when it had none to send. */
  done(sentAtMs?: number): void {
    if (this.pending <= 0) return;
    if (sentAtMs !== undefined && sentAtMs > this.lastSentMs) this.lastSentMs = sentAtMs;
    if (--this.pending === 0 && this.lastSentMs > 0) this.record(Math.max(0, this.lastSentMs - this.committedAtMs), this.appId);
  }
}
