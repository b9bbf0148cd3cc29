// Validation of an app model against every rule of spec sections 2.1-2.12 and 8. All violations are
// collected and returned at once; each names the file (through the loader's locator when the app was
// read from files, otherwise the current-layout file), the JSON path inside it and a stable rule id.

import { isIpOrCidr } from './ip-access';
import { isPlainObject, jsonPath, show, type JsonObject } from './json';
import {
  isDataSourceType,
  isFederatedType,
  type AppConfig,
  type AppService,
  type CollectionRule,
  defaultIndexName,
  type JsonSchema,
} from './model';
import { type FileLocator } from './origins';
import { layoutPaths as at } from './paths';
import { resolverKey } from './normalize';
import { sortViolations, type ConfigViolation } from './violations';
import { checkRuleSet, compileFinding, expressionFinding } from './validate-rules';
import { checkFlexibleSyncSite, checkSyncCompatibleRoles } from './validate-flexible-sync';
import { functionSyntaxError } from './function-source';
import { isSafeRelativePath, pathNameProblem } from './safe-names';
import { HOSTING_ATTRIBUTE_NAMES, HOSTING_LIMITS, hostingAttributeName, hostingResponseCode, isEmptyAttribute } from './hosting';

export interface ValidateOptions {
  /** Maps a model object to the file it came from; LoadedApp.fileOf. Defaults to current-layout paths. */
  fileOf?: FileLocator;
  /**
   * Names of secrets that exist outside secrets.json (created through the admin API). Exports never
   * carry secret values, so an imported app's from_secret values and secret_config refer to these.
   */
  secretNames?: Iterable<string>;
  /**
   * Receives what App Services accepts but the user should hear about (a role that flexible sync will
   * deny), sorted, located like the violations. Without it they are dropped.
   */
  warnings?: ConfigViolation[];
}

const NAME_CHARSET = /^[A-Za-z0-9_-]+$/;

/** bsonType values a schema may use (spec 2.7; App Services JSON schema). */
// `float`: a Realm Float property (App Services took it in sync schemas; a document holds it as a double).
export const KNOWN_BSON_TYPES: readonly string[] = [
  'object', 'array', 'string', 'int', 'long', 'double', 'float', 'decimal', 'number', 'bool', 'boolean', 'date', 'timestamp',
  'objectId', 'binData', 'uuid', 'null', 'regex', 'javascript', 'javascriptWithScope', 'symbol', 'minKey', 'maxKey',
  'mixed', 'dbPointer', 'undefined',
];

/**
 * Accepted spellings of partition.type (case-insensitive) and the schema bsonTypes each matches.
 * Spec 8: String, ObjectID, Long or UUID. 'int' is accepted as Long because a sync "int" is 64-bit.
 */
export const PARTITION_KEY_TYPES: Readonly<Record<string, { canonical: string; bsonTypes: readonly string[] }>> = {
  string: { canonical: 'String', bsonTypes: ['string'] },
  objectid: { canonical: 'ObjectID', bsonTypes: ['objectId'] },
  long: { canonical: 'Long', bsonTypes: ['long', 'int'] },
  int: { canonical: 'Long', bsonTypes: ['long', 'int'] },
  int64: { canonical: 'Long', bsonTypes: ['long', 'int'] },
  uuid: { canonical: 'UUID', bsonTypes: ['uuid'] },
};

export const READ_PREFERENCES: readonly string[] = ['primary', 'primaryPreferred', 'secondary', 'secondaryPreferred', 'nearest'];
const SYNC_TYPES = ['partition', 'flexible'];
const SYNC_STATES = ['enabled', 'disabled'];
const DOCUMENT_EXPANSIONS = ['%%root', '%%prevRoot', '%%prev', '%%this', '%%parent'];
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'ANY'];
const VALIDATION_METHODS = ['NO_VALIDATION', 'SECRET_AS_QUERY_PARAM', 'VERIFY_PAYLOAD'];
const WEBHOOK_FIELDS = [
  'id', 'name', 'private', 'can_evaluate', 'disable_arg_logs', 'run_as_system', 'run_as_user_id',
  'run_as_user_id_script_source', 'respond_result', 'options', 'fetch_custom_user_data', 'create_user_on_auth',
  // Stitch-era webhooks ("run as the authenticated user"), still in old exports.
  'run_as_authed_user',
];
const WEBHOOK_OPTION_FIELDS = ['httpMethod', 'validationMethod', 'secret', 'secretAsQueryParam'];

type Kind = 'string' | 'boolean' | 'number' | 'object' | 'array';

function kindMatches(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
  }
}

class Checker {
  readonly violations: ConfigViolation[] = [];
  readonly warnings: ConfigViolation[] = [];

  constructor(private readonly fileOf: FileLocator | undefined) {}

  /** Reports against a model object; `file` is its current-layout file, used when no origin is known. */
  report(resource: object, file: string, path: string, rule: string, message: string): void {
    const where = this.locate(resource, file, path);
    this.violations.push({ file: where.file, path: where.path, rule, message });
  }

  /** Like report, for what is accepted but worth telling. */
  warn(resource: object, file: string, path: string, rule: string, message: string): void {
    const where = this.locate(resource, file, path);
    this.warnings.push({ file: where.file, path: where.path, rule, message });
  }

  locate(resource: object, file: string, path: string): { file: string; path: string } {
    const located = this.fileOf?.(resource, path);
    return located ?? (path === '#source' ? { file, path: '' } : { file, path });
  }

  type(resource: object, file: string, obj: JsonObject, key: string, kind: Kind, base = ''): boolean {
    const value = obj[key];
    if (value === undefined) return true;
    if (kindMatches(value, kind)) return true;
    this.report(resource, file, jsonPath(base, key), 'field.type', `${key} must be ${kind === 'array' || kind === 'object' ? 'an' : 'a'} ${kind}`);
    return false;
  }

  /** A name that becomes a file or directory name (see safe-names.ts). */
  pathName(resource: object, file: string, value: unknown, rule: string, what: string, nested = false, path = 'name'): void {
    if (typeof value !== 'string' || value === '') return; // the required and type rules report these
    const problem = pathNameProblem(value, nested);
    if (problem) this.report(resource, file, path, rule, `${what} ${JSON.stringify(value)} ${problem}`);
  }

  /** A source that the function runtime could not compile. */
  source(resource: object, file: string, source: unknown, rule: string, what: string): void {
    if (typeof source !== 'string' || source.trim() === '') return;
    const error = functionSyntaxError(source);
    if (error) this.report(resource, file, '#source', rule, `${what} does not compile: ${error}`);
  }

  /** name rules: required, length, charset (spec 8). */
  name(resource: object, file: string, value: unknown, ruleBase: string, max: number, min = 1, path = 'name'): void {
    if (value === undefined || value === null || value === '') {
      this.report(resource, file, path, `${ruleBase}.required`, `${ruleBase.split('.')[0].replace(/_/g, ' ')} name is required`);
      return;
    }
    if (typeof value !== 'string') {
      this.report(resource, file, path, 'field.type', 'name must be a string');
      return;
    }
    if (value.length < min || value.length > max) {
      this.report(resource, file, path, `${ruleBase}.length`, `name "${value}" must be ${min} to ${max} characters long`);
    }
    if (!NAME_CHARSET.test(value)) {
      this.report(resource, file, path, `${ruleBase}.charset`, `name "${value}" may contain only ASCII letters, digits, underscores and hyphens`);
    }
  }
}

