/**
 * What the host leaves on a fresh context's global object before the isolate scripts run, and the bson
 * browser bundle's global. The host hands over only string-in, string-out callbacks and JSON text; the
 * prelude captures them and removes them from the global object before any function runs.
 *
 * Everything under `isolate/` runs INSIDE the sandbox isolate: it is bundled by esbuild (isolate-scripts.ts)
 * into two scripts, never imported by host code, and may use no Node API (no `process`, `require`, Node's
 * `Buffer`): only what V8 offers and what these modules define.
 */
import type * as Bson from 'bson';

export type BsonModule = typeof Bson;

export interface HostGlobals {
  /** Starts a host operation: (token, frameId, opId, op, EJSON payload). Answered through the prelude's `resolve`. */
  __tessera_hostStart: (token: string, frameId: number, opId: number, op: string, payload: string) => void;
  /**
   * A host operation answered at once, while the isolate waits: (token, frameId, op, EJSON payload) -> JSON of
   * `{ok, value}` or `{ok: false, message, code?}`. Only for what must not cost the caller a promise (see `fn.prepare`).
   */
  __tessera_hostNow: (token: string, frameId: number, op: string, payload: string) => string;
  /** (algorithm, data as base64, key as base64 or '') -> digest as base64. */
  __tessera_hash: (algorithm: string, dataBase64: string, keyBase64: string) => string;
  /** (input, base, field to set or '', value) -> JSON of the URL's fields, or `{"error":true}`. */
  __tessera_url: (input: string, base: string, field: string, value: string) => string;
  /** n -> n random bytes as hex. */
  __tessera_randomHex: (n: number) => string;
  /** (zlib operation, input as base64) -> output as base64. */
  __tessera_zlib: (op: string, inputBase64: string) => string;
  /** (operation, JSON arguments) -> JSON of `{ok, value}` or `{ok: false, message}`: utils.crypto and utils.jwt (host-crypto.ts). */
  __tessera_crypto: (op: string, argsJson: string) => string;
  /** The app's dependency bundle (JSON text), when it uploaded one. */
  __tessera_dependencies?: string;
  /** JSON text of the SandboxBoot. */
  __tessera_boot: string;
  BSON: BsonModule;
}

export const HOST_GLOBAL_NAMES = ['__tessera_hostStart', '__tessera_hostNow', '__tessera_hash', '__tessera_url', '__tessera_boot', '__tessera_randomHex', '__tessera_zlib', '__tessera_crypto', '__tessera_dependencies'] as const;

/** The global object, with what the host and the bson bundle put there. */
export function isolateGlobal(): typeof globalThis & HostGlobals & Record<PropertyKey, unknown> {
  return globalThis as typeof globalThis & HostGlobals & Record<PropertyKey, unknown>;
}

let bsonModule: BsonModule | undefined;
/** The bson bundle's module, as the prelude found it (the bundle runs between the polyfills and the prelude). */
export function bson(): BsonModule {
  bsonModule ??= isolateGlobal().BSON;
  return bsonModule;
}
