/**
 * The two ends of a function serving an HTTP request, as App Services shaped them: the `request` argument
 * the function gets (query, headers, body as BSON Binary of the raw bytes) and the HTTP response made from
 * its result and its `response` object. Pure: no Fastify, no bus.
 */
import type { HttpResponseState, JsonValue } from '@tessera/contracts';
import { Binary, EJSON } from 'bson';
import { toPlainJson } from '../data-api/data-api-format';

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

/** Canonical names already made, by name as sent: clients send the same few names on every request. */
const canonicalNames = new Map<string, string>();
/** Names remembered at most (a client making up names must not grow the map without bound). */
const CANONICAL_NAMES_KEPT = 512;

function canonicalize(name: string): string {
  const lower = name.toLowerCase();
  let out = '';
  let start = true;
  for (let i = 0; i < lower.length; i++) {
    const char = lower[i] ?? '';
    out += start && char >= 'a' && char <= 'z' ? char.toUpperCase() : char;
    start = char === '-';
  }
  return out;
}

/** `Content-Type` -> `Content-Type`, `x-custom-id` -> `X-Custom-Id`: the header keys functions read in App Services. */
export function canonicalHeaderName(name: string): string {
  let canonical = canonicalNames.get(name);
  if (canonical === undefined) {
    canonical = canonicalize(name);
    if (canonicalNames.size < CANONICAL_NAMES_KEPT) canonicalNames.set(name, canonical);
  }
  return canonical;
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

/** The query's parameters; App Services kept the first value of a repeated parameter. */
function queryOf(rawQuery: string): Record<string, string> {
  const query: Record<string, string> = {};
  if (rawQuery === '') return query;
  for (const [key, value] of new URLSearchParams(rawQuery)) if (!Object.prototype.hasOwnProperty.call(query, key)) query[key] = value;
  return query;
}

/**
 * The function's `request` (endpoints) or `payload` (webhooks) argument, as BSON values. Its canonical
 * headers are also the call's `context.request.requestHeaders` (the runtime takes them from here).
 */
export function requestArgument(exchange: HttpExchange): Record<string, unknown> {
  return { query: queryOf(exchange.rawQuery), headers: canonicalHeaders(exchange.rawHeaders), ...(exchange.body.length > 0 ? { body: new Binary(exchange.body) } : {}) };
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

/** Keys EJSON reads as other than a plain field, or that its round trip drops or refuses. */
function isPlainKey(key: string): boolean {
  return key[0] !== '$' && key !== '__proto__' && key !== '_bsontype' && !key.includes('\u0000');
}

/** How deep the plain-JSON check looks before leaving a result to the full conversion. */
const PLAIN_DEPTH = 32;

/**
 * True when the EJSON round trip of `resultBody` leaves the value as it is: strings, booleans, null, arrays and
 * objects with plain keys only (canonical EJSON writes every number as a `$number...` wrapper).
 */
function isPlainJson(value: unknown, depth: number): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value !== 'object' || depth > PLAIN_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isPlainJson(item, depth + 1)) return false;
    return true;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!isPlainKey(key) || !isPlainJson(record[key], depth + 1)) return false;
  return true;
}

/** The JSON return type's text of any result: its BSON values written as the Data API's plain JSON writes them. */
export function flattenedJson(result: JsonValue): string {
  return JSON.stringify(toPlainJson(EJSON.deserialize(result as never, { relaxed: false })));
}

/** The function's return value (canonical EJSON) as a body: canonical EJSON, or plain JSON (ObjectId as its hex, dates as ISO strings). */
export function resultBody(result: JsonValue, returnType: ReturnType): { body: Buffer; contentType: string } {
  if (returnType === 'EJSON') return { body: Buffer.from(JSON.stringify(result)), contentType: 'application/json' };
  // Most results hold no EJSON wrapper to flatten: their text is the plain JSON as it stands.
  return { body: Buffer.from(isPlainJson(result, 0) ? JSON.stringify(result) : flattenedJson(result)), contentType: 'application/json' };
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