export function validateApp(app: AppConfig, options: ValidateOptions = {}): ConfigViolation[] {
  const c = new Checker(options.fileOf);
  const secretNames = new Set(isPlainObject(app.secrets) ? Object.entries(app.secrets).filter(([, v]) => typeof v === 'string').map(([k]) => k) : []);
  for (const name of options.secretNames ?? []) secretNames.add(name);
  const functionNames = new Set(app.functions.map((f) => f.config.name).filter((n) => typeof n === 'string'));
  const servicesByName = new Map<string, AppService>();
  for (const s of app.services) if (typeof s.config.name === 'string' && !servicesByName.has(s.config.name)) servicesByName.set(s.config.name, s);

  checkSettings(c, app, servicesByName);
  checkSecrets(c, app);
  checkAuthProviders(c, app, secretNames);
  checkFunctions(c, app);
  for (const s of app.services) checkService(c, s, app, secretNames, servicesByName);
  unique(c, app.services.map((s) => ({ resource: s.config, file: `${at.serviceDir(s)}/config.json`, name: s.config.name })), 'service.name.unique', 'service');
  checkTriggers(c, app, functionNames, servicesByName);
  checkValues(c, app, secretNames);
  checkHosting(c, app);
  checkSync(c, app, servicesByName);
  checkGraphql(c, app, functionNames);
  checkIds(c, app);
  options.warnings?.push(...sortViolations(dedupe(c.warnings)));
  return sortViolations(dedupe(c.violations));
}

function dedupe(violations: ConfigViolation[]): ConfigViolation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = `${v.file}\u0000${v.path}\u0000${v.rule}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function unique(c: Checker, items: Array<{ resource: object; file: string; name: unknown; path?: string }>, rule: string, what: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    if (typeof item.name !== 'string' || item.name === '') continue;
    if (seen.has(item.name)) c.report(item.resource, item.file, item.path ?? 'name', rule, `${what} name "${item.name}" is used more than once`);
    seen.add(item.name);
  }
}

// ---- application settings (2.2) -------------------------------------------------------------------

/** The refresh token lifetimes App Services allowed an app (30 minutes to 180 days). */
export const REFRESH_TOKEN_LIFETIME_SECONDS = { min: 1_800, max: 15_552_000 } as const;

export function isRefreshTokenLifetime(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= REFRESH_TOKEN_LIFETIME_SECONDS.min && value <= REFRESH_TOKEN_LIFETIME_SECONDS.max;
}

function checkSettings(c: Checker, app: AppConfig, servicesByName: Map<string, AppService>): void {
  const s = app.settings as JsonObject;
  const file = at.settings;
  c.name(s, file, s.name, 'app.name', 32);
  for (const key of ['app_id', 'deployment_model', 'location']) c.type(s, file, s, key, 'string');
  if (c.type(s, file, s, 'security', 'object') && isPlainObject(s.security)) {
    const accessList = s.security.ip_access_list;
    if (accessList !== undefined) {
      if (!Array.isArray(accessList)) c.report(s, file, 'security.ip_access_list', 'field.type', 'ip_access_list must be an array of {_id, address, comment}');
      else
        accessList.forEach((entry, i) => {
          if (!isPlainObject(entry) || typeof entry._id !== 'string' || typeof entry.address !== 'string' || !isIpOrCidr(entry.address)) {
            c.report(s, file, `security.ip_access_list[${i}]`, 'app.ip_access_list.entry', 'each access list entry needs an _id and an address that is an IP address or a CIDR block');
          }
        });
    }
    const lifetime = s.security.refresh_token_expiration_seconds;
    if (lifetime !== undefined && !isRefreshTokenLifetime(lifetime)) {
      c.report(s, file, 'security.refresh_token_expiration_seconds', 'app.refresh_token_expiration', `refresh_token_expiration_seconds must be a whole number of seconds from ${REFRESH_TOKEN_LIFETIME_SECONDS.min} to ${REFRESH_TOKEN_LIFETIME_SECONDS.max}`);
    }
    const origins = s.security.allowed_request_origins;
    if (origins !== undefined) {
      if (!Array.isArray(origins)) c.report(s, file, 'security.allowed_request_origins', 'field.type', 'allowed_request_origins must be an array');
      else
        origins.forEach((o, i) => {
          if (typeof o !== 'string' || !/^[a-z][a-z0-9+.-]*:\/\/[^\s/]+$/i.test(o.replace(/\/$/, ''))) {
            c.report(s, file, `security.allowed_request_origins[${i}]`, 'app.allowed_request_origins.url', 'each allowed request origin must be an origin URL such as https://example.com');
          }
        });
    }
  }
  if (c.type(s, file, s, 'hosting', 'object') && isPlainObject(s.hosting)) {
    c.type(s, file, s.hosting, 'enabled', 'boolean', 'hosting');
    for (const key of ['custom_domain', 'app_default_domain']) {
      const v = s.hosting[key];
      if (v !== undefined && v !== '' && (typeof v !== 'string' || !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i.test(v))) {
        // App Services set app_default_domain itself and ignored what an import said (a Stitch template's placeholder).
        if (key === 'app_default_domain' && typeof v === 'string') {
          c.warn(s, file, `hosting.${key}`, 'app.hosting.default_domain', `app_default_domain ${JSON.stringify(v)} is not a domain name: no request's host will match it`);
          continue;
        }
        c.report(s, file, `hosting.${key}`, 'app.hosting.domain', `${key} must be a domain name`);
      }
    }
    const errorPath = s.hosting['default_error_path'];
    if (errorPath !== undefined && errorPath !== '' && (typeof errorPath !== 'string' || !errorPath.startsWith('/') || !isSafeRelativePath(errorPath.slice(1)))) {
      c.report(s, file, 'hosting.default_error_path', 'hosting.path.format', 'default_error_path must be a resource path starting with / (no "." or ".." segments)');
    }
    for (const key of ['default_response_code', 'default_error_code']) {
      const code = s.hosting[key];
      if (code !== undefined && code !== '' && hostingResponseCode(code) === undefined) c.report(s, file, `hosting.${key}`, 'app.hosting.response_code', `${key} must be an HTTP status code (200 to 599)`);
    }
  }
  if (c.type(s, file, s, 'custom_user_data_config', 'object') && isPlainObject(s.custom_user_data_config)) {
    const cud = s.custom_user_data_config;
    const base = 'custom_user_data_config';
    c.type(s, file, cud, 'enabled', 'boolean', base);
    if (cud.enabled === true) {
      for (const key of ['mongo_service_id', 'database_name', 'collection_name', 'user_id_field']) {
        if (typeof cud[key] !== 'string' || cud[key] === '') c.report(s, file, `${base}.${key}`, 'app.custom_user_data.required', `${key} is required when custom user data is enabled`);
      }
      const ref = cud.mongo_service_id;
      if (typeof ref === 'string' && ref !== '') {
        const svc = app.services.find((x) => x.config.id === ref) ?? servicesByName.get(ref);
        if (!svc || !isDataSourceType(svc.config.type)) {
          c.report(s, file, `${base}.mongo_service_id`, 'app.custom_user_data.service', `custom user data refers to "${ref}", which is not a data-source service of this app`);
        }
      }
    }
  }
}

/**
 * secrets.json maps secret names to values. realm-cli's form, option values per auth provider and per
 * service under `auth_providers` and `services`, is accepted as well.
 */
function checkSecrets(c: Checker, app: AppConfig): void {
  if (!app.secrets) return;
  for (const [name, value] of Object.entries(app.secrets)) {
    if ((name === 'auth_providers' || name === 'services') && isPlainObject(value)) {
      for (const [owner, options] of Object.entries(value)) {
        const ok = isPlainObject(options) && Object.values(options).every((v) => typeof v === 'string');
        if (!ok) c.report(app.secrets, at.secrets, jsonPath(name, owner), 'secrets.value.type', `secrets of "${owner}" must map option names to string values`);
      }
      continue;
    }
    if (typeof value !== 'string') c.report(app.secrets, at.secrets, jsonPath('', name), 'secrets.value.type', `secret "${name}" must have a string value`);
  }
}

function checkSecretConfig(c: Checker, resource: JsonObject, file: string, secretNames: Set<string>): void {
  const sc = resource.secret_config;
  if (sc === undefined) return;
  if (!isPlainObject(sc)) {
    c.report(resource, file, 'secret_config', 'field.type', 'secret_config must be an object');
    return;
  }
  for (const [option, secret] of Object.entries(sc)) {
    const path = jsonPath('secret_config', option);
    // A list of names is real too: custom-token providers keep several signing keys.
    const names = Array.isArray(secret) ? secret : [secret];
    if (names.some((n) => typeof n !== 'string')) {
      c.report(resource, file, path, 'field.type', 'each secret_config value must be a secret name (or a list of them)');
      continue;
    }
    const missing = (names as string[]).find((n) => !secretNames.has(n));
    if (missing !== undefined) c.report(resource, file, path, 'secret_config.secret.missing', `secret "${missing}" does not exist`);
  }
}

