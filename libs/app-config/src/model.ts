// The in-memory model of an app in the current directory layout (spec 2.1). Plain data only: each
// interface mirrors one configuration file; every file interface keeps unknown members through its
// index signature, so nothing a user wrote is lost on a read-write round trip. The model holds what
// the files say; `validateApp` says whether that conforms to the spec.

import { type JsonObject } from './json';

/** POSIX relative paths (no leading slash) to file contents. */
export type AppFiles = Map<string, Uint8Array>;

/** The configuration version this library writes. */
export const CONFIG_VERSION = 20210101;

/**
 * 'current' is Tessera's own; 'legacy' has data_sources/ beside it; 'export-20210101' is realm-cli's pull and
 * the export (realm_config.json); 'appservices' is the App Services CLI's pull and the last export (root_config.json).
 */
export type AppLayout = 'current' | 'legacy' | 'export-20210101' | 'appservices';

/** config.json (spec 2.2). `config_version` is not kept: the writer sets it. */
export interface AppSettings {
  app_id?: string;
  name: string;
  /**
   * `refresh_token_expiration_seconds`: the lifetime of the app's refresh tokens (the admin API's
   * security/refresh_token_expiration, 1,800 to 15,552,000 s); absent, the server's setting applies.
   */
  security?: { allowed_request_origins?: string[]; refresh_token_expiration_seconds?: number; ip_access_list?: IpAccessEntry[]; [extra: string]: unknown };
  hosting?: { enabled?: boolean; custom_domain?: string; app_default_domain?: string; [extra: string]: unknown };
  custom_user_data_config?: CustomUserDataConfig;
  deployment_model?: string;
  location?: string;
  [extra: string]: unknown;
}

export interface CustomUserDataConfig {
  enabled?: boolean;
  /** Id of the data-source service holding user data (a service name is also accepted on read). */
  mongo_service_id?: string;
  database_name?: string;
  collection_name?: string;
  user_id_field?: string;
  [extra: string]: unknown;
}

/** auth_providers/<name>.json (spec 2.3). */
export interface AuthProvider {
  id?: string;
  name: string;
  type: string;
  disabled?: boolean;
  config?: JsonObject;
  /** Private option name -> name of the secret holding its value (a list for signing keys). */
  secret_config?: Record<string, string | string[]>;
  metadata_fields?: Array<{ required: boolean; name: string }>;
  [extra: string]: unknown;
}

/** functions/<name>/config.json (spec 2.4). */
export interface FunctionConfig {
  id?: string;
  name: string;
  private?: boolean;
  can_evaluate?: unknown;
  disable_arg_logs?: boolean;
  run_as_system?: boolean;
  run_as_user_id?: string;
  run_as_user_id_script_source?: string;
  [extra: string]: unknown;
}

export interface AppFunction {
  config: FunctionConfig;
  /** Contents of source.js. */
  source: string;
}

/** services/<name>/config.json (spec 2.5, 2.8). */
export interface ServiceConfig {
  id?: string;
  name: string;
  type: string;
  config?: DataSourceSettings & JsonObject;
  secret_config?: Record<string, string | string[]>;
  version?: number;
  [extra: string]: unknown;
}

export interface DataSourceSettings {
  clusterName?: string;
  dataLakeName?: string;
  readPreference?: string;
  wireProtocolEnabled?: boolean;
  /** Sync configuration embedded in the cluster service (spec 2.6, without service_name). */
  sync?: SyncConfig;
}

/** A rule expression: a JSON value (document, boolean, ...). */
export type Expression = unknown;

export interface FieldPermissions {
  read?: Expression;
  write?: Expression;
  fields?: Record<string, FieldPermissions>;
  [extra: string]: unknown;
}

/** A role of a collection rule or default rule (spec 2.7). */
export interface Role {
  name: string;
  apply_when?: Expression;
  document_filters?: { read?: Expression; write?: Expression; [extra: string]: unknown };
  read?: Expression;
  write?: Expression;
  insert?: Expression;
  delete?: Expression;
  search?: boolean;
  fields?: Record<string, FieldPermissions>;
  additional_fields?: { read?: Expression; write?: Expression; [extra: string]: unknown };
  [extra: string]: unknown;
}

