import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { EgressDeniedError, EgressPolicy } from './egress-policy';

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

export interface NodeHttpPortOptions {
  timeoutMs?: number;
  /** Destinations opened although private (TESSERA_FUNCTION_HTTP_ALLOW entries); everything public is open. */
  allow?: readonly string[];
}

const maxRedirects = 20;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/**
 * HttpPort over Node's http and https clients, under the egress policy (egress-policy.ts). Every connection
 * is checked on the address it is about to use: an IP literal before connecting, a host name inside the
 * socket's own lookup, so the connection goes to exactly the address that was checked (no second
 * resolution a DNS rebinding could answer differently). Redirects are followed here, one checked hop at a
 * time.
 */
export class NodeHttpPort implements HttpPort {
  private readonly timeoutMs: number;
  private readonly policy: EgressPolicy;

  constructor(options: NodeHttpPortOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.policy = new EgressPolicy(options.allow ?? []);
  }

  async request(request: OutboundHttpRequest): Promise<OutboundHttpResponse> {
    const deadline = Date.now() + this.timeoutMs;
    let url = new URL(request.url);
    let method: string = request.method;
    let headers = request.headers;
    let body = request.bodyBase64 === undefined ? undefined : Buffer.from(request.bodyBase64, 'base64');
    for (let hop = 0; ; hop += 1) {
      const response = await this.send(url, method, headers, body, deadline);
      const location = response.headers['location'];
      if (!request.followRedirects || !redirectStatuses.has(response.statusCode ?? 0) || typeof location !== 'string') return read(response, method);
      response.resume();
      if (hop >= maxRedirects) throw new Error(`context.http: more than ${maxRedirects} redirects from ${request.url}`);
      const next = new URL(location, url);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new Error(`context.http: refused a redirect to ${next.protocol} (${next.href})`);
      // As fetch does: 303 (and 301/302 after a POST) turn into a GET without a body; credentials stay on their origin.
      if (response.statusCode === 303 ? method !== 'HEAD' : (response.statusCode === 301 || response.statusCode === 302) && method === 'POST') {
        method = 'GET';
        body = undefined;
        headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !/^content-/i.test(name)));
      }
      if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !/^(authorization|cookie|proxy-authorization)$/i.test(name)));
      url = next;
    }
  }

  private send(url: URL, method: string, headers: Record<string, string[]>, body: Buffer | undefined, deadline: number): Promise<IncomingMessage> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const options: RequestOptions = { method, headers: outgoingHeaders(headers, body), agent: false };
    if (isIP(host)) {
      const reason = this.policy.refusal(host);
      if (reason) return Promise.reject(new EgressDeniedError(url.href, host, reason));
    } else if (!this.policy.allowsHost(host)) {
      options.lookup = this.checkedLookup(url.href);
    }
    return new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, resolve);
      const timer = setTimeout(() => outgoing.destroy(new Error(`context.http: no response from ${url.href} within ${this.timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
      timer.unref();
      outgoing.once('error', reject);
      outgoing.once('close', () => clearTimeout(timer));
      outgoing.end(body);
    });
  }

  /** A socket lookup that resolves the name once, refuses it if any address is closed, and hands over what it checked. */
  private checkedLookup(href: string): LookupFunction {
    return (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 0);
        for (const { address } of addresses) {
          const reason = this.policy.refusal(address);
          if (reason) return callback(new EgressDeniedError(href, address, `${hostname} resolves to a ${reason}`), '', 0);
        }
        if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        return callback(null, first.address, first.family);
      });
    };
  }
}

function outgoingHeaders(headers: Record<string, string[]>, body: Buffer | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(headers)) (out[name.toLowerCase()] ??= []).push(...values);
  out['accept'] ??= ['*/*'];
  out['accept-encoding'] ??= ['gzip, deflate, br'];
  if (body !== undefined) out['content-length'] = [String(body.length)];
  return out;
}

async function read(response: IncomingMessage, method: string): Promise<OutboundHttpResponse> {
  const headers: Record<string, string[]> = {};
  for (let i = 0; i < response.rawHeaders.length; i += 2) (headers[canonicalHeaderName(response.rawHeaders[i].toLowerCase())] ??= []).push(response.rawHeaders[i + 1]);
  const encoding = String(response.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder = method === 'HEAD' ? undefined : encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : undefined;
  const source = decoder ? response.pipe(decoder) : response;
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(chunk as Buffer);
  return { statusCode: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers, bodyBase64: Buffer.concat(chunks).toString('base64') };
}

/** `content-type` -> `Content-Type`, as App Services showed response headers. */
function canonicalHeaderName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}