// ---- auth providers (2.3), functions (2.4) ------------------------------------------------------------

function checkAuthProviders(c: Checker, app: AppConfig, secretNames: Set<string>): void {
  for (const p of app.authProviders) {
    const o = p as JsonObject;
    const file = at.authProvider(p);
    if (typeof o.name !== 'string' || o.name === '') c.report(o, file, 'name', 'auth_provider.name.required', 'auth provider name is required');
    c.pathName(o, file, o.name, 'auth_provider.name.path', 'auth provider name');
    if (typeof o.type !== 'string' || o.type === '') c.report(o, file, 'type', 'auth_provider.type.required', 'auth provider type is required');
    c.type(o, file, o, 'id', 'string');
    c.type(o, file, o, 'disabled', 'boolean');
    c.type(o, file, o, 'config', 'object');
    checkSecretConfig(c, o, file, secretNames);
    if (c.type(o, file, o, 'metadata_fields', 'array') && Array.isArray(o.metadata_fields)) {
      o.metadata_fields.forEach((m, i) => {
        if (!isPlainObject(m) || typeof m.name !== 'string' || typeof m.required !== 'boolean') {
          c.report(o, file, `metadata_fields[${i}]`, 'auth_provider.metadata_fields.item', 'each metadata field needs name (string) and required (boolean)');
        }
      });
    }
  }
  unique(c, app.authProviders.map((p) => ({ resource: p, file: at.authProvider(p), name: p.name })), 'auth_provider.name.unique', 'auth provider');
}

const FUNCTION_TYPES: Array<[string, Kind]> = [
  ['id', 'string'], ['private', 'boolean'], ['disable_arg_logs', 'boolean'], ['run_as_system', 'boolean'],
  ['run_as_user_id', 'string'], ['run_as_user_id_script_source', 'string'],
];

function checkFunctions(c: Checker, app: AppConfig): void {
  for (const f of app.functions) {
    const o = f.config as JsonObject;
    const file = `${at.functionDir(f)}/config.json`;
    if (typeof o.name !== 'string' || o.name === '') c.report(o, file, 'name', 'function.name.required', 'function name is required');
    // Function names may nest in folders ("utils/format"), so "/" is allowed between segments.
    c.pathName(o, file, o.name, 'function.name.path', 'function name', true);
    for (const [key, kind] of FUNCTION_TYPES) c.type(o, file, o, key, kind);
    if (typeof f.source !== 'string' || f.source.trim() === '') {
      c.report(o, `${at.functionDir(f)}/source.js`, '#source', 'function.source.missing', `function "${String(o.name)}" has no source`);
    }
    c.source(o, `${at.functionDir(f)}/source.js`, f.source, 'function.source.syntax', `function "${String(o.name)}"`);
  }
  unique(c, app.functions.map((f) => ({ resource: f.config, file: `${at.functionDir(f)}/config.json`, name: f.config.name })), 'function.name.unique', 'function');
}

// ---- services (2.5, 2.7, 2.8) --------------------------------------------------------------------------

