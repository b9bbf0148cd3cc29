/**
 * The host's check of what the isolate reports a function set on its `response` object: exactly what
 * HttpResponseStateSchema accepts (an integer status in 100..599 or none, headers as arrays of strings, a
 * base64 body or none), answered as the schema's parse would, without zod's per-call machinery: every
 * endpoint and webhook call pays this check. Its spec holds it to the schema on valid and invalid states.
 */
import type { HttpResponseState } from '@tessera/contracts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}

/** The state with only the schema's fields, or undefined when the schema would refuse it. */
export function responseStateOf(value: unknown): HttpResponseState | undefined {
  if (!isRecord(value)) return undefined;
  const { statusCode, headers, bodyBase64 } = value;
  if (statusCode !== undefined && (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 599)) return undefined;
  if (bodyBase64 !== undefined && typeof bodyBase64 !== 'string') return undefined;
  if (!isRecord(headers)) return undefined;
  const checked: Record<string, string[]> = {};
  for (const name of Object.keys(headers)) {
    const values = headers[name];
    if (!isStringArray(values)) return undefined;
    // Assigning `__proto__` would set the prototype: zod leaves that key out too.
    if (name !== '__proto__') checked[name] = values;
  }
  return { ...(statusCode === undefined ? {} : { statusCode }), headers: checked, ...(bodyBase64 === undefined ? {} : { bodyBase64 }) };
}
