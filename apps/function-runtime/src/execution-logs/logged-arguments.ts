/**
 * The arguments an execution log entry shows. An HTTPS endpoint's or incoming webhook's function receives the
 * request as sent (its first argument: `query`, `headers`, `body`), credentials included, since the function
 * may check them; the log keeps the request with those credentials redacted, as the Data API's log does.
 */
import { isCredentialHeader, isCredentialQueryParameter, REDACTED } from '@tessera/contracts';
import { encodeEjson } from '@tessera/messaging';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `fields` with each entry `secret(name)` picks replaced by `mask(value)`; the same object when none is. */
function redacted(fields: unknown, secret: (name: string) => boolean, mask: (value: unknown) => unknown): unknown {
  if (!isRecord(fields) || !Object.keys(fields).some(secret)) return fields;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) out[name] = secret(name) ? mask(value) : value;
  return out;
}

/**
 * Canonical EJSON text of the arguments to log: `argsEjson` itself for a call that serves no HTTP request or
 * whose request carries no credential, else the arguments with credential headers and the `secret` query
 * parameter redacted.
 */
export function loggedArgumentsEjson(args: readonly unknown[], argsEjson: string, servesHttp: boolean): string {
  const request = args[0];
  if (!servesHttp || !isRecord(request)) return argsEjson;
  const headers = redacted(request['headers'], isCredentialHeader, (value) => (Array.isArray(value) ? value.map(() => REDACTED) : REDACTED));
  const query = redacted(request['query'], isCredentialQueryParameter, () => REDACTED);
  if (headers === request['headers'] && query === request['query']) return argsEjson;
  return JSON.stringify(encodeEjson([{ ...request, headers, query }, ...args.slice(1)]));
}