function checkService(c: Checker, s: AppService, app: AppConfig, secretNames: Set<string>, servicesByName: Map<string, AppService>): void {
  const o = s.config as JsonObject;
  const file = `${at.serviceDir(s)}/config.json`;
  c.name(o, file, o.name, 'service.name', 64);
  if (typeof o.type !== 'string' || o.type === '') c.report(o, file, 'type', 'service.type.required', 'service type is required');
  c.type(o, file, o, 'id', 'string');
  c.type(o, file, o, 'config', 'object');
  checkSecretConfig(c, o, file, secretNames);
  const dataSource = isDataSourceType(o.type);
  const federated = isFederatedType(o.type);
  if (dataSource && isPlainObject(o.config)) checkDataSourceConfig(c, o, file, o.config, String(o.type), federated);
  if (dataSource && o.config === undefined) c.report(o, file, 'config', 'datasource.link.exactly_one', 'a data source needs config with exactly one of clusterName and dataLakeName');

  if (s.defaultRule) {
    const r = s.defaultRule as JsonObject;
    const rfile = `${at.serviceDir(s)}/default_rule.json`;
    if (!dataSource) c.report(r, rfile, '', 'rule.service_type', 'only data-source services take a default rule');
    else if (federated) reportFederatedRules(c, r, rfile);
    else checkRolesAndFilters(c, r, rfile, true);
  }
  const namespaces = new Set<string>();
  for (const r of s.collectionRules) {
    const ro = r as JsonObject;
    const rfile = at.collectionRule(s, r);
    if (!dataSource) {
      c.report(ro, rfile, '', 'rule.service_type', 'collection rules apply only to data-source services');
      continue;
    }
    for (const key of ['database', 'collection']) {
      if (typeof ro[key] !== 'string' || ro[key] === '') c.report(ro, rfile, key, `rule.${key}.required`, `${key} is required in a collection rule`);
    }
    // Both become directories of an export (data_sources/<service>/<database>/<collection>/).
    if (typeof ro.database === 'string' && (/[/\\. "$]/.test(ro.database) || ro.database.includes('\u0000'))) {
      c.report(ro, rfile, 'database', 'rule.database.name', `database name ${JSON.stringify(ro.database)} may not contain / \\ . space " $ or NUL (MongoDB database names)`);
    }
    c.pathName(ro, rfile, ro.collection, 'rule.collection.name', 'collection name', false, 'collection');
    const ns = `${String(ro.database)}.${String(ro.collection)}`;
    if (namespaces.has(ns)) c.report(ro, rfile, 'collection', 'rule.namespace.unique', `collection ${ns} has more than one rule`);
    namespaces.add(ns);
    if (federated) {
      reportFederatedRules(c, ro, rfile);
      if (ro.schema !== undefined) c.report(ro, rfile, 'schema', 'datasource.federated.schema', 'federated data sources take no schemas');
      if (ro.relationships !== undefined) c.report(ro, rfile, 'relationships', 'datasource.federated.relationships', 'federated data sources take no relationships');
      continue;
    }
    checkRolesAndFilters(c, ro, rfile, false);
    if (ro.schema !== undefined) checkSchema(c, ro, rfile, ro.schema, 'schema', true);
    if (ro.relationships !== undefined) checkRelationships(c, r, rfile, servicesByName, isSynced(app, s));
    if (ro.indexes !== undefined) checkIndexes(c, ro, rfile);
  }
  for (const r of s.rules) {
    const ro = r as JsonObject;
    const rfile = at.serviceRule(s, r);
    if (dataSource) {
      c.report(ro, rfile, '', 'service_rule.service_type', 'a data-source service takes collection rules (with database and collection), not service rules');
      continue;
    }
    c.name(ro, rfile, ro.name, 'service_rule.name', 64);
    // Stitch's exports left `actions` out of a rule that allowed none.
    if (ro.actions !== undefined && (!Array.isArray(ro.actions) || ro.actions.some((a) => typeof a !== 'string'))) {
      c.report(ro, rfile, 'actions', 'service_rule.actions.type', 'actions must be an array of service action names');
    }
  }
  unique(c, s.rules.map((r) => ({ resource: r, file: at.serviceRule(s, r), name: r.name })), 'service_rule.name.unique', 'service rule');
  for (const w of s.webhooks) checkWebhook(c, s, w.config, w.source, `${at.webhookDir(s, w)}/config.json`, `${at.webhookDir(s, w)}/source.js`, dataSource);
  unique(c, s.webhooks.map((w) => ({ resource: w.config, file: `${at.webhookDir(s, w)}/config.json`, name: w.config.name })), 'webhook.name.unique', 'incoming webhook');
}

function checkDataSourceConfig(c: Checker, o: JsonObject, file: string, cfg: JsonObject, type: string, federated: boolean): void {
  const hasCluster = cfg.clusterName !== undefined && cfg.clusterName !== '';
  const hasLake = cfg.dataLakeName !== undefined && cfg.dataLakeName !== '';
  // A self-hosted "mongodb" service links by uri instead of by cluster name.
  const hasUri = type === 'mongodb' && typeof cfg.uri === 'string';
  if (hasCluster && hasLake) c.report(o, file, 'config.dataLakeName', 'datasource.link.exactly_one', 'give exactly one of clusterName and dataLakeName, not both');
  else if (!hasCluster && !hasLake && !hasUri) {
    c.report(
      o,
      file,
      federated ? 'config.dataLakeName' : 'config.clusterName',
      'datasource.link.exactly_one',
      'exactly one of clusterName and dataLakeName is required (an export that names no cluster, as Stitch and realm-cli wrote them, keeps the cluster of the app it is pushed into: create it with `tessera apps create --cluster <name>`)',
    );
  }
  else if (federated && hasCluster) c.report(o, file, 'config.clusterName', 'datasource.federated.cluster_name', `a ${type} service links a federated instance with dataLakeName, not clusterName`);
  else if (!federated && hasLake) c.report(o, file, 'config.dataLakeName', 'datasource.cluster.data_lake_name', `a ${type} service links a cluster with clusterName; use type datalake for a federated instance`);
  c.type(o, file, cfg, 'clusterName', 'string', 'config');
  c.type(o, file, cfg, 'dataLakeName', 'string', 'config');
  c.type(o, file, cfg, 'wireProtocolEnabled', 'boolean', 'config');
  if (cfg.readPreference !== undefined) {
    if (federated) c.report(o, file, 'config.readPreference', 'datasource.federated.read_preference', 'readPreference is not available for federated data sources');
    else if (typeof cfg.readPreference !== 'string' || !READ_PREFERENCES.includes(cfg.readPreference)) {
      c.report(o, file, 'config.readPreference', 'datasource.read_preference.value', `readPreference must be one of ${READ_PREFERENCES.join(', ')}`);
    }
  }
  if (cfg.sync !== undefined && federated) c.report(o, file, 'config.sync', 'datasource.federated.sync', 'sync cannot be used with a federated data source');
}

function reportFederatedRules(c: Checker, r: JsonObject, file: string): void {
  for (const key of ['roles', 'filters']) {
    if (Array.isArray(r[key]) ? (r[key] as unknown[]).length > 0 : r[key] !== undefined) {
      c.report(r, file, key, 'datasource.federated.rules', 'federated data sources take no rules');
    }
  }
}

function checkRolesAndFilters(c: Checker, r: JsonObject, file: string, isDefault: boolean): void {
  const before = c.violations.length;
  checkRoleAndFilterShapes(c, r, file);
  // An expression the shape checks already refused (a filter's apply_when reading %%root) is not named twice.
  const reported = c.violations.slice(before).map((v) => v.path);
  for (const finding of checkRuleSet(r)) {
    const located = c.locate(r, file, finding.path).path;
    if (reported.some((p) => p !== '' && (located === p || located.startsWith(`${p}.`) || located.startsWith(`${p}[`)))) continue;
    c.report(r, file, finding.path, finding.rule, finding.message);
  }
  if (c.violations.length === before) {
    const finding = compileFinding(r, isDefault);
    if (finding) c.report(r, file, finding.path, finding.rule, finding.message);
  }
}

function checkRoleAndFilterShapes(c: Checker, r: JsonObject, file: string): void {
  if (c.type(r, file, r, 'roles', 'array') && Array.isArray(r.roles)) {
    const names = new Set<string>();
    r.roles.forEach((role, i) => {
      const base = `roles[${i}]`;
      if (!isPlainObject(role)) {
        c.report(r, file, base, 'role.shape', 'each role must be an object');
        return;
      }
      limitedName(c, r, file, role.name, base, 'role', names);
      if (role.fields !== undefined) {
        if (!isPlainObject(role.fields)) c.report(r, file, `${base}.fields`, 'field.type', 'fields must be an object');
        else checkFieldPermissions(c, r, file, role.fields, `${base}.fields`);
      }
      for (const key of ['document_filters', 'additional_fields']) c.type(r, file, role, key, 'object', base);
    });
  }
  if (c.type(r, file, r, 'filters', 'array') && Array.isArray(r.filters)) {
    const names = new Set<string>();
    r.filters.forEach((filter, i) => {
      const base = `filters[${i}]`;
      if (!isPlainObject(filter)) {
        c.report(r, file, base, 'filter.shape', 'each filter must be an object');
        return;
      }
      limitedName(c, r, file, filter.name, base, 'filter', names);
      c.type(r, file, filter, 'query', 'object', base);
      const expansion = findExpansion(filter.apply_when, DOCUMENT_EXPANSIONS);
      if (expansion) c.report(r, file, `${base}.apply_when`, 'filter.apply_when.document_expansion', `a filter's apply_when is evaluated before documents are read and cannot use ${expansion}`);
      // Filters whose projections differ in kind are accepted, as App Services accepts them: the query
      // fails only when both apply to the same request (spec 7), which the data path reports then.
      if (c.type(r, file, filter, 'projection', 'object', base) && isPlainObject(filter.projection)) {
        if (projectionMode(filter.projection) === 'mixed') c.report(r, file, `${base}.projection`, 'filter.projection.mixed', 'a projection must be all inclusive or all exclusive');
      }
    });
  }
}

function limitedName(c: Checker, r: JsonObject, file: string, name: unknown, base: string, what: 'role' | 'filter', seen: Set<string>): void {
  if (typeof name !== 'string' || name === '') {
    c.report(r, file, `${base}.name`, `${what}.name.required`, `${what} name is required`);
    return;
  }
  if (name.length > 100) c.report(r, file, `${base}.name`, `${what}.name.length`, `${what} name must be at most 100 characters`);
  if (seen.has(name)) c.report(r, file, `${base}.name`, `${what}.name.unique`, `${what} name "${name}" is used more than once in this collection`);
  seen.add(name);
}

function checkFieldPermissions(c: Checker, r: JsonObject, file: string, fields: JsonObject, base: string): void {
  for (const [name, perm] of Object.entries(fields)) {
    const path = jsonPath(base, name);
    if (!isPlainObject(perm)) {
      c.report(r, file, path, 'role.fields.shape', 'a field permission must be an object with read, write and fields');
      continue;
    }
    if (perm.fields !== undefined) {
      if (isPlainObject(perm.fields)) checkFieldPermissions(c, r, file, perm.fields, `${path}.fields`);
      else c.report(r, file, `${path}.fields`, 'role.fields.shape', 'fields must be an object');
    }
  }
}

/** 'inclusive', 'exclusive', 'mixed' or undefined (nothing decisive). _id is allowed either way. */
function projectionMode(projection: JsonObject): 'inclusive' | 'exclusive' | 'mixed' | undefined {
  let inc = false;
  let exc = false;
  for (const [key, v] of Object.entries(projection)) {
    if (key === '_id') continue;
    if (v === 1 || v === true) inc = true;
    else if (v === 0 || v === false) exc = true;
  }
  return inc && exc ? 'mixed' : inc ? 'inclusive' : exc ? 'exclusive' : undefined;
}

function findExpansion(expr: unknown, names: readonly string[]): string | undefined {
  const hit = (s: string) => names.find((n) => s === n || s.startsWith(`${n}.`));
  if (typeof expr === 'string') return hit(expr);
  if (Array.isArray(expr)) {
    for (const e of expr) {
      const h = findExpansion(e, names);
      if (h) return h;
    }
  } else if (isPlainObject(expr)) {
    for (const [k, v] of Object.entries(expr)) {
      const h = hit(k) ?? findExpansion(v, names);
      if (h) return h;
    }
  }
  return undefined;
}

// ---- schemas and relationships (2.7) ---------------------------------------------------------------------

function checkSchema(c: Checker, r: JsonObject, file: string, schema: unknown, path: string, root: boolean): void {
  if (!isPlainObject(schema)) {
    c.report(r, file, path, 'schema.shape', 'a schema must be an object');
    return;
  }
  const bt = schema.bsonType;
  // A root without bsonType is an object schema: App Services deployed such schemas (realm-cli apps kept
  // them for years) and treated the root as an object. Only a root that names another type is refused.
  const rootType = bt ?? schema.type;
  if (root && rootType !== undefined && rootType !== 'object') c.report(r, file, `${path}.bsonType`, 'schema.root.object', 'the schema of a collection must have bsonType "object"');
  if (bt !== undefined) {
    const types = Array.isArray(bt) ? bt : [bt];
    if (types.length === 0 || types.some((t) => typeof t !== 'string')) c.report(r, file, `${path}.bsonType`, 'field.type', 'bsonType must be a type name or a list of them');
    for (const t of types) {
      if (typeof t === 'string' && !KNOWN_BSON_TYPES.includes(t)) c.report(r, file, `${path}.bsonType`, 'schema.bsonType.unknown', `unknown field type "${t}"`);
    }
  }
  c.type(r, file, schema, 'title', 'string', path);
  if (schema.properties !== undefined) {
    if (!isPlainObject(schema.properties)) c.report(r, file, `${path}.properties`, 'field.type', 'properties must be an object');
    else for (const [name, sub] of Object.entries(schema.properties)) checkSchema(c, r, file, sub, jsonPath(`${path}.properties`, name), false);
  }
  if (schema.items !== undefined) {
    if (Array.isArray(schema.items)) schema.items.forEach((sub, i) => checkSchema(c, r, file, sub, `${path}.items[${i}]`, false));
    else checkSchema(c, r, file, schema.items, `${path}.items`, false);
  }
  // A required name without a property is valid JSON Schema (the document must hold the field, of any
  // type) and App Services accepted it, so it is not refused.
  if (schema.required !== undefined && (!Array.isArray(schema.required) || schema.required.some((n) => typeof n !== 'string'))) {
    c.report(r, file, `${path}.required`, 'field.type', 'required must be an array of property names');
  }
}

/** The schema of a (dot-separated, `[]` for array elements) field path, if the schema defines it. */
function schemaAt(schema: unknown, fieldPath: string): JsonSchema | undefined {
  let node: unknown = schema;
  for (const part of fieldPath.split('.')) {
    if (!isPlainObject(node)) return undefined;
    if (part === '[]') {
      // The elements of an array (a list or set), or the values of a dictionary (App Services' docs: the same syntax).
      node = isPlainObject(node.items) ? node.items : node.additionalProperties;
      continue;
    }
    if (!isPlainObject(node.properties)) {
      if (isPlainObject(node.items)) node = node.items;
      if (!isPlainObject(node) || !isPlainObject(node.properties)) return undefined;
    }
    node = (node.properties)[part];
  }
  return isPlainObject(node) ? (node) : undefined;
}

const REF_FORM = /^#\/relationship\/([^/]+)\/([^/]+)\/([^/]+)$/;

/** Whether partition-based sync (in sync/config.json or embedded) names this service. */
function isSynced(app: AppConfig, s: AppService): boolean {
  const embedded = isPlainObject(s.config.config) && isPlainObject(s.config.config.sync);
  const file = app.sync !== undefined && app.sync.service_name === s.config.name && (app.sync.type === 'partition' || app.sync.partition !== undefined);
  return embedded || file;
}

const indexOptions = new Set(['key', 'name', 'unique', 'sparse']);
/** MongoDB's limit of indexes per collection, `_id_` included. */
const maxIndexes = 64;

/**
 * A collection rule's `indexes` (Tessera): what the deploy creates on the cluster, checked so that a push
 * names every problem instead of the deploy failing halfway. Key patterns of ascending and descending
 * fields only (the embedded engine has no text, geo or hashed indexes), unique names, no `_id_` but `{_id: 1}`.
 */
function checkIndexes(c: Checker, rule: JsonObject, file: string): void {
  if (!Array.isArray(rule.indexes)) {
    c.report(rule, file, 'indexes', 'rule.indexes.type', 'indexes must be an array of {key, name, unique, sparse}');
    return;
  }
  if (rule.indexes.length > maxIndexes - 1) c.report(rule, file, 'indexes', 'rule.indexes.count', `a collection has at most ${maxIndexes} indexes, _id_ included`);
  const names = new Map<string, number>();
  rule.indexes.forEach((entry: unknown, i: number) => {
    const at = `indexes[${i}]`;
    if (!isPlainObject(entry)) {
      c.report(rule, file, at, 'rule.indexes.entry.type', 'an index must be an object with a key pattern');
      return;
    }
    const index = entry;
    for (const option of Object.keys(index)) {
      if (!indexOptions.has(option)) c.report(rule, file, `${at}.${option}`, 'rule.indexes.option', `index option ${JSON.stringify(option)} is not supported (key, name, unique, sparse)`);
    }
    const key = index.key;
    if (!isPlainObject(key) || Object.keys(key).length === 0) {
      c.report(rule, file, `${at}.key`, 'rule.indexes.key.required', 'an index needs a key pattern: an object of field names and 1 or -1');
      return;
    }
    if (Object.keys(key).length > 32) c.report(rule, file, `${at}.key`, 'rule.indexes.key.fields', 'an index key pattern has at most 32 fields');
    for (const [field, direction] of Object.entries(key)) {
      if (field === '' || field.startsWith('$') || field.split('.').some((part) => part === '') || field.includes('\u0000')) {
        c.report(rule, file, `${at}.key`, 'rule.indexes.key.field', `index field ${JSON.stringify(field)} is not a field path`);
      }
      if (direction !== 1 && direction !== -1) {
        c.report(rule, file, `${at}.key.${field}`, 'rule.indexes.key.direction', `index direction of ${JSON.stringify(field)} must be 1 or -1 (text, geo and hashed indexes are not supported)`);
      }
    }
    for (const flag of ['unique', 'sparse']) {
      if (index[flag] !== undefined && typeof index[flag] !== 'boolean') c.report(rule, file, `${at}.${flag}`, 'rule.indexes.option.type', `${flag} must be a boolean`);
    }
    if (index.name !== undefined && (typeof index.name !== 'string' || index.name === '')) {
      c.report(rule, file, `${at}.name`, 'rule.indexes.name.type', 'an index name must be a non-empty string');
      return;
    }
    const name = typeof index.name === 'string' ? index.name : defaultIndexName(key as Record<string, number>);
    const idOnly = Object.keys(key).length === 1 && key._id === 1;
    if (name === '_id_' || idOnly) c.report(rule, file, at, 'rule.indexes.id', 'the _id index exists on every collection: do not declare it');
    if (names.has(name)) c.report(rule, file, `${at}${index.name === undefined ? '.key' : '.name'}`, 'rule.indexes.name.unique', `index name ${JSON.stringify(name)} is declared twice (indexes[${names.get(name)}])`);
    names.set(name, i);
  });
}

function checkRelationships(c: Checker, rule: CollectionRule, file: string, servicesByName: Map<string, AppService>, synced: boolean): void {
  const r = rule as JsonObject;
  if (!isPlainObject(r.relationships)) {
    c.report(r, file, 'relationships', 'field.type', 'relationships must be an object keyed by source field');
    return;
  }
  for (const [field, rel] of Object.entries(r.relationships)) {
    const base = jsonPath('relationships', field);
    if (!isPlainObject(rel)) {
      c.report(r, file, base, 'relationship.shape', 'a relationship must be an object with ref, source_key, foreign_key and is_list');
      continue;
    }
    c.type(r, file, rel, 'is_list', 'boolean', base);
    for (const key of ['source_key', 'foreign_key']) {
      if (typeof rel[key] !== 'string' || rel[key] === '') c.report(r, file, `${base}.${key}`, `relationship.${key}.required`, `${key} is required`);
    }
    if (typeof rel.source_key === 'string' && rel.source_key !== '') {
      const source = r.schema === undefined ? undefined : schemaAt(r.schema, rel.source_key);
      // App Services' docs rule it out, yet its deployments wrote one: kept, and GraphQL does not follow it.
      if (rel.source_key === '_id') c.warn(r, file, `${base}.source_key`, 'relationship.source_key.id', 'the source field of a relationship cannot be _id: GraphQL does not follow this relationship');
      else if (r.schema === undefined) c.report(r, file, `${base}.source_key`, 'relationship.schema.missing', 'a relationship needs a schema for its collection');
      else if (!source) c.report(r, file, `${base}.source_key`, 'relationship.source_key.schema', `source_key "${rel.source_key}" is not in the collection schema`);
      else if (typeof rel.is_list === 'boolean' && !rel.source_key.includes('[]')) {
        const types = Array.isArray(source.bsonType) ? source.bsonType : [source.bsonType];
        // A dictionary of links (an object whose additionalProperties hold the keys) is a collection too: App
        // Services took is_list true for it (realm-core's harness writes it so), and false as well.
        const dictionary = types.includes('object') && isPlainObject(source.additionalProperties);
        if (!dictionary && types.includes('array') !== rel.is_list) {
          c.report(r, file, `${base}.is_list`, 'relationship.is_list.array', rel.is_list ? `is_list is true but "${rel.source_key}" is not an array` : `"${rel.source_key}" is an array, so is_list must be true`);
        }
      }
    }
    const m = typeof rel.ref === 'string' ? REF_FORM.exec(rel.ref) : null;
    if (!m) {
      c.report(r, file, `${base}.ref`, 'relationship.ref.format', 'ref must have the form #/relationship/<service name>/<database name>/<collection name>');
      continue;
    }
    const [, svcName, db, coll] = m;
    const target = servicesByName.get(svcName);
    if (!target || !isDataSourceType(target.config.type)) {
      c.report(r, file, `${base}.ref`, 'relationship.ref.service', `ref names service "${svcName}", which is not a data-source service of this app`);
      continue;
    }
    const foreign = target.collectionRules.find((x) => x.database === db && x.collection === coll);
    if (!foreign || foreign.schema === undefined) {
      c.report(r, file, `${base}.ref`, 'relationship.ref.target', `collection ${db}.${coll} of "${svcName}" has no schema`);
      continue;
    }
    if (typeof rel.foreign_key === 'string' && rel.foreign_key !== '' && !schemaAt(foreign.schema, rel.foreign_key)) {
      c.report(r, file, `${base}.foreign_key`, 'relationship.foreign_key.schema', `foreign_key "${rel.foreign_key}" is not in the schema of ${db}.${coll}`);
    } else if (synced && typeof rel.foreign_key === 'string' && rel.foreign_key !== '' && rel.foreign_key !== '_id') {
      // App Services kept such a relationship when sync was turned on later (its deployments wrote them).
      c.warn(r, file, `${base}.foreign_key`, 'relationship.sync.foreign_key', 'with sync, a relationship must point at the foreign _id: sync does not follow this one, the field syncs as its own value');
    }
  }
}

// ---- incoming webhooks (2.8) -----------------------------------------------------------------------------

function checkWebhook(c: Checker, s: AppService, o: JsonObject, source: string, file: string, sourceFile: string, dataSource: boolean): void {
  if (dataSource) c.report(o, file, '', 'webhook.service_type', `service "${String(s.config.name)}" is a data source and takes no incoming webhooks`);
  if (typeof o.name !== 'string' || o.name === '') c.report(o, file, 'name', 'webhook.name.required', 'incoming webhook name is required');
  c.pathName(o, file, o.name, 'webhook.name.path', 'incoming webhook name');
  for (const key of Object.keys(o)) {
    if (!WEBHOOK_FIELDS.includes(key)) c.report(o, file, jsonPath('', key), 'webhook.field.unknown', `"${key}" is not an incoming webhook field`);
  }
  for (const [key, kind] of FUNCTION_TYPES) c.type(o, file, o, key, kind);
  c.type(o, file, o, 'respond_result', 'boolean');
  if (c.type(o, file, o, 'options', 'object') && isPlainObject(o.options)) {
    const opts = o.options;
    for (const key of Object.keys(opts)) {
      if (!WEBHOOK_OPTION_FIELDS.includes(key)) c.report(o, file, jsonPath('options', key), 'webhook.field.unknown', `"${key}" is not an incoming webhook option`);
    }
    if (opts.httpMethod !== undefined && (typeof opts.httpMethod !== 'string' || !HTTP_METHODS.includes(opts.httpMethod))) {
      c.report(o, file, 'options.httpMethod', 'webhook.http_method.value', `httpMethod must be one of ${HTTP_METHODS.join(', ')}`);
    }
    if (opts.validationMethod !== undefined && (typeof opts.validationMethod !== 'string' || !VALIDATION_METHODS.includes(opts.validationMethod))) {
      c.report(o, file, 'options.validationMethod', 'webhook.validation_method.value', `validationMethod must be one of ${VALIDATION_METHODS.join(', ')}`);
    }
    c.type(o, file, opts, 'secret', 'string', 'options');
    c.type(o, file, opts, 'secretAsQueryParam', 'boolean', 'options');
  }
  if (typeof source !== 'string' || source.trim() === '') c.report(o, sourceFile, '#source', 'webhook.source.missing', `incoming webhook "${String(o.name)}" has no source`);
  c.source(o, sourceFile, source, 'webhook.source.syntax', `incoming webhook "${String(o.name)}"`);
}

// ---- triggers (2.9), values (2.11), hosting (2.10) ------------------------------------------------------

function checkTriggers(c: Checker, app: AppConfig, functionNames: Set<unknown>, servicesByName: Map<string, AppService>): void {
  for (const t of app.triggers) {
    const o = t as JsonObject;
    const file = at.trigger(t);
    c.name(o, file, o.name, 'trigger.name', 64);
    if (typeof o.type !== 'string' || o.type === '') c.report(o, file, 'type', 'trigger.type.required', 'trigger type is required');
    c.type(o, file, o, 'disabled', 'boolean');
    c.type(o, file, o, 'config', 'object');
    const processor = isPlainObject(o.event_processors) && isPlainObject(o.event_processors.FUNCTION) && isPlainObject(o.event_processors.FUNCTION.config)
      ? o.event_processors.FUNCTION.config.function_name
      : undefined;
    if (o.function_name !== undefined) {
      if (typeof o.function_name !== 'string') c.report(o, file, 'function_name', 'field.type', 'function_name must be a string');
      else if (!functionNames.has(o.function_name)) c.report(o, file, 'function_name', 'trigger.function.missing', `function "${o.function_name}" does not exist`);
    } else if (processor !== undefined) {
      if (!functionNames.has(processor)) c.report(o, file, 'event_processors.FUNCTION.config.function_name', 'trigger.function.missing', `function "${show(processor)}" does not exist`);
    } else if (!isPlainObject(o.event_processors)) {
      c.report(o, file, 'function_name', 'trigger.function.required', 'a trigger needs function_name (or an event processor)');
    }
    if (isPlainObject(o.config) && o.config.service_name !== undefined) {
      const name = o.config.service_name;
      if (typeof name !== 'string' || !servicesByName.has(name)) c.report(o, file, 'config.service_name', 'trigger.service.missing', `service "${show(name)}" does not exist`);
    }
  }
  unique(c, app.triggers.map((t) => ({ resource: t, file: at.trigger(t), name: t.name })), 'trigger.name.unique', 'trigger');
}

function checkValues(c: Checker, app: AppConfig, secretNames: Set<string>): void {
  for (const v of app.values) {
    const o = v as JsonObject;
    const file = at.value(v);
    if (typeof o.name !== 'string' || o.name === '') c.report(o, file, 'name', 'value.name.required', 'value name is required');
    c.pathName(o, file, o.name, 'value.name.path', 'value name');
    c.type(o, file, o, 'from_secret', 'boolean');
    if (!('value' in o)) {
      c.report(o, file, 'value', 'value.value.required', 'a value needs a value');
    } else if (o.from_secret === true) {
      if (typeof o.value !== 'string') c.report(o, file, 'value', 'value.secret.type', 'a value from a secret holds the secret name as a string');
      else if (!secretNames.has(o.value)) c.report(o, file, 'value', 'value.secret.missing', `secret "${o.value}" does not exist`);
    }
    // A plain value may hold any JSON value: App Services documents "any" (a string, number, array or
    // object), so a number is not refused.
  }
  unique(c, app.values.map((v) => ({ resource: v, file: at.value(v), name: v.name })), 'value.name.unique', 'value');
}

function checkHosting(c: Checker, app: AppConfig): void {
  if (!app.hosting) return;
  const list = app.hosting.metadata;
  const file = at.hostingMetadata;
  for (const path of app.hosting.files.keys()) {
    if (!path.startsWith('/') || !isSafeRelativePath(path.slice(1))) c.report(list, `hosting/files${path}`, '', 'hosting.path.format', `hosted file ${JSON.stringify(path)} would be written outside hosting/files`);
  }
  const seen = new Set<string>();
  list.forEach((item, i) => {
    const o = item as JsonObject;
    if (typeof o.path !== 'string' || !o.path.startsWith('/') || !isSafeRelativePath(o.path.slice(1))) {
      c.report(list, file, `[${i}].path`, 'hosting.path.format', 'path must be a resource path starting with / (no "." or ".." segments, no empty segments)');
    } else {
      if (seen.has(o.path)) c.report(list, file, `[${i}].path`, 'hosting.path.unique', `${o.path} is listed more than once`);
      seen.add(o.path);
      if (app.hosting?.files.has(o.path)) {
        // present
      } else if (o.path.split('/').includes('.DS_Store')) {
        // realm-cli uploaded macOS folder metadata with the site and App Services listed it; the reader drops such files.
        c.warn(list, file, `[${i}].path`, 'hosting.file.ignored', `${o.path} is macOS folder metadata: it is not deployed, and its entry is kept as it is`);
      } else c.report(list, file, `[${i}].path`, 'hosting.file.missing', `no file hosting/files${o.path}`);
    }
    if (!Array.isArray(o.attrs)) c.report(list, file, `[${i}].attrs`, 'field.type', 'attrs must be an array');
    else
      o.attrs.forEach((a, j) => {
        if (isEmptyAttribute(a)) return;
        if (!isPlainObject(a) || typeof a.name !== 'string' || typeof a.value !== 'string') {
          c.report(list, file, `[${i}].attrs[${j}]`, 'hosting.attr.shape', 'each attribute needs name and value strings');
        } else if (!hostingAttributeName(a.name)) {
          c.report(list, file, `[${i}].attrs[${j}].name`, 'hosting.attr.name', `${JSON.stringify(a.name)} is not a file metadata attribute (one of ${HOSTING_ATTRIBUTE_NAMES.join(', ')})`);
        }
      });
  });
  let total = 0;
  for (const [path, bytes] of app.hosting.files) {
    total += bytes.length;
    if (bytes.length > HOSTING_LIMITS.fileBytes) c.report(list, `hosting/files${path}`, '', 'hosting.file.size', `hosted file ${path} is ${bytes.length} bytes: the largest allowed is ${HOSTING_LIMITS.fileBytes}`);
  }
  if (app.hosting.files.size > HOSTING_LIMITS.files) c.report(list, file, '', 'hosting.files.count', `${app.hosting.files.size} hosted files: at most ${HOSTING_LIMITS.files} are allowed`);
  if (total > HOSTING_LIMITS.totalBytes) c.report(list, file, '', 'hosting.files.total', `hosted files total ${total} bytes: at most ${HOSTING_LIMITS.totalBytes} are allowed`);
}

// ---- sync (2.6, 8) -----------------------------------------------------------------------------------

interface SyncSite {
  resource: object;
  file: string;
  /** Path of the sync document inside the file: '' for sync/config.json, 'config.sync' when embedded. */
  base: string;
  sync: JsonObject;
  service: AppService | undefined;
  embedded: boolean;
  /** Flexible sync: `type: "flexible"` in sync/config.json, or the older `config.flexible_sync` of a cluster. */
  flexible: boolean;
}

function checkSync(c: Checker, app: AppConfig, servicesByName: Map<string, AppService>): void {
  const sites: SyncSite[] = [];
  if (app.sync) {
    const o = app.sync as JsonObject;
    const file = at.sync;
    const isPartition = o.type === 'partition' || o.partition !== undefined;
    if (o.type !== undefined && (typeof o.type !== 'string' || !SYNC_TYPES.includes(o.type))) {
      c.report(o, file, 'type', 'sync.type.value', `sync type must be one of ${SYNC_TYPES.join(', ')}`);
    }
    let service: AppService | undefined;
    if (o.service_name === undefined) {
      if (isPartition || o.type === 'flexible') c.report(o, file, 'service_name', 'sync.service_name.required', 'service_name names the data source to sync');
    } else if (typeof o.service_name !== 'string' || !servicesByName.has(o.service_name)) {
      c.report(o, file, 'service_name', 'sync.service.missing', `service "${show(o.service_name)}" does not exist`);
    } else {
      service = servicesByName.get(o.service_name);
      if (service && isFederatedType(service.config.type)) c.report(o, file, 'service_name', 'datasource.federated.sync', 'sync cannot be used with a federated data source');
      else if (service && !isDataSourceType(service.config.type)) c.report(o, file, 'service_name', 'sync.service.missing', `service "${o.service_name}" is not a data source`);
    }
    sites.push({ resource: o, file, base: '', sync: o, service, embedded: false, flexible: o.type === 'flexible' });
  }
  for (const s of app.services) {
    const cfg = s.config.config;
    if (!isPlainObject(cfg) || isFederatedType(s.config.type) || !isDataSourceType(s.config.type)) continue;
    const file = `${at.serviceDir(s)}/config.json`;
    for (const key of ['sync', 'flexible_sync'] as const) {
      if (cfg[key] === undefined) continue;
      const embedded = cfg[key];
      if (!isPlainObject(embedded)) {
        c.report(s.config, file, `config.${key}`, 'field.type', `config.${key} must be an object`);
        continue;
      }
      sites.push({ resource: s.config, file, base: `config.${key}`, sync: embedded, service: s, embedded: true, flexible: key === 'flexible_sync' || embedded.type === 'flexible' });
    }
  }
  for (const site of sites) checkSyncSite(c, site);

  // Spec 8: one synced cluster and one partition key per app; and one sync mode.
  const enabled = sites.filter((x) => x.service && isOn(x.sync.state));
  if (enabled.some((x) => x.flexible) && enabled.some((x) => !x.flexible)) {
    for (const x of enabled.filter((y) => y.flexible)) c.report(x.resource, x.file, x.embedded ? x.base : 'type', 'sync.mode.multiple', 'an app syncs in one mode: partition-based sync is enabled too');
  }
  const firstService = enabled[0]?.service;
  for (const x of enabled) {
    if (x.service !== firstService) {
      c.report(x.resource, x.file, x.embedded ? x.base : 'service_name', 'sync.cluster.multiple', 'only one linked cluster per app can be synced');
    }
  }
  const keyed = sites.filter((x) => isPlainObject(x.sync.partition) && typeof x.sync.partition.key === 'string');
  const firstKey = keyed.length > 0 ? (keyed[0].sync.partition as JsonObject).key : undefined;
  for (const x of keyed) {
    if ((x.sync.partition as JsonObject).key !== firstKey) {
      c.report(x.resource, x.file, join(x.base, 'partition.key'), 'sync.partition.key.multiple', `an app has exactly one partition key; "${String(firstKey)}" is already used`);
    }
  }
}

function isOn(state: unknown): boolean {
  return state === 'enabled' || state === true;
}

function join(base: string, rest: string): string {
  return base === '' ? rest : `${base}.${rest}`;
}

function checkSyncSite(c: Checker, site: SyncSite): void {
  const { resource, file, base, sync } = site;
  const isPartition = !site.flexible && (sync.type === 'partition' || sync.partition !== undefined || (site.embedded && sync.type === undefined));
  if (site.embedded && sync.type !== undefined && (typeof sync.type !== 'string' || !SYNC_TYPES.includes(sync.type))) {
    c.report(resource, file, join(base, 'type'), 'sync.type.value', `sync type must be one of ${SYNC_TYPES.join(', ')}`);
  }
  // App Services' exports and pulls write "state": "" for sync that is off (never enabled, or terminated),
  // a partition configuration's key and type left empty: that is sync off, its empty settings not required.
  const unset = sync.state === '';
  if (sync.state !== undefined && !unset) {
    const ok = typeof sync.state === 'string' ? SYNC_STATES.includes(sync.state) : site.embedded && typeof sync.state === 'boolean';
    if (!ok) c.report(resource, file, join(base, 'state'), 'sync.state.value', `state must be "enabled" or "disabled"${site.embedded ? ' (or a boolean in the embedded form)' : ''}`);
  }
  c.type(resource, file, sync, 'development_mode_enabled', 'boolean', base);
  c.type(resource, file, sync, 'database_name', 'string', base);
  c.type(resource, file, sync, 'last_disabled', 'number', base);
  c.type(resource, file, sync, 'is_recovery_mode_disabled', 'boolean', base);
  if (sync.client_max_offline_days !== undefined && (typeof sync.client_max_offline_days !== 'number' || !(sync.client_max_offline_days > 0))) {
    c.report(resource, file, join(base, 'client_max_offline_days'), 'sync.client_max_offline_days.value', 'client_max_offline_days must be a positive number of days');
  }
  if (sync.development_mode_enabled === true && (typeof sync.database_name !== 'string' || sync.database_name === '')) {
    c.report(resource, file, join(base, 'database_name'), 'sync.database_name.required', 'development mode needs database_name');
  }
  if (site.flexible) {
    for (const f of checkFlexibleSyncSite(site)) c.report(f.resource, f.file, f.path, f.rule, f.message);
    // App Services accepts such roles (its templates and exports hold them): a sync session a role
    // applies to is denied, other roles are not tried, and the role still serves every other access.
    if (site.service && isOn(sync.state)) for (const f of checkSyncCompatibleRoles(site.service, sync)) c.warn(f.resource, f.file, f.path, f.rule, f.message);
    return;
  }
  if (!isPartition) return;
  if (!isPlainObject(sync.partition)) {
    c.report(resource, file, join(base, 'partition'), 'sync.partition.required', 'partition-based sync needs partition with key, type and permissions');
    return;
  }
  const p = sync.partition;
  const key = p.key;
  if ((typeof key !== 'string' || key === '') && !(unset && key === '')) c.report(resource, file, join(base, 'partition.key'), 'sync.partition.key.required', 'partition.key names the partition key field');
  let spec: { canonical: string; bsonTypes: readonly string[] } | undefined;
  if (p.type === undefined) c.report(resource, file, join(base, 'partition.type'), 'sync.partition.type.required', 'partition.type is required');
  else if (!(unset && p.type === '')) {
    spec = typeof p.type === 'string' ? PARTITION_KEY_TYPES[p.type.toLowerCase()] : undefined;
    if (!spec) c.report(resource, file, join(base, 'partition.type'), 'sync.partition.type.value', 'partition.type must be one of string, objectId, long, uuid');
  }
  c.type(resource, file, p, 'required', 'boolean', join(base, 'partition'));
  if (p.permissions !== undefined && !isPlainObject(p.permissions)) c.report(resource, file, join(base, 'partition.permissions'), 'field.type', 'permissions must be an object with read and write');
  else if (isPlainObject(p.permissions)) {
    for (const kind of ['read', 'write']) {
      if (p.permissions[kind] === undefined) continue;
      const finding = expressionFinding(p.permissions[kind], join(base, `partition.permissions.${kind}`), 'partition');
      if (finding) c.report(resource, file, finding.path, finding.rule, finding.message);
    }
  }
  if (typeof key !== 'string' || key === '' || !site.service) return;
  checkPartitionKeyInSchemas(c, site.service, key, spec);
}

/** The partition key is defined in every synced schema with the type partition.type names. */
function checkPartitionKeyInSchemas(c: Checker, service: AppService, key: string, spec: { canonical: string; bsonTypes: readonly string[] } | undefined): void {
  for (const r of service.collectionRules) {
    if (!isPlainObject(r.schema)) continue;
    const ro = r as JsonObject;
    const file = at.collectionRule(service, r);
    const props = r.schema.properties;
    const prop = isPlainObject(props) ? (props as JsonObject)[key] : undefined;
    if (!isPlainObject(prop)) {
      c.report(ro, file, 'schema.properties', 'sync.partition.key.missing', `the partition key "${key}" is not defined in the schema of ${String(r.database)}.${String(r.collection)}`);
      continue;
    }
    if (!spec) continue;
    const bt = prop.bsonType;
    const types = (Array.isArray(bt) ? bt : [bt]).filter((t) => t !== 'null');
    if (types.length === 0 || types.some((t) => typeof t !== 'string' || !spec.bsonTypes.includes(t))) {
      c.report(ro, file, jsonPath('schema.properties', key) + '.bsonType', 'sync.partition.key.type', `the partition key "${key}" must have type ${spec.canonical} (${spec.bsonTypes.join(' or ')}) as partition.type says`);
    }
  }
}

// ---- ids ----------------------------------------------------------------------------------------------

/** Ids are unique per kind of resource (a copied file keeps its id: the copy must get a new one). */
function checkIds(c: Checker, app: AppConfig): void {
  type Item = { resource: object; file: string; name: string };
  const kinds: Array<[string, Item[]]> = [
    ['auth provider', app.authProviders.map((p) => ({ resource: p, file: at.authProvider(p), name: show(p.name) }))],
    ['function', app.functions.map((f) => ({ resource: f.config, file: `${at.functionDir(f)}/config.json`, name: show(f.config.name) }))],
    ['service', app.services.map((s) => ({ resource: s.config, file: `${at.serviceDir(s)}/config.json`, name: show(s.config.name) }))],
    ['trigger', app.triggers.map((t) => ({ resource: t, file: at.trigger(t), name: show(t.name) }))],
    ['value', app.values.map((v) => ({ resource: v, file: at.value(v), name: show(v.name) }))],
    ['rule', app.services.flatMap((s) => s.collectionRules.map((r) => ({ resource: r, file: at.collectionRule(s, r), name: `${show(s.config.name)}/${show(r.database)}.${show(r.collection)}` })))],
  ];
  for (const [what, items] of kinds) {
    const seen = new Map<string, string>();
    for (const { resource, file, name } of items) {
      const id = (resource as JsonObject).id;
      if (typeof id !== 'string' || id === '') continue;
      // Same id and same name: the name rule already reports it (ids derived from a name collide too).
      const other = seen.get(id);
      if (other !== undefined && other !== name) c.report(resource, file, 'id', 'id.unique', `${what} id "${id}" is used more than once`);
      if (other === undefined) seen.set(id, name);
    }
  }
}

// ---- GraphQL ------------------------------------------------------------------------------------------

function checkGraphql(c: Checker, app: AppConfig, functionNames: Set<unknown>): void {
  if (!app.graphql) return;
  for (const r of app.graphql.customResolvers) {
    const o = r as JsonObject;
    const file = at.resolver(resolverKey(r));
    for (const key of ['on_type', 'field_name', 'function_name']) {
      if (typeof o[key] !== 'string' || o[key] === '') c.report(o, file, key, 'graphql.resolver.required', `${key} is required in a custom resolver`);
    }
    // Both are GraphQL names, and both name the resolver's file in an export.
    for (const key of ['on_type', 'field_name']) {
      if (typeof o[key] === 'string' && o[key] !== '' && !/^[_A-Za-z][_0-9A-Za-z]*$/.test(o[key])) c.report(o, file, key, 'graphql.resolver.name', `${key} "${o[key]}" is not a GraphQL name`);
    }
    if (typeof o.function_name === 'string' && o.function_name !== '' && !functionNames.has(o.function_name)) {
      c.report(o, file, 'function_name', 'graphql.resolver.function', `function "${o.function_name}" does not exist`);
    }
  }
}

