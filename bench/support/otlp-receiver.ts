/**
 * A minimal OTLP/HTTP (JSON) receiver for benchmarks: the server under test exports its metrics here
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`), so that a bench reads what the server measured of itself, such as a
 * histogram of a latency whose ends are both inside the server.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

/** A cumulative histogram, summed over its attribute sets. */
export interface HistogramSnapshot {
  count: number;
  sum: number;
  bounds: number[];
  counts: number[];
}

interface OtlpHistogramPoint {
  count?: number | string;
  sum?: number;
  explicitBounds?: number[];
  bucketCounts?: Array<number | string>;
}

interface OtlpExport {
  resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: Array<{ name?: string; histogram?: { dataPoints?: OtlpHistogramPoint[] } }> }> }>;
}

export class OtlpMetricsReceiver {
  private constructor(
    private readonly server: Server,
    private readonly waiting: Array<(body: OtlpExport) => void>,
  ) {}

  static async start(): Promise<OtlpMetricsReceiver> {
    const waiting: Array<(body: OtlpExport) => void> = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        if (request.url !== '/v1/metrics') return;
        let body: OtlpExport;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        } catch {
          return;
        }
        for (const wake of waiting.splice(0)) wake(body);
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return new OtlpMetricsReceiver(server, waiting);
  }

  /** The base URL to give the server as OTEL_EXPORTER_OTLP_ENDPOINT. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Histograms `names` as one export, the first that arrives from now on, holds them (those it lacks are absent). */
  async nextHistograms(names: readonly string[], timeoutMs = 30_000): Promise<Map<string, HistogramSnapshot>> {
    const body = await new Promise<OtlpExport>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no OTLP metrics export within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push((received) => (clearTimeout(timer), done(received)));
    });
    const snapshots = new Map<string, HistogramSnapshot>();
    for (const resource of body.resourceMetrics ?? []) {
      for (const scope of resource.scopeMetrics ?? []) {
        for (const metric of scope.metrics ?? []) {
          if (!names.includes(metric.name ?? '')) continue;
          for (const point of metric.histogram?.dataPoints ?? []) {
            const counts = (point.bucketCounts ?? []).map(Number);
            let snapshot = snapshots.get(metric.name ?? '');
            if (!snapshot) snapshots.set(metric.name ?? '', (snapshot = { count: 0, sum: 0, bounds: point.explicitBounds ?? [], counts: counts.map(() => 0) }));
            snapshot.count += Number(point.count ?? 0);
            snapshot.sum += point.sum ?? 0;
            counts.forEach((n, i) => (snapshot.counts[i] = (snapshot.counts[i] ?? 0) + n));
          }
        }
      }
    }
    return snapshots;
  }

  close(): Promise<void> {
    return new Promise((done) => this.server.close(() => done()));
  }
}

/** What was recorded between two snapshots of one cumulative histogram. */
export function histogramDelta(before: HistogramSnapshot | undefined, after: HistogramSnapshot | undefined): HistogramSnapshot | undefined {
  if (!after) return undefined;
  if (!before) return after;
  return { count: after.count - before.count, sum: after.sum - before.sum, bounds: after.bounds, counts: after.counts.map((n, i) => n - (before.counts[i] ?? 0)) };
}

/**
 * The upper bound of the bucket holding the p-th percentile (Infinity past the last bound): the percentile
 * is at most this. Undefined for an empty histogram.
 */
export function histogramPercentileBound(histogram: HistogramSnapshot | undefined, p: number): number | undefined {
  if (!histogram || histogram.count <= 0) return undefined;
  const rank = Math.ceil((histogram.count * p) / 100);
  let seen = 0;
  for (let i = 0; i < histogram.counts.length; i++) {
    seen += histogram.counts[i] ?? 0;
    if (seen >= rank) return histogram.bounds[i] ?? Number.POSITIVE_INFINITY;
  }
  return Number.POSITIVE_INFINITY;
}
