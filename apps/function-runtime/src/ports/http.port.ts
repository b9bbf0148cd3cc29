/** An outbound HTTP request made by a function through `context.http`. */
export interface OutboundHttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';
  url: string;
  headers: Record<string, string[]>;
  /** Request body bytes, base64-encoded. */
  bodyBase64?: string;
  followRedirects: boolean;
}

export interface OutboundHttpResponse {
  statusCode: number;
  statusText: string;
  headers: Record<string, string[]>;
  /** Response body bytes, base64-encoded. */
  bodyBase64: string;
}

/** Outbound HTTP for functions. Deployments decide where functions may connect (egress policy lives here). */
export interface HttpPort {
  request(request: OutboundHttpRequest): Promise<OutboundHttpResponse>;
}

/** HttpPort over Node's fetch. It applies no egress policy: wrap it when functions must not reach internal hosts. */
export class FetchHttpPort implements HttpPort {
  constructor(private readonly timeoutMs = 60_000) {}

  async request(request: OutboundHttpRequest): Promise<OutboundHttpResponse> {
    const headers = new Headers();
    for (const [name, values] of Object.entries(request.headers)) for (const value of values) headers.append(name, value);
    const response = await fetch(request.url, {
      method: request.method,
      headers,
      body: request.bodyBase64 === undefined ? undefined : Buffer.from(request.bodyBase64, 'base64'),
      redirect: request.followRedirects ? 'follow' : 'manual',
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const responseHeaders: Record<string, string[]> = {};
    response.headers.forEach((value, name) => {
      const key = canonicalHeaderName(name);
      (responseHeaders[key] ??= []).push(value);
    });
    const body = Buffer.from(await response.arrayBuffer());
    return { statusCode: response.status, statusText: response.statusText, headers: responseHeaders, bodyBase64: body.toString('base64') };
  }
}

/** `content-type` -> `Content-Type`, as App Services showed response headers. */
function canonicalHeaderName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}
