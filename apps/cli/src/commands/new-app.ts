// A new app before the server knows it: the checks on its name, location, deployment model and environment
// (realm-cli's allowed values), the directory realm-cli's `app init` writes, and the app directory, if any,
// that already encloses a path. No server calls and no writes here.

import { dirname, join, resolve } from 'node:path';
import { ENVIRONMENT_NAMES, loadApp } from '@tessera/app-config';
import { CliError, ExitCode, type Violation } from '../cli-error';
import { readJsonObject, ROOT_CONFIGS, type Files } from '../local-files';

/** realm-cli's locations and deployment models (its flags upper-case what they are given). */
export const APP_LOCATIONS: readonly string[] = ['US-VA', 'US-OR', 'DE-FF', 'IE', 'AU', 'IN-MB', 'SG'];
export const DEPLOYMENT_MODELS: readonly string[] = ['GLOBAL', 'LOCAL'];
/** The environments an app can select (realm-cli lower-cases what it is given). */
export const APP_ENVIRONMENTS: readonly string[] = ENVIRONMENT_NAMES.filter((name) => name !== '');
export const DEFAULT_LOCATION = 'US-VA';
export const DEFAULT_DEPLOYMENT_MODEL = 'GLOBAL';

/** The settings realm_config.json carries for a new app. */
export interface NewAppSettings {
  name: string;
  location: string;
  deployment_model: string;
  environment?: string;
}

/** Spec 8, as the admin API checks it: 1 to 32 ASCII letters, digits, underscores or hyphens. */
const APP_NAME = /^[A-Za-z0-9_-]{1,32}$/;

export function checkAppName(name: string): string {
  if (APP_NAME.test(name)) return name;
  const why = name.length === 0 ? 'it is empty' : name.length > 32 ? `it has ${name.length} characters, the limit is 32` : 'use only ASCII letters, digits, underscores and hyphens';
  throw new CliError(`invalid app name ${JSON.stringify(name)}: ${why}`, ExitCode.Usage, { errorCode: 'InvalidAppName' });
}

const oneOf = (flag: string, allowed: readonly string[], value: string): string => {
  if (allowed.includes(value)) return value;
  throw new CliError(`unsupported ${flag} ${JSON.stringify(value)}: use one of ${allowed.join(', ')}`, ExitCode.Usage);
};

export const parseLocation = (value: string): string => oneOf('--location', APP_LOCATIONS, value.toUpperCase());
export const parseDeploymentModel = (value: string): string => oneOf('--deployment-model', DEPLOYMENT_MODELS, value.toUpperCase());
export const parseEnvironment = (value: string): string => oneOf('--environment', APP_ENVIRONMENTS, value.toLowerCase());

/** realm-cli writes its files indented by four spaces, keys in its own order, with a final newline. */
export function jsonFile(value: unknown): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(value, null, 4)}\n`);
}

/** The root file of the 20210101 layout: no app_id until a push creates the app. */
export const INIT_ROOT_CONFIG = 'realm_config.json';

/** Directories realm-cli's `app init` leaves empty, for the user to fill. */
export const INIT_EMPTY_DIRECTORIES: readonly string[] = ['data_sources', 'services', 'values', 'graphql/custom_resolvers'];

/**
 * What realm-cli's `app init` writes (config version 20210101): the root config, one file per environment,
 * the API key provider (disabled), custom user data off, no functions, GraphQL with natural pluralization,
 * sync's development mode off and no HTTPS endpoints (realm-cli wrote `null` there; an empty list means the same).
 */
export function initialAppFiles(settings: NewAppSettings): Files {
  const files: Files = new Map();
  files.set(INIT_ROOT_CONFIG, jsonFile({ config_version: 20210101, name: settings.name, location: settings.location, deployment_model: settings.deployment_model, ...(settings.environment ? { environment: settings.environment } : {}) }));
  for (const environment of ['development', 'no-environment', 'production', 'qa', 'testing']) files.set(`environments/${environment}.json`, jsonFile({ values: {} }));
  files.set('auth/providers.json', jsonFile({ 'api-key': { disabled: true, name: 'api-key', type: 'api-key' } }));
  files.set('auth/custom_user_data.json', jsonFile({ enabled: false }));
  files.set('functions/config.json', jsonFile([]));
  files.set('graphql/config.json', jsonFile({ use_natural_pluralization: true }));
  files.set('http_endpoints/config.json', jsonFile([]));
  files.set('sync/config.json', jsonFile({ development_mode_enabled: false }));
  return files;
}

/** Every problem the app config validator (the one the server runs on a push) finds in an app directory. */
export function appViolations(files: Files): Violation[] {
  return loadApp(files).violations.map(({ file, path, rule, message }) => ({ file, path, rule, message }));
}

/**
 * The root config of the app directory `dir` is in (itself or a parent), if any. realm_config.json and
 * root_config.json always mark an app; config.json and stitch.json only with an app's config_version or
 * app_id, since functions/ and services/ hold config.json files of their own.
 */
export async function enclosingAppConfig(dir: string): Promise<string | undefined> {
  for (let current = resolve(dir); ; current = dirname(current)) {
    for (const name of ROOT_CONFIGS) {
      const settings = await readJsonObject(join(current, name));
      if (settings && (name === 'root_config.json' || name === 'realm_config.json' || 'config_version' in settings || 'app_id' in settings)) return join(current, name);
    }
    if (dirname(current) === current) return undefined;
  }
}

/**
 * A root config with the new app's client app id written in, after config_version as realm-cli places it,
 * in the file's own indentation.
 */
export function withAppId(text: string, clientAppId: string): string {
  const settings = JSON.parse(text) as Record<string, unknown>;
  const { config_version: version, app_id: _old, ...rest } = settings;
  const updated = { ...(version !== undefined ? { config_version: version } : {}), app_id: clientAppId, ...rest };
  const indent = /\n(\s+)"/.exec(text)?.[1] ?? '    ';
  return `${JSON.stringify(updated, null, indent)}\n`;
}
