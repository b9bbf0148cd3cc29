/**
 * How long a change made elsewhere takes to reach the devices it concerns, per change, as two histograms:
 * - `tessera.sync.flexible.fan_out` (milliseconds): from the change feed's wall time (the write's commit) to
 *   the moment the last of the sessions it was fanned out to handed its DOWNLOAD to the socket: what a
 *   flexible-sync user waits for a write made elsewhere to reach every device (issue 17's goal). It includes
 *   the store's durable write, since a change reaches the feed once it is durable. Whole milliseconds: the
 *   commit's wall time has no finer resolution.
 * - `tessera.sync.flexible.from_feed` (milliseconds): from the change publisher reading the change from the
 *   feed (it was durable then) to that last DOWNLOAD: the same delay without the storage device's sync, the
 *   part Tessera spends (the durable stream, matching, reading, sending). Sub-millisecond: both ends are
 *   read as `performance.timeOrigin + performance.now()` (across machines, their clocks' skew adds).
 * - `tessera.sync.flexible.delivery` (milliseconds, monotonic clock): from the change reaching the sync
 *   service to that last DOWNLOAD: matching it against the sessions' subscriptions, reading the document and
 *   sending it, the part sync itself spends.
 */
import { type Histogram, metrics } from '@opentelemetry/api';

/** Bucket bounds in milliseconds: whole milliseconds below 10 (the wall time's resolution), coarser above. */
const FAN_OUT_BUCKETS_MS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 30, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000];
/** Finer below 5 ms: a monotonic clock measures this one. */
const DELIVERY_BUCKETS_MS = [0.1, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 10, 15, 20, 50, 100, 250, 1_000, 5_000];

let histograms: { fanOut: Histogram; fromFeed: Histogram; delivery: Histogram } | undefined;

/** The instruments, made on first use (after main.ts registered the process's meter provider, if it does). */
function changeHistograms(): { fanOut: Histogram; fromFeed: Histogram; delivery: Histogram } {
  if (!histograms) {
    const meter = metrics.getMeter('@tessera/sync-service');
    histograms = {
      fanOut: meter.createHistogram('tessera.sync.flexible.fan_out', {
        description: "From a change's commit to the last flexible-sync DOWNLOAD it caused",
        unit: 'ms',
        advice: { explicitBucketBoundaries: FAN_OUT_BUCKETS_MS },
      }),
      fromFeed: meter.createHistogram('tessera.sync.flexible.from_feed', {
        description: 'From the change publisher reading a durable change from the feed to the last flexible-sync DOWNLOAD it caused',
        unit: 'ms',
        advice: { explicitBucketBoundaries: DELIVERY_BUCKETS_MS },
      }),
      delivery: meter.createHistogram('tessera.sync.flexible.delivery', {
        description: 'From a change reaching the sync service to the last flexible-sync DOWNLOAD it caused (matching and fan-out)',
        unit: 'ms',
        advice: { explicitBucketBoundaries: DELIVERY_BUCKETS_MS },
      }),
    };
  }
  return histograms;
}

/** When a change arrived, or a DOWNLOAD went out: the wall clock (to compare with a commit) and the monotonic one. */
export interface ChangeInstant {
  wallMs: number;
  monoMs: number;
}

export function changeInstant(): ChangeInstant {
  return { wallMs: Date.now(), monoMs: performance.now() };
}

/** A change of the change feed: its commit's wall time, and when it reached this service. */
export interface ChangeTiming {
  /** The commit's wall time (epoch milliseconds). */
  committedAtMs: number;
  /** When the change publisher read it from the feed (epoch milliseconds with their fraction), when it says. */
  readAtMs?: number;
  arrived: ChangeInstant;
}

/** What one change's delivery measured: from its commit (wall clock), from its reading off the feed, and from its arrival here (monotonic). */
export interface DeliveryTimes {
  fromCommitMs: number;
  /** Absent when the change did not say when it was read. */
  fromFeedMs?: number;
  fromArrivalMs: number;
}

function recordTimes(times: DeliveryTimes, appId: string): void {
  const { fanOut, fromFeed, delivery } = changeHistograms();
  const attributes = { 'tessera.app_id': appId };
  fanOut.record(times.fromCommitMs, attributes);
  if (times.fromFeedMs !== undefined) fromFeed.record(times.fromFeedMs, attributes);
  delivery.record(times.fromArrivalMs, attributes);
}

/** One change on its way to the sessions it was fanned out to; each reports once when it has handled it. */
export class ChangeDelivery {
  private lastSent: ChangeInstant | undefined;

  constructor(
    readonly appId: string,
    readonly timing: ChangeTiming,
    private pending: number,
    private readonly record: (times: DeliveryTimes, appId: string) => void = recordTimes,
  ) {}

  /** A session is done with the change: `sent` when it sent a DOWNLOAD for it, nothing when it had none to send. */
  done(sent?: ChangeInstant): void {
    if (this.pending <= 0) return;
    if (sent !== undefined && (this.lastSent === undefined || sent.monoMs > this.lastSent.monoMs)) this.lastSent = sent;
    if (--this.pending === 0 && this.lastSent) {
      const { committedAtMs, readAtMs, arrived } = this.timing;
      const fromFeedMs = readAtMs === undefined ? undefined : Math.max(0, performance.timeOrigin + this.lastSent.monoMs - readAtMs);
      this.record({ fromCommitMs: Math.max(0, this.lastSent.wallMs - committedAtMs), ...(fromFeedMs !== undefined ? { fromFeedMs } : {}), fromArrivalMs: Math.max(0, this.lastSent.monoMs - arrived.monoMs) }, this.appId);
    }
  }
}
