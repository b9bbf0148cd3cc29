// realm-cli's "AppData JSON" (config 20210101, the body of POST .../import): the whole app directory as
// one object. fromAppData lays the object out as an export directory and reads that, so the import path
// shares every conversion and check with the file readers; toAppData builds the object from the model.
// Not carried: hosted files (realm-cli uploads them through the hosting assets API), function
// dependencies, and flat secrets (AppData has only realm-cli's per-provider and per-service form).

import { bytesToText, isPlainObject, jsonPath, parseJson, stringifyJson, textToBytes, type JsonObject } from './json';
import { isDataSourceType, type AppConfig, type AppFiles } from './model';
import { resolverKey } from './normalize';
import { segment } from './paths';
import { readAppFiles, type LoadedApp } from './read/read-app';
import { type ConfigViolation } from './violations';

const APP_DATA_FILE = 'import.json';

const pick = (obj: JsonObject, keys: string[]): JsonObject => {
  const out: JsonObject = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
};

const nonEmpty = (v: unknown): boolean =>
  v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0) && !(isPlainObject(v) && Object.keys(v).length === 0);

/** Drops empty members, as realm-cli's `omitempty` does. */
function omitEmpty(obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (nonEmpty(v)) out[k] = v;
  return out;
}

function jsonFiles(app: AppConfig, prefix: string): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [path, bytes] of app.extraFiles) {
    if (!path.startsWith(prefix) || !path.endsWith('.json') || path.slice(prefix.length).includes('/')) continue;
    const parsed = parseJson(bytesToText(bytes));
    if (parsed.ok) out.push([path.slice(prefix.length, -'.json'.length), parsed.value]);
  }
  return out;
}

function extraJson(app: AppConfig, path: string): unknown {
  const bytes = app.extraFiles.get(path);
  if (!bytes) return undefined;
  const parsed = parseJson(bytesToText(bytes));
  return parsed.ok ? parsed.value : undefined;
}

/** The AppData JSON of an app, as realm-cli sends it to the import endpoint. */
export function toAppData(app: AppConfig): JsonObject {
  const { security, custom_user_data_config: cud, hosting, app_id, name, location, deployment_model, environment, ...rest } = app.settings;
  const serviceName = (id: unknown) => app.services.find((s) => s.config.id === id || s.config.name === id)?.config.name ?? id;
  let customUserData: JsonObject | undefined;
  if (cud) {
    const { mongo_service_id: id, ...cudRest } = cud;
    customUserData = { ...cudRest, ...(id !== undefined ? { mongo_service_name: serviceName(id) } : {}) };
  }
  const webhooks = (s: AppConfig['services'][number]) => s.webhooks.map((w) => ({ config: w.config, source: w.source }));
  const dataSources = app.services.filter((s) => isDataSourceType(s.config.type));
  const others = app.services.filter((s) => !isDataSourceType(s.config.type));
  return omitEmpty({
    ...rest,
    config_version: 20210101,
    app_id,
    name,
    location,
    deployment_model,
    environment,
    environments: Object.fromEntries(jsonFiles(app, 'environments/')),
    allowed_request_origins: security?.allowed_request_origins,
    values: app.values,
    auth: omitEmpty({ providers: Object.fromEntries(app.authProviders.map((p) => [p.name, p])), custom_user_data: customUserData }),
    functions: omitEmpty({
      config: app.functions.map((f) => f.config),
      sources: Object.fromEntries(app.functions.map((f) => [`${String(f.config.name)}.js`, f.source])),
    }),
    triggers: app.triggers,
    data_sources: dataSources.map((s) => omitEmpty({ config: s.config, default_rule: s.defaultRule, rules: s.collectionRules })),
    services: others.map((s) => omitEmpty({ config: s.config, default_rule: s.defaultRule, incoming_webhooks: webhooks(s), rules: s.rules })),
    endpoints: omitEmpty({ config: extraJson(app, 'http_endpoints/config.json') }),
    data_api_config: extraJson(app, 'http_endpoints/data_api_config.json'),
    log_forwarders: jsonFiles(app, 'log_forwarders/').map(([, v]) => v),
    graphql: app.graphql ? omitEmpty({ config: app.graphql.config, custom_resolvers: app.graphql.customResolvers }) : undefined,
    sync: app.sync ? { config: app.sync } : undefined,
    hosting,
    secrets: app.secrets ? omitEmpty(pick(app.secrets, ['auth_providers', 'services'])) : undefined,
  });
}

/**
 * Reads an AppData JSON object into the model. Violations name `import.json` and the JSON path inside
 * the object where the body has the wrong shape; deeper problems name the export file the member maps to.
 */
