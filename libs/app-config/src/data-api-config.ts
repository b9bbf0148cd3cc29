// The Data API's configuration (http_endpoints/data_api_config.json of an export, the admin API's
// `data_api/config` resource, `data_api_config` of an import): its model with App Services' defaults, how to
// read it from an app, and what makes one invalid. Pure: the gateway serves what `dataApiConfigOf` returns,
// the reader and the admin API refuse what `dataApiConfigProblems` names.

import { ENDPOINT_RETURN_TYPES, ENDPOINT_VALIDATION_METHODS } from './https-endpoints';
import { bytesToText, isPlainObject, parseJson } from './json';
import type { AppConfig } from './model';

/** Where the Data API's configuration lives in the app's files. */
export const DATA_API_CONFIG_FILE = 'http_endpoints/data_api_config.json';

/** The Data API versions App Services offered (admin API `DataApiVersion`); `beta` is served beside them. */
export const DATA_API_VERSIONS: readonly string[] = ['v1'];

/** http_endpoints/data_api_config.json with every field App Services knew, defaults filled in. */
export interface DataApiConfig {
  disabled: boolean;
  versions: string[];
  return_type: 'JSON' | 'EJSON';
  create_user_on_auth: boolean;
  run_as_system: boolean;
  run_as_user_id: string;
  run_as_user_id_script_source: string;
  validation_method: 'NO_VALIDATION' | 'SECRET_AS_QUERY_PARAM' | 'VERIFY_PAYLOAD';
  secret_name: string;
  log_function_arguments: boolean;
  /** A rule expression over `%%request` and `%%user`; the request is served only when it holds (`{}`: always). */
  can_evaluate: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface DataApiConfigProblem {
  /** The field (`versions`, `run_as_user_id`, ...); empty for the whole file. */
  path: string;
  message: string;
}

const BOOLEANS = ['disabled', 'create_user_on_auth', 'run_as_system', 'log_function_arguments'] as const;
const STRINGS = ['run_as_user_id', 'run_as_user_id_script_source', 'secret_name'] as const;

/** What is wrong with a Data API configuration object (an empty list: App Services would accept it). */
export function dataApiConfigProblems(value: unknown): DataApiConfigProblem[] {
  if (!isPlainObject(value)) return [{ path: '', message: 'the Data API configuration must be an object' }];
  const problems: DataApiConfigProblem[] = [];
  const add = (path: string, message: string): void => {
    problems.push({ path, message });
  };
  for (const key of BOOLEANS) if (value[key] !== undefined && typeof value[key] !== 'boolean') add(key, `${key} must be a boolean`);
  for (const key of STRINGS) if (value[key] !== undefined && typeof value[key] !== 'string') add(key, `${key} must be a string`);
  const versions = value['versions'];
  if (versions !== undefined && (!Array.isArray(versions) || versions.some((version) => typeof version !== 'string' || !DATA_API_VERSIONS.includes(version)))) {
    add('versions', `versions must be an array of Data API versions (${DATA_API_VERSIONS.join(', ')})`);
  }
  const returnType = value['return_type'];
  if (returnType !== undefined && (typeof returnType !== 'string' || !ENDPOINT_RETURN_TYPES.includes(returnType))) add('return_type', `return_type must be one of ${ENDPOINT_RETURN_TYPES.join(', ')}`);
  // App Services' own export wrote "" for no validation (data_api_config.json of 2022 deployments).
  const validation = value['validation_method'] === undefined || value['validation_method'] === '' ? 'NO_VALIDATION' : value['validation_method'];
  if (typeof validation !== 'string' || !ENDPOINT_VALIDATION_METHODS.includes(validation)) {
    add('validation_method', `validation_method must be one of ${ENDPOINT_VALIDATION_METHODS.join(', ')}`);
  } else if (validation !== 'NO_VALIDATION' && (typeof value['secret_name'] !== 'string' || value['secret_name'] === '')) {
    add('secret_name', `validation_method ${validation} needs secret_name, the secret requests are checked against`);
  }
  if (value['can_evaluate'] !== undefined && !isPlainObject(value['can_evaluate'])) add('can_evaluate', 'can_evaluate must be a rule expression (an object)');
  return problems;
}

/** A valid configuration object with App Services' defaults for what it leaves out (unknown keys kept). */
export function withDataApiDefaults(value: Record<string, unknown>): DataApiConfig {
  return {
    ...value,
    disabled: value['disabled'] === true,
    versions: Array.isArray(value['versions']) ? (value['versions'] as string[]) : ['v1'],
    return_type: value['return_type'] === 'EJSON' ? 'EJSON' : 'JSON',
    create_user_on_auth: value['create_user_on_auth'] === true,
    run_as_system: value['run_as_system'] === true,
    run_as_user_id: typeof value['run_as_user_id'] === 'string' ? value['run_as_user_id'] : '',
    run_as_user_id_script_source: typeof value['run_as_user_id_script_source'] === 'string' ? value['run_as_user_id_script_source'] : '',
    validation_method: (typeof value['validation_method'] === 'string' && value['validation_method'] !== '' ? value['validation_method'] : 'NO_VALIDATION') as DataApiConfig['validation_method'],
    secret_name: typeof value['secret_name'] === 'string' ? value['secret_name'] : '',
    log_function_arguments: value['log_function_arguments'] === true,
    can_evaluate: isPlainObject(value['can_evaluate']) ? value['can_evaluate'] : {},
  };
}

/** The configuration file read: its settings, or why it cannot be used. */
export type DataApiConfigFile = { config: DataApiConfig } | { invalid: string };

const parsedConfigs = new WeakMap<Pick<AppConfig, 'extraFiles'>, DataApiConfigFile | undefined>();

/**
 * The app's Data API configuration, or undefined when the app has none (the Data API was never enabled).
 * A file that does not parse or has the wrong shape is reported as `invalid`: such an app must not be served
 * with guessed settings. A deployed configuration object is never changed, so its file is read once.
 */
export function dataApiConfigOf(app: Pick<AppConfig, 'extraFiles'>): DataApiConfigFile | undefined {
  if (parsedConfigs.has(app)) return parsedConfigs.get(app);
  const config = readConfig(app);
  parsedConfigs.set(app, config);
  return config;
}

function readConfig(app: Pick<AppConfig, 'extraFiles'>): DataApiConfigFile | undefined {
  const bytes = app.extraFiles.get(DATA_API_CONFIG_FILE);
  if (!bytes) return undefined;
  const parsed = parseJson(bytesToText(bytes));
  if (!parsed.ok) return { invalid: `${DATA_API_CONFIG_FILE} is not JSON: ${parsed.message}` };
  const problems = dataApiConfigProblems(parsed.value);
  if (problems.length > 0) return { invalid: `${DATA_API_CONFIG_FILE}: ${problems.map((problem) => `${problem.path || '(root)'}: ${problem.message}`).join('; ')}` };
  return { config: withDataApiDefaults(parsed.value as Record<string, unknown>) };
}
