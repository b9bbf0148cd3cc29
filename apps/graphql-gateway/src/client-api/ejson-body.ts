import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { JsonValue } from '@tessera/contracts';
import { assertWellFormedEjson, decodeEjson, encodeEjson } from '@tessera/messaging';
import type { FastifyInstance } from 'fastify';
import { ClientApiError, ClientApiErrorCode } from './client-api.error';

/**
 * realm-core sends refresh, logout and delete with an empty body and `Content-Type: application/json`,
 * which Fastify's JSON parser refuses. This parser reads an empty body as no body; anything else must be
 * JSON (the request size limit still applies). A `__proto__` key is refused with a 400.
 */
@Injectable()
export class LenientJsonBodyParser implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    fastify.removeContentTypeParser('application/json');
    fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      try {
        done(null, parseJsonBody(text));
      } catch (error) {
        // The edge's filter answers a 4xx with the error's message, except Fastify's JSON codes (its own message).
        const refused = error instanceof ProtoKeyError ? { message: error.message, code: 'PROTO_KEY_IN_BODY' } : { message: 'invalid JSON in request body', code: 'FST_ERR_CTP_INVALID_JSON_BODY' };
        done(Object.assign(new Error(refused.message), { statusCode: 400, code: refused.code }), undefined);
      }
    });
  }
}

/** A body spelling a `__proto__` key, however escaped. */
export class ProtoKeyError extends Error {}

/**
 * A JSON request body: an empty one is no body. Throws on bad JSON, and ProtoKeyError on a `__proto__` key:
 * dropping the key instead (as this parser did) turned a filter `{ "__proto__": ... }` into `{}`, which a
 * deleteMany ran against every document the user may delete.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  // A reviver makes JSON.parse several times slower: only a text that can spell the key needs it
  // (literally, or with a \u escape, the only escape a key's letters can have).
  if (text.includes('__proto__') || text.includes('\\u')) {
    return JSON.parse(text, (key, value: unknown) => {
      if (key === '__proto__') throw new ProtoKeyError('__proto__ may not be a key in a request body');
      return value;
    });
  }
  return JSON.parse(text);
}

/** A request body (canonical or relaxed Extended JSON) as BSON values; malformed EJSON is a 400. */
export function fromEjson(body: unknown): unknown {
  if (body === undefined || body === null) return body;
  try {
    assertWellFormedEjson(body);
    // What EJSON.deserialize(keepRegexOperators(body), { relaxed: false }) gives, without its round trip.
    return decodeEjson(body as JsonValue, { relaxed: false });
  } catch (error) {
    throw new ClientApiError(ClientApiErrorCode.BadRequest, `invalid Extended JSON in request body: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A body that must be a JSON object. */
export function objectBody(body: unknown): Record<string, unknown> {
  const value = fromEjson(body);
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ClientApiError(ClientApiErrorCode.BadRequest, 'the request body must be a JSON object');
  return value as Record<string, unknown>;
}

/** A value in canonical Extended JSON, as the client API answers (R9). */
export function toCanonical(value: unknown): unknown {
  // What EJSON.serialize(value, { relaxed: false }) gives, without its stringify-and-parse round trip.
  return encodeEjson(value);
}
