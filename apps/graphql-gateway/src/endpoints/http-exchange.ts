/**
 * The two ends of a function serving an HTTP request, as App Services shaped them: the `request` argument
 * the function gets (query, headers, body as BSON Binary of the raw bytes) and the HTTP response made from
 * its result and its `response` object. Pure: no Fastify, no bus.
 */
import type { HttpResponseState, JsonValue } from '@tessera/contracts';
import { Binary, EJSON } from 'bson';

/** What a handler read off the wire. */
export interface HttpExchange {
  method: string;
  /** The URL path as sent, without the query. */
  path: string;
  rawQuery: string;
  headers: Record<string, string | string[] | undefined>;
  /** Header names and values in the order and case sent (Node's `rawHeaders`). */
  rawHeaders: readonly string[];
  body: Buffer;
  remoteAddress: string;
}

export interface HttpReply {
  status: number;
  headers: Record<string, string[]>;
  body?: Buffer;
}

export type ReturnType = 'JSON' | 'EJSON';

/** `Content-Type` -> `Content-Type`, `x-custom-id` -> `X-Custom-Id`: the header keys functions read in App Services. */
export function canonicalHeaderName(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
}

/** The request's headers keyed by canonical name, each with its values in the order sent. */
export function canonicalHeaders(rawHeaders: readonly string[]): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = canonicalHeaderName(rawHeaders[i] ?? '');
    (headers[name] ??= []).push(rawHeaders[i + 1] ?? '');
  }
  return headers;
}

/** The function's `request` (endpoints) or `payload` (webhooks) argument, as BSON values. */
export function requestArgument(exchange: HttpExchange): Record<string, unknown> {
  const query: Record<string, string> = {};
  // App Services kept the first value of a repeated parameter.
  for (const [key, value] of new URLSearchParams(exchange.rawQuery)) if (!Object.prototype.hasOwnProperty.call(query, key)) query[key] = value;
  return { query, headers: canonicalHeaders(exchange.rawHeaders), ...(exchange.body.length > 0 ? { body: new Binary(exchange.body) } : {}) };
}

/** A header the function may set: hop-by-hop and framing headers are the server's to write. */
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'trailer']);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The function's headers that may go on the wire (the sandbox refuses bad ones already; this is the second check). */
export function safeHeaders(headers: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) continue;
    const kept = values.filter((value) => HEADER_VALUE.test(value));
    if (kept.length > 0) out[name] = kept;
  }
  return out;
}

/** Extended JSON wrappers a JSON return type flattens to their plain value. */
const FLATTEN = ['$oid', '$numberDecimal', '$numberLong', '$numberInt', '$numberDouble', '$symbol', '$uuid'];

function plainJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainJson);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1) {
    const key = keys[0] ?? '';
    if (FLATTEN.includes(key)) return record[key];
    if (key === '$date') {
      const date = record[key];
      const millis = typeof date === 'object' && date !== null ? Number((date as { $numberLong?: string }).$numberLong) : Date.parse(String(date));
      return Number.isFinite(millis) && Math.abs(millis) <= 8.64e15 ? new Date(millis).toISOString() : date;
    }
    if (key === '$binary') return (record[key] as { base64?: unknown }).base64;
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = plainJson(record[key]);
  return out;
}

/** The function's return value (canonical EJSON) as a body: canonical EJSON, or plain JSON (ObjectId as its hex, dates as ISO strings). */
export function resultBody(result: JsonValue, returnType: ReturnType): { body: Buffer; contentType: string } {
  if (returnType === 'EJSON') return { body: Buffer.from(JSON.stringify(result)), contentType: 'application/json' };
  const relaxed = EJSON.serialize(EJSON.deserialize(result as never, { relaxed: false }), { relaxed: true });
  return { body: Buffer.from(JSON.stringify(plainJson(relaxed) ?? null)), contentType: 'application/json' };
}

/**
 * The reply to a call that ran. With `respondResult`, the return value is the body (200) unless the function
 * set a body or status itself; without it, what the function set on `response` is the reply, and a function
 * that set nothing answers `emptyStatus` with no body (App Services: 204 for an endpoint, 200 for a webhook).
 */
export function replyOf(outcome: { result: JsonValue; http?: HttpResponseState }, options: { respondResult: boolean; returnType: ReturnType; emptyStatus: number }): HttpReply {
  const set = outcome.http ?? { headers: {} };
  const headers = safeHeaders(set.headers);
  const hasContentType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  if (set.bodyBase64 !== undefined) {
    if (!hasContentType) headers['Content-Type'] = ['text/plain; charset=utf-8'];
    return { status: set.statusCode ?? 200, headers, body: Buffer.from(set.bodyBase64, 'base64') };
  }
  if (options.respondResult) {
    const { body, contentType } = resultBody(outcome.result, options.returnType);
    if (!hasContentType) headers['Content-Type'] = [contentType];
    return { status: set.statusCode ?? 200, headers, body };
  }
  return { status: set.statusCode ?? options.emptyStatus, headers };
}