/** A filter of a collection rule or default rule (spec 2.7). */
export interface Filter {
  name: string;
  apply_when?: Expression;
  query?: JsonObject;
  projection?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** A JSON schema as App Services uses it: bsonType, title, properties, items, required. */
export interface JsonSchema {
  title?: string;
  bsonType?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  required?: string[];
  [extra: string]: unknown;
}

/** One entry of relationships.json, keyed by the source field (spec 2.7). */
export interface Relationship {
  ref: string;
  source_key: string;
  foreign_key: string;
  is_list?: boolean;
  [extra: string]: unknown;
}

/** services/<data source>/rules/<database>.<collection>.json: rules, schema and relationships together. */
export interface CollectionRule {
  id?: string;
  database: string;
  collection: string;
  roles?: Role[];
  filters?: Filter[];
  schema?: JsonSchema;
  relationships?: Record<string, Relationship>;
  /** Tessera: the indexes the collection must have, created on its cluster when the app deploys. */
  indexes?: DeclaredIndex[];
  [extra: string]: unknown;
}

/**
 * One index a collection rule declares: the key pattern (fields in order, 1 ascending, -1 descending) and
 * the options the embedded engine and MongoDB both honour. Without `name` it is MongoDB's default name.
 */
export interface DeclaredIndex {
  key: Record<string, 1 | -1>;
  name?: string;
  unique?: boolean;
  sparse?: boolean;
}

/** MongoDB's default index name: each field and direction joined by `_` (`owner_id_1_createdAt_-1`). */
export function defaultIndexName(key: Record<string, number>): string {
  return Object.entries(key)
    .map(([field, direction]) => `${field}_${direction}`)
    .join('_');
}

/** services/<data source>/default_rule.json. */
export interface DefaultRule {
  id?: string;
  roles?: Role[];
  filters?: Filter[];
  [extra: string]: unknown;
}

/** services/<external service>/rules/<name>.json (spec 2.8). */
export interface ServiceRule {
  id?: string;
  name: string;
  actions: string[];
  when?: Expression;
  [extra: string]: unknown;
}

/** services/<service>/incoming_webhooks/<name>/config.json (spec 2.8). */
export interface WebhookConfig extends FunctionConfig {
  respond_result?: boolean;
  /** `secretAsQueryParam` is Stitch's (and the admin API v3's) form of `validationMethod` (see webhookValidationMethod below). */
  options?: { httpMethod?: string; validationMethod?: string; secret?: string; secretAsQueryParam?: boolean; [extra: string]: unknown };
}

export interface Webhook {
  config: WebhookConfig;
  source: string;
}

/**
 * The check a stored webhook's options ask for: `validationMethod`, or else Stitch's `secretAsQueryParam` (still
 * App Services' admin API v3 form of the option): true wants the secret as the `secret` query parameter, false
 * (with a secret) a payload signature. Neither: no check. The gateway serves by it, the admin API shows it.
 */
export function webhookValidationMethod(options: WebhookConfig['options'] = {}): string {
  if (typeof options.validationMethod === 'string') return options.validationMethod;
  if (options.secretAsQueryParam === true) return 'SECRET_AS_QUERY_PARAM';
  if (options.secretAsQueryParam === false && typeof options.secret === 'string' && options.secret !== '') return 'VERIFY_PAYLOAD';
  return 'NO_VALIDATION';
}

export interface AppService {
  config: ServiceConfig;
  defaultRule?: DefaultRule;
  /** Collection rules of a data-source service (files with database and collection). */
  collectionRules: CollectionRule[];
  /** Service rules of an external service (files with name, actions, when). */
  rules: ServiceRule[];
  webhooks: Webhook[];
}

/** triggers/<name>.json (spec 2.9). */
export interface Trigger {
  id?: string;
  name: string;
  type: string;
  function_name?: string;
  config?: JsonObject;
  disabled?: boolean;
  [extra: string]: unknown;
}

export interface HostingAttribute {
  name: string;
  value: string;
}

/** One item of hosting/metadata.json (spec 2.10). */
export interface HostingFileMetadata {
  /** Resource path, starting with '/'. */
  path: string;
  attrs: HostingAttribute[];
  [extra: string]: unknown;
}

export interface Hosting {
  metadata: HostingFileMetadata[];
  /** Resource path ('/index.html') -> contents of hosting/files/index.html. */
  files: Map<string, Uint8Array>;
}

/** values/<name>.json (spec 2.11). */
export interface Value {
  id?: string;
  name: string;
  from_secret?: boolean;
  value: unknown;
  [extra: string]: unknown;
}

/** secrets.json: secret name -> secret value. */
export type Secrets = Record<string, unknown>;

/**
 * sync/config.json (spec 2.6): partition-based (`type: "partition"`, `partition`) or flexible
 * (`type: "flexible"`, queryable fields, asymmetric tables).
 */
export interface SyncConfig {
  type?: string;
  state?: string | boolean;
  service_name?: string;
  development_mode_enabled?: boolean;
  database_name?: string;
  partition?: {
    key?: string;
    type?: string;
    required?: boolean;
    permissions?: { read?: Expression; write?: Expression; [extra: string]: unknown };
    [extra: string]: unknown;
  };
  last_disabled?: number;
  client_max_offline_days?: number;
  is_recovery_mode_disabled?: boolean;
  /** Flexible sync: fields every synced collection may be queried on. */
  queryable_fields_names?: string[];
  /** Flexible sync: at most one of the queryable fields, indexed for initial sync. */
  indexed_queryable_fields_names?: string[];
  /** Flexible sync: further queryable fields per collection (object type) name. */
  collection_queryable_fields_names?: Record<string, string[]>;
  /** Flexible sync: object types clients only insert (data ingest); never synced back. */
  asymmetric_tables?: string[];
  [extra: string]: unknown;
}

/** graphql/custom_resolvers/<type>_<field>.json. */
export interface CustomResolver {
  on_type: string;
  field_name: string;
  function_name: string;
  [extra: string]: unknown;
}

export interface GraphqlConfig {
  /** graphql/config.json, when present. */
  config?: JsonObject;
  customResolvers: CustomResolver[];
}

export interface AppConfig {
  settings: AppSettings;
  authProviders: AuthProvider[];
  functions: AppFunction[];
  services: AppService[];
  triggers: Trigger[];
  values: Value[];
  hosting?: Hosting;
  secrets?: Secrets;
  sync?: SyncConfig;
  graphql?: GraphqlConfig;
  /** Files this library does not model (environments/, log_forwarders/, READMEs, ...), kept verbatim. */
  extraFiles: AppFiles;
}

/** Service types that link a data source (spec 2.5; real exports use mongodb-atlas). */
export const CLUSTER_SERVICE_TYPES: readonly string[] = ['datastore-cluster', 'mongodb-atlas', 'mongodb'];
export const FEDERATED_SERVICE_TYPES: readonly string[] = ['datalake', 'datastore-federation'];

/**
 * An entry of the app's IP access list (the admin API's `security/access_list`): an address or a CIDR block
 * client requests may come from. An app with entries serves only those; `0.0.0.0` (or `0.0.0.0/0`) allows all.
 */
export interface IpAccessEntry {
  _id: string;
  address: string;
  comment?: string;
}

export function isDataSourceType(type: unknown): boolean {
  return typeof type === 'string' && (CLUSTER_SERVICE_TYPES.includes(type) || FEDERATED_SERVICE_TYPES.includes(type));
}

export function isFederatedType(type: unknown): boolean {
  return typeof type === 'string' && FEDERATED_SERVICE_TYPES.includes(type);
}

export function emptyApp(name: string): AppConfig {
  return { settings: { name }, authProviders: [], functions: [], services: [], triggers: [], values: [], extraFiles: new Map() };
}