export function fromAppData(data: unknown): LoadedApp {
  const problems: ConfigViolation[] = [];
  const files: AppFiles = new Map();
  const json = (path: string, value: unknown) => files.set(path, textToBytes(stringifyJson(value)));
  const src = (path: string, value: unknown) => files.set(path, textToBytes(typeof value === 'string' ? value : ''));
  const bad = (path: string, message: string) => problems.push({ file: APP_DATA_FILE, path, rule: 'file.shape', message });
  const list = (v: unknown, path: string): unknown[] => {
    if (v === undefined || v === null) return [];
    if (Array.isArray(v)) return v;
    bad(path, `${path} must be an array`);
    return [];
  };
  const obj = (v: unknown, path: string): JsonObject | undefined => {
    if (v === undefined || v === null) return undefined;
    if (isPlainObject(v)) return v;
    bad(path, `${path} must be an object`);
    return undefined;
  };

  const d = isPlainObject(data) ? data : (bad('', 'the AppData body must be a JSON object'), {} as JsonObject);
  json('realm_config.json', {
    ...omitKnown(d),
    ...pick(d, ['app_id', 'name', 'location', 'deployment_model', 'environment', 'allowed_request_origins']),
    config_version: 20210101,
  });
  for (const [env, value] of Object.entries(obj(d.environments, 'environments') ?? {})) json(`environments/${segment(env, 'env')}.json`, value);
  list(d.values, 'values').forEach((v, i) => (isPlainObject(v) ? json(`values/${segment(v.name, i)}.json`, v) : bad(`values[${i}]`, 'a value must be an object')));
  const auth = obj(d.auth, 'auth');
  if (auth?.providers !== undefined) json('auth/providers.json', auth.providers);
  if (auth?.custom_user_data !== undefined) json('auth/custom_user_data.json', auth.custom_user_data);
  const fns = obj(d.functions, 'functions');
  if (fns) {
    json('functions/config.json', fns.config ?? []);
    for (const [path, source] of Object.entries(obj(fns.sources, 'functions.sources') ?? {})) src(`functions/${path}`, source);
  }
  list(d.triggers, 'triggers').forEach((t, i) => (isPlainObject(t) ? json(`triggers/${segment(t.name, i)}.json`, t) : bad(`triggers[${i}]`, 'a trigger must be an object')));
  list(d.data_sources, 'data_sources').forEach((ds, i) => {
    const base = `data_sources[${i}]`;
    const entry = obj(ds, base);
    const config = obj(entry?.config, `${base}.config`);
    if (!entry || !config) return;
    const dir = `data_sources/${segment(config.name, i)}`;
    json(`${dir}/config.json`, config);
    if (entry.default_rule !== undefined) json(`${dir}/default_rule.json`, entry.default_rule);
    list(entry.rules, `${base}.rules`).forEach((r, j) => {
      const rule = obj(r, jsonPath(`${base}.rules`, j));
      if (!rule) return;
      const { schema, relationships, ...rules } = rule;
      const cdir = `${dir}/${segment(rule.database, 'database')}/${segment(rule.collection, 'collection')}`;
      json(`${cdir}/rules.json`, rules);
      if (schema !== undefined) json(`${cdir}/schema.json`, schema);
      if (relationships !== undefined) json(`${cdir}/relationships.json`, relationships);
    });
  });
  const serviceTree = (root: string, key: string) =>
    list(d[key], key).forEach((s, i) => {
      const base = `${key}[${i}]`;
      const entry = obj(s, base);
      const config = obj(entry?.config, `${base}.config`);
      if (!entry || !config) return;
      const dir = `${root}/${segment(config.name, i)}`;
      json(`${dir}/config.json`, config);
      if (entry.default_rule !== undefined) json(`${dir}/default_rule.json`, entry.default_rule);
      list(entry.rules, `${base}.rules`).forEach((r, j) => {
        const rule = obj(r, `${base}.rules[${j}]`);
        if (rule) json(`${dir}/rules/${segment(rule.name ?? `${String(rule.database)}.${String(rule.collection)}`, j)}.json`, rule);
      });
      list(entry.incoming_webhooks, `${base}.incoming_webhooks`).forEach((w, j) => {
        const hook = obj(w, `${base}.incoming_webhooks[${j}]`);
        const hookConfig = obj(hook?.config, `${base}.incoming_webhooks[${j}].config`);
        if (!hook || !hookConfig) return;
        const wdir = `${dir}/incoming_webhooks/${segment(hookConfig.name, j)}`;
        json(`${wdir}/config.json`, hookConfig);
        if (hook.source !== undefined) src(`${wdir}/source.js`, hook.source);
      });
    });
  serviceTree('services', 'services');
  serviceTree('http_endpoints', 'http_endpoints');
  const endpoints = obj(d.endpoints, 'endpoints');
  if (endpoints?.config !== undefined) json('http_endpoints/config.json', endpoints.config);
  if (d.data_api_config !== undefined) json('http_endpoints/data_api_config.json', d.data_api_config);
  list(d.log_forwarders, 'log_forwarders').forEach((l, i) => json(`log_forwarders/${segment(isPlainObject(l) ? l.name : undefined, i)}.json`, l));
  const graphql = obj(d.graphql, 'graphql');
  if (graphql?.config !== undefined) json('graphql/config.json', graphql.config);
  list(graphql?.custom_resolvers, 'graphql.custom_resolvers').forEach((r, i) => {
    if (isPlainObject(r)) json(`graphql/custom_resolvers/${segment(resolverKey(r), i)}.json`, r);
    else bad(`graphql.custom_resolvers[${i}]`, 'a custom resolver must be an object');
  });
  const sync = obj(d.sync, 'sync');
  if (sync?.config !== undefined) json('sync/config.json', sync.config);
  const hosting = obj(d.hosting, 'hosting');
  if (hosting) json('hosting/config.json', hosting);
  const secrets = obj(d.secrets, 'secrets');
  if (secrets) json('secrets.json', secrets);

  const loaded = readAppFiles(files);
  return { ...loaded, violations: [...problems, ...loaded.violations] };
}

/** Top-level members of AppData that have no file of their own are kept in realm_config.json. */
function omitKnown(d: JsonObject): JsonObject {
  const known = new Set([
    'config_version', 'app_id', 'name', 'location', 'deployment_model', 'environment', 'environments', 'allowed_request_origins',
    'values', 'auth', 'functions', 'triggers', 'data_sources', 'http_endpoints', 'endpoints', 'services', 'graphql', 'hosting',
    'sync', 'secrets', 'log_forwarders', 'data_api_config',
  ]);
  return Object.fromEntries(Object.entries(d).filter(([k]) => !known.has(k)));
}
