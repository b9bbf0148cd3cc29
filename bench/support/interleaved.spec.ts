import { aggregate, interleavedSchedule, median, pairRatio, roundRatios, type Sample } from './interleaved';

/** A one-second slice of `rps` requests per second, each answered in `latency` ms. */
function sample(round: number, key: string | undefined, rps: number, latency = 1, cpuMs = 0): Sample {
  return { round, key, requests: rps, seconds: 1, cpuMs, errors: 0, latencies: Array.from({ length: rps }, () => latency) };
}

describe('interleaved bench measurement', () => {
  it('puts every case between two floor slices and alternates the direction of rounds', () => {
    const slots = interleavedSchedule(['a', 'b', 'c'], 2).map((slot) => `${slot.round}:${slot.key ?? 'F'}`);
    expect(slots).toEqual(['0:F', '0:a', '0:F', '0:b', '0:F', '0:c', '0:F', '1:c', '1:F', '1:b', '1:F', '1:a', '1:F']);
  });

  it('divides a case by the mean of the floor slices beside it, not by a floor measured elsewhere', () => {
    // The machine halves its speed during round 1's case: that case is divided by the floor slices beside it
    // (1000 and 500 req/s), where the first floor alone would have given 0.1.
    const halved = roundRatios([sample(0, undefined, 1000), sample(0, 'a', 200), sample(0, undefined, 1000), sample(1, 'a', 100), sample(1, undefined, 500)]);
    expect(halved.get('a')).toEqual([0.2, 100 / 750]);
    const steady = roundRatios([sample(0, undefined, 500), sample(0, 'a', 100), sample(0, undefined, 500), sample(1, 'a', 100), sample(1, undefined, 500)]);
    expect(steady.get('a')).toEqual([0.2, 0.2]);
  });

  it('reports the median over rounds, so one slowed round does not move it', () => {
    expect(median([0.2, 0.21, 0.05])).toBe(0.2);
    expect(median([0.1, 0.3, 0.2, 0.4])).toBeCloseTo(0.25);
    expect(median([])).toBeNaN();
  });

  it('compares two cases within each round', () => {
    const samples = [
      sample(0, undefined, 1000),
      sample(0, 'endpoint', 400),
      sample(0, undefined, 1000),
      sample(0, 'call', 200),
      sample(0, undefined, 500),
      sample(1, 'call', 100),
      sample(1, undefined, 500),
      sample(1, 'endpoint', 150),
      sample(1, undefined, 500),
    ];
    expect(pairRatio(samples, 'endpoint', 'call')).toBeCloseTo((2 + 1.5) / 2);
  });

  it('aggregates req/s, percentiles and CPU per request over all slices of a case', () => {
    const samples = [sample(0, undefined, 1000), sample(0, 'a', 100, 2, 50), sample(0, undefined, 1000), sample(1, 'a', 300, 10, 450), sample(1, undefined, 1000)];
    const result = aggregate('case a', samples, 'a');
    expect(result).toEqual({ name: 'case a', rps: 200, p50: 10, p99: 10, cpuMsPerRequest: 500 / 400, errors: 0 });
    expect(aggregate('floor', samples, undefined).rps).toBe(1000);
  });
});
