/**
 * Interleaved measurement for the benches that compare cases with the bare floor in the same run
 * (bench/http, bench/endpoints). A shared machine's speed swings within minutes, so a floor measured once
 * and cases measured one after another would give each case's ratio the luck of when it ran. Instead the
 * run is cut into short slices: in every round each case runs between two floor slices (floor, case,
 * floor, case, ..., floor; neighbouring cases share the floor slice between them, and so do consecutive
 * rounds), and a case's ratio in a round is its req/s over the mean of the two floor slices beside it. The
 * reported ratio is the median over rounds. Rounds alternate direction (forward, then backward), so every
 * case sits on average at the same place in a round and each neighbour runs before it as often as after.
 *
 * Pure: the schedule and the arithmetic on measured slices. The load itself is in http-load.ts.
 */
import { percentile } from './processes';

/** One slot of the schedule: a case's key, or `undefined` for a floor slice. */
export interface Slot {
  round: number;
  key: string | undefined;
}

/** What one slice measured. */
export interface Sample extends Slot {
  requests: number;
  seconds: number;
  cpuMs: number;
  /** CPU of the server's main thread (its event loop, where one process saturates first), in ms. */
  mainCpuMs?: number;
  errors: number;
  /** Latencies in ms, in no particular order. */
  latencies: number[];
}

/** The aggregate of several slices of one case (or of the floor). */
export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
  /** The main thread's share of cpuMsPerRequest, when the samples read it. */
  mainCpuMsPerRequest?: number;
  errors: number;
}

/**
 * Slices in run order: floor first, then each case followed by a floor slice; even rounds take the cases
 * in the given order, odd rounds in reverse. `rounds * keys.length` case slices, one more floor slice.
 */
export function interleavedSchedule(keys: readonly string[], rounds: number): Slot[] {
  const slots: Slot[] = [{ round: 0, key: undefined }];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? keys : [...keys].reverse();
    for (const key of order) slots.push({ round, key }, { round, key: undefined });
  }
  return slots;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const rpsOf = (sample: Sample): number => sample.requests / sample.seconds;

/**
 * Each case's ratio to the floor per round, in round order: its slice's req/s over the mean req/s of the
 * floor slices right before and after it in `samples` (run order, as interleavedSchedule gives).
 */
export function roundRatios(samples: readonly Sample[]): Map<string, number[]> {
  const ratios = new Map<string, number[]>();
  samples.forEach((sample, i) => {
    if (sample.key === undefined) return;
    const floors = [samples[i - 1], samples[i + 1]].filter((s): s is Sample => s?.key === undefined && s !== undefined);
    if (floors.length === 0) throw new Error(`slice ${i} (${sample.key}) has no floor slice beside it`);
    const floorRps = floors.reduce((sum, s) => sum + rpsOf(s), 0) / floors.length;
    const list = ratios.get(sample.key) ?? [];
    list.push(rpsOf(sample) / floorRps);
    ratios.set(sample.key, list);
  });
  return ratios;
}

/**
 * The median over rounds of case `a`'s req/s over case `b`'s in the same round (run them next to each
 * other in the case list, so that only a floor slice separates them in every round).
 */
export function pairRatio(samples: readonly Sample[], a: string, b: string): number {
  const perRound: number[] = [];
  for (const sample of samples) {
    if (sample.key !== a) continue;
    const other = samples.find((s) => s.key === b && s.round === sample.round);
    if (other) perRound.push(rpsOf(sample) / rpsOf(other));
  }
  return median(perRound);
}

/** req/s, p50, p99 and server CPU per request over all the slices of one case (key `undefined`: the floor). */
export function aggregate(name: string, samples: readonly Sample[], key: string | undefined): LoadResult {
  const mine = samples.filter((s) => s.key === key);
  const requests = mine.reduce((sum, s) => sum + s.requests, 0);
  const seconds = mine.reduce((sum, s) => sum + s.seconds, 0);
  const latencies = mine.flatMap((s) => s.latencies).sort((x, y) => x - y);
  return {
    name,
    rps: seconds ? requests / seconds : 0,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuMsPerRequest: requests ? mine.reduce((sum, s) => sum + s.cpuMs, 0) / requests : 0,
    ...(requests && mine.every((s) => s.mainCpuMs !== undefined) ? { mainCpuMsPerRequest: mine.reduce((sum, s) => sum + (s.mainCpuMs ?? 0), 0) / requests } : {}),
    errors: mine.reduce((sum, s) => sum + s.errors, 0),
  };
}
