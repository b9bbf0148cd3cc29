/**
 * The common GraphQL request answered without graphql-yoga's HTTP layer. A plain `POST` of a JSON body to
 * the endpoint's exact path, from a client that takes a JSON answer and sends no `Origin`, is what every
 * GraphQL client sends; for it, yoga's fetch-API machinery (a Request built from the Node request, the
 * request parsers, a Response read back into a Buffer) costs as much CPU as executing a list of 20 documents.
 * Such a request goes straight to yoga's own operation pipeline (`getResultForParams`: the parameter checks,
 * the parse and validation cache, the limits, masked errors, the transaction plugin) and its result is
 * written as yoga's regular result processor writes it. Anything else (GET, other content types, CORS,
 * other media types, a query string, parameters yoga refuses) takes the whole yoga path: this module must
 * not change what any request is answered, only how much it costs.
 */
import { processRegularResult, type YogaServerInstance } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql/index.js';

/** yoga's request size limit (its default, which the endpoint keeps): larger bodies take yoga's path to its error. */
const YOGA_BODY_LIMIT = 25_000_000;

/** The result processors yoga registers, in its order; the last one a requested media type matches is used. */
const PROCESSORS: ReadonlyArray<{ regular: boolean; mediaTypes: readonly string[] }> = [
  { regular: false, mediaTypes: ['text/event-stream'] },
  { regular: false, mediaTypes: ['multipart/mixed'] },
  { regular: true, mediaTypes: ['application/graphql-response+json', 'application/json'] },
];

type RegularMediaType = 'application/graphql-response+json' | 'application/json';

const negotiated = new Map<string, RegularMediaType | undefined>();

/**
 * The media type yoga answers a non-streaming result with for this `Accept` header, when that is one of
 * its regular (JSON) ones; undefined when yoga would choose a streaming processor or none. yoga's rules:
 * the header's media types (utf-8 only) in reverse order, matched against each processor's in turn.
 */
export function regularMediaType(accept: string | undefined): RegularMediaType | undefined {
  const key = accept ?? '';
  if (negotiated.has(key)) return negotiated.get(key);
  const requested: string[] = [];
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType, ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (mediaType !== undefined && charset === 'charset=utf-8') requested.push(mediaType);
  }
  requested.reverse();
  let chosen: { regular: boolean; mediaType: string } | undefined;
  for (const processor of PROCESSORS) {
    for (const asked of requested) {
      for (const mediaType of processor.mediaTypes) if (matches(mediaType, asked)) chosen = { regular: processor.regular, mediaType };
    }
  }
  const answer = chosen?.regular ? (chosen.mediaType as RegularMediaType) : undefined;
  if (negotiated.size >= 256) negotiated.clear();
  negotiated.set(key, answer);
  return answer;
}

function matches(processorType: string, asked: string): boolean {
  const [pre, suf] = processorType.split('/');
  const [askedPre, askedSuf] = asked.split('/');
  return (askedPre === '*' || askedPre === pre) && (askedSuf === '*' || askedSuf === suf);
}

/** What the direct path needs of an HTTP request (Fastify's, with the body already parsed as JSON). */
export interface DirectRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** A request the direct path takes: its GraphQL parameters and the media type of the answer. */
export interface DirectCall {
  params: Record<string, unknown>;
  mediaType: RegularMediaType;
}

/** The request's parameters when it is the common case described above; undefined sends it through yoga. */
export function directCall(request: DirectRequest, endpoint: string): DirectCall | undefined {
  if (request.method !== 'POST' || request.url !== endpoint) return undefined;
  const { headers, body } = request;
  if (headers['origin'] !== undefined) return undefined;
  const contentType = headers['content-type'];
  if (typeof contentType !== 'string' || !/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(contentType)) return undefined;
  const length = Number(headers['content-length']);
  if (!Number.isFinite(length) || length > YOGA_BODY_LIMIT) return undefined;
  const accept = headers['accept'];
  if (accept !== undefined && typeof accept !== 'string') return undefined;
  const mediaType = regularMediaType(accept);
  if (!mediaType) return undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { query?: unknown }).query !== 'string') return undefined;
  return { params: body as Record<string, unknown>, mediaType };
}

/** An answer of the direct path: a successful result's JSON text, or yoga's Response for any other result. */
export type DirectAnswer = { status: 200; contentType: string; body: string } | { response: Response };

/**
 * Runs the call through yoga's operation pipeline. Undefined when yoga refused the parameters before
 * running anything (the caller then lets yoga answer the request, with its own error response).
 */
export async function runDirect<TServer extends Record<string, unknown>, TUser extends Record<string, unknown>>(yoga: YogaServerInstance<TServer, TUser>, call: DirectCall, serverContext: TServer): Promise<DirectAnswer | undefined> {
  // The envelop plugins read `request.method` (mutations via GET) and use the request as a key; nothing in
  // this endpoint's plugins or resolvers reads more of it.
  const request = { method: 'POST' } as Request;
  let result: ExecutionResult;
  try {
    // Throws only from the parameter checks (yoga's onParams hooks); failures of the operation are results.
    result = (await yoga.getResultForParams({ params: call.params, request }, serverContext)) as ExecutionResult;
  } catch {
    return undefined;
  }
  const extensions = result.extensions as { http?: unknown } | undefined;
  if (!result.errors?.length && !extensions?.http) {
    // What processRegularResult answers for it: status 200 and the result as JSON.
    const stringify = (result as { stringify?: (value: unknown) => string }).stringify ?? JSON.stringify;
    return { status: 200, contentType: `${call.mediaType}; charset=utf-8`, body: stringify(result) };
  }
  return { response: processRegularResult(result, yoga.fetchAPI, call.mediaType) };
}
