// Environment values as the admin API shows them (a name with one value per environment) over the files
// the app keeps: environments/<environment>.json, each `{ "values": { name: value } }`. The files stay the
// source of truth, so a pull, an edit of a file and a push, and these endpoints all see the same values.
// Pure functions over the model: the controller deploys the result.

import { createHash } from 'node:crypto';
import { ENVIRONMENT_NAMES, parseJson, stringifyJson, type AppConfig } from '@tessera/app-config';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';

/** The keys of an environment value's `values`: App Services calls the no-environment slot `none`. */
export const ENVIRONMENT_KEYS = ['none', 'development', 'testing', 'qa', 'production'] as const;
export type EnvironmentKey = (typeof ENVIRONMENT_KEYS)[number];

export interface EnvironmentValue {
  _id: string;
  name: string;
  values: Partial<Record<EnvironmentKey, unknown>>;
}

/** A name `%%environment.values.<name>` can reach: no dots (they walk into a value), nothing empty. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The file of each slot; no_environment.json is the older spelling, read when it is the one present. */
function fileOf(app: AppConfig, key: EnvironmentKey): string {
  if (key !== 'none') return `environments/${key}.json`;
  return app.extraFiles.has('environments/no_environment.json') && !app.extraFiles.has('environments/no-environment.json') ? 'environments/no_environment.json' : 'environments/no-environment.json';
}

function readFile(app: AppConfig, key: EnvironmentKey): Record<string, unknown> {
  const bytes = app.extraFiles.get(fileOf(app, key));
  if (bytes === undefined) return {};
  const parsed = parseJson(new TextDecoder().decode(bytes));
  // A broken file is reported by every deployment; here it reads as holding nothing, so listing still works.
  return parsed.ok && isObject(parsed.value) ? parsed.value : {};
}

function valuesOf(file: Record<string, unknown>): Record<string, unknown> {
  return isObject(file['values']) ? file['values'] : {};
}

/** Stable per app and name: the files have nowhere to keep an id, and a name is unique within an app. */
export function environmentValueId(appId: string, name: string): string {
  return createHash('sha256').update(`${appId}\u0000${name}`).digest('hex').slice(0, 24);
}

export function listEnvironmentValues(appId: string, app: AppConfig): EnvironmentValue[] {
  const byName = new Map<string, EnvironmentValue>();
  for (const key of ENVIRONMENT_KEYS) {
    for (const [name, value] of Object.entries(valuesOf(readFile(app, key)))) {
      const entry = byName.get(name) ?? { _id: environmentValueId(appId, name), name, values: {} };
      entry.values[key] = value;
      byName.set(name, entry);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** By `_id`, or by name as realm-cli's other resources allow. */
export function findEnvironmentValue(appId: string, app: AppConfig, id: string): EnvironmentValue {
  const found = listEnvironmentValues(appId, app).find((value) => value._id === id || value.name === id);
  if (!found) throw new AdminApiError(AdminApiErrorCode.EnvironmentValueNotFound, `environment value not found: '${id}'`);
  return found;
}

/** Writes `name` into every environment file: set where `values` has the slot, removed where it has not. */
export function writeEnvironmentValue(app: AppConfig, name: string, values: Partial<Record<EnvironmentKey, unknown>>): void {
  for (const key of ENVIRONMENT_KEYS) {
    const path = fileOf(app, key);
    const file = readFile(app, key);
    const current = { ...valuesOf(file) };
    if (Object.prototype.hasOwnProperty.call(values, key)) current[name] = values[key];
    else if (Object.prototype.hasOwnProperty.call(current, name)) delete current[name];
    else continue;
    app.extraFiles.set(path, new TextEncoder().encode(stringifyJson({ ...file, values: current })));
  }
}

export function removeEnvironmentValue(app: AppConfig, name: string): void {
  writeEnvironmentValue(app, name, {});
}

/** The body of POST and PUT: `name` and `values` (environment -> any JSON value). */
export function parseEnvironmentValueBody(body: unknown, fallbackName?: string): { name: string; values: Partial<Record<EnvironmentKey, unknown>> } {
  if (!isObject(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be a JSON object with name and values');
  const name = body['name'] ?? fallbackName;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'name must be 1 to 64 letters, digits, underscores or hyphens');
  }
  const values = body['values'] ?? {};
  if (!isObject(values)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `values must be an object mapping ${ENVIRONMENT_KEYS.join(', ')} to values`);
  const unknown = Object.keys(values).filter((key) => !(ENVIRONMENT_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `unknown environment ${unknown.map((key) => `"${key}"`).join(', ')}; environments are ${ENVIRONMENT_KEYS.join(', ')}`);
  return { name, values };
}

/** `PUT .../environment`'s `environment`: one of App Services' names, "" (or null) for none. */
export function parseEnvironment(body: unknown): string {
  if (!isObject(body) || !Object.prototype.hasOwnProperty.call(body, 'environment')) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be a JSON object with environment');
  const environment = body['environment'] ?? '';
  if (typeof environment !== 'string' || !ENVIRONMENT_NAMES.includes(environment)) {
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid environment ${JSON.stringify(environment)}: must be one of ${ENVIRONMENT_NAMES.map((name) => JSON.stringify(name)).join(', ')}`);
  }
  return environment;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
