import { createServer, type Server } from 'node:http';

export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  /** String, integer and boolean attributes. */
  attributes: Record<string, string | number | boolean>;
}

interface OtlpAttribute {
  key: string;
  value?: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: { stringValue?: string } }[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; attributes?: OtlpAttribute[] }[] }[];
  }[];
}

/** A local OTLP/HTTP collector: accepts `POST /v1/traces` (JSON encoding) and keeps every span. */
export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];

  private readonly server: Server;
  url = '';

  private constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/v1/traces' && request.headers['content-type']?.startsWith('application/json')) {
          this.accept(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJson);
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else {
          response.writeHead(415).end();
        }
      });
    });
  }

  static async start(): Promise<OtlpCollector> {
    const collector = new OtlpCollector();
    await new Promise<void>((resolve) => collector.server.listen(0, '127.0.0.1', resolve));
    const address = collector.server.address();
    collector.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return collector;
  }

  trace(traceId: string): CollectedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(body: OtlpJson): void {
    for (const resource of body.resourceSpans ?? []) {
      const service = resource.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value?.stringValue ?? '';
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({ service, traceId: hex(span.traceId), spanId: hex(span.spanId), parentSpanId: span.parentSpanId ? hex(span.parentSpanId) : undefined, name: span.name, kind: span.kind ?? 0, attributes: attributesOf(span.attributes) });
        }
      }
    }
  }
}

function attributesOf(list: OtlpAttribute[] | undefined): CollectedSpan['attributes'] {
  const out: CollectedSpan['attributes'] = {};
  for (const { key, value } of list ?? []) {
    const scalar = value?.stringValue ?? value?.boolValue ?? value?.doubleValue ?? (value?.intValue !== undefined ? Number(value.intValue) : undefined);
    if (scalar !== undefined) out[key] = scalar;
  }
  return out;
}

/** OTLP/JSON ids are hex; tolerate base64 (the protobuf-JSON mapping) too. */
function hex(id: string): string {
  return /^[0-9a-f]+$/.test(id) && (id.length === 32 || id.length === 16) ? id : Buffer.from(id, 'base64').toString('hex');
}
