// The directory layouts an app can arrive in, each read into the one model of the current layout:
// 'current' (spec 2.1, and realm-cli v1's config_version 20200603 and 20180301, whose settings file is
// stitch.json), 'legacy' (data sources under data_sources/ with per-collection rules.json, schema.json and
// relationships.json), 'export-20210101' (an App Services export or realm-cli pull) and 'appservices'
// (root_config.json).

import { dataApiConfigProblems } from '../data-api-config';
import { httpsEndpointsProblems } from '../https-endpoints';
import { isPlainObject, jsonPath, type JsonObject } from '../json';
import {
  type AppConfig,
  type AppFunction,
  type AppService,
  type AppSettings,
  type AuthProvider,
  type CollectionRule,
  type FunctionConfig,
  type ServiceConfig,
} from '../model';
import { normalizeApp } from '../normalize';
import { type Origin } from '../origins';
import { childDirectories, type ReadContext } from './context';
import {
  defaultedFunction,
  readAuthProvidersDir,
  readFunctionsDir,
  readGraphql,
  readHosting,
  readSecrets,
  readServiceDir,
  readServicesDir,
  readSettingsFile,
  readSync,
  readTriggers,
  readValues,
} from './sections';

function settingsFrom(obj: JsonObject | undefined): AppSettings {
  const settings = (obj ?? {}) as AppSettings;
  delete settings.config_version;
  return settings;
}

/** realm-cli's config_version 20180301 kept the app settings in stitch.json; 20200603 renamed it config.json. */
export function currentSettingsFile(files: { has(path: string): boolean }): string {
  return !files.has('config.json') && files.has('stitch.json') ? 'stitch.json' : 'config.json';
}

export function readCurrentLayout(ctx: ReadContext): AppConfig {
  const settingsFile = currentSettingsFile(ctx);
  const app: AppConfig = {
    settings: settingsFrom(readSettingsFile(ctx, settingsFile)),
    authProviders: readAuthProvidersDir(ctx),
    functions: readFunctionsDir(ctx),
    services: readServicesDir(ctx),
    triggers: readTriggers(ctx),
    values: readValues(ctx),
    extraFiles: new Map(),
  };
  const redirects: NonNullable<Origin['redirects']> = [];
  const customUserDataServiceName = takeCustomUserDataServiceName(app.settings, settingsFile, redirects);
  // An export's hosting/config.json moved into an app of this layout is read as the export reads it.
  takeHostingFile(ctx, app.settings, settingsFile, redirects);
  ctx.origins.set(app.settings, { file: settingsFile, prefix: '', redirects });
  const hosting = readHosting(ctx);
  if (hosting) app.hosting = hosting;
  const secrets = readSecrets(ctx);
  if (secrets) app.secrets = secrets;
  const sync = readSync(ctx);
  if (sync) app.sync = sync;
  const graphql = readGraphql(ctx);
  if (graphql) app.graphql = graphql;
  checkEndpoints(ctx, app);
  linkCustomUserDataService(app, customUserDataServiceName);
  return app;
}

/**
 * The hosting settings of hosting/config.json, where the 20210101 export moved them out of the app config.
 * Beside a `hosting` in the settings file, the file is a second source of the same settings: refused.
 */
function takeHostingFile(ctx: ReadContext, settings: AppSettings, settingsFile: string, redirects: NonNullable<Origin['redirects']>): void {
  if (!ctx.has('hosting/config.json')) return;
  const hosting = ctx.object('hosting/config.json');
  if (!hosting) return;
  if (settings.hosting !== undefined) {
    ctx.report('hosting/config.json', '', 'hosting.duplicate', `the hosting settings are both here and in ${settingsFile}'s hosting: keep one`);
    return;
  }
  settings.hosting = hosting;
  redirects.push({ from: 'hosting', file: 'hosting/config.json', prefix: '' });
}

/**
 * realm-cli v1's config.json (and stitch.json) names the custom user data service (mongo_service_name)
 * where the current layout holds its id (mongo_service_id): the name stands in for the id until the
 * services are read, and a violation about it points at mongo_service_name.
 */
function takeCustomUserDataServiceName(settings: AppSettings, file: string, redirects: NonNullable<Origin['redirects']>): string | undefined {
  const cud = settings.custom_user_data_config;
  if (!isPlainObject(cud) || cud.mongo_service_name === undefined || cud.mongo_service_id !== undefined) return undefined;
  const { mongo_service_name: serviceName, ...rest } = cud;
  settings.custom_user_data_config = { ...rest, mongo_service_id: serviceName as string };
  redirects.push({ from: 'custom_user_data_config.mongo_service_id', file, prefix: 'custom_user_data_config.mongo_service_name' });
  return typeof serviceName === 'string' ? serviceName : undefined;
}

/** Replaces the custom user data service's name with its id, once the services have their ids. */
function linkCustomUserDataService(app: AppConfig, serviceName: string | undefined): void {
  const cud = app.settings.custom_user_data_config;
  if (serviceName === undefined || !cud) return;
  normalizeApp(app);
  const svc = app.services.find((s) => s.config.name === serviceName);
  if (svc && typeof svc.config.id === 'string') cud.mongo_service_id = svc.config.id;
}

/** The current layout plus data_sources/<service>/..., converted to services with collection rules. */
export function readLegacyLayout(ctx: ReadContext): AppConfig {
  const app = readCurrentLayout(ctx);
  app.services.push(...readDataSources(ctx));
  return app;
}

/**
 * data_sources/<svc>/config.json, default_rule.json and <db>/<coll>/{rules,schema,relationships}.json.
 * Shared by the legacy layout and the 20210101 export, which use the same data-source tree.
 */
function readDataSources(ctx: ReadContext): AppService[] {
  const out: AppService[] = [];
  for (const svcName of childDirectories(ctx, 'data_sources/')) {
    const dir = `data_sources/${svcName}/`;
    const configPath = `${dir}config.json`;
    if (!ctx.has(configPath)) {
      ctx.report(configPath, '', 'service.config.missing', `data source directory ${dir} has no config.json`);
      continue;
    }
    const config = ctx.object(configPath);
    if (!config) continue;
    ctx.origins.set(config, { file: configPath, prefix: '' });
    const service: AppService = { config: config as ServiceConfig, collectionRules: [], rules: [], webhooks: [] };
    const defaultPath = `${dir}default_rule.json`;
    if (ctx.has(defaultPath)) {
      const rule = ctx.object(defaultPath);
      if (rule) {
        ctx.origins.set(rule, { file: defaultPath, prefix: '' });
        service.defaultRule = rule;
      }
    }
    for (const db of childDirectories(ctx, dir)) {
      for (const coll of childDirectories(ctx, `${dir}${db}/`)) {
        const rule = readCollectionDir(ctx, `${dir}${db}/${coll}/`, db, coll);
        if (rule) service.collectionRules.push(rule);
      }
    }
    out.push(service);
  }
  return out;
}

function readCollectionDir(ctx: ReadContext, dir: string, db: string, coll: string): CollectionRule | undefined {
  const rulesPath = `${dir}rules.json`;
  const schemaPath = `${dir}schema.json`;
  const relPath = `${dir}relationships.json`;
  if (!ctx.has(rulesPath) && !ctx.has(schemaPath) && !ctx.has(relPath)) return undefined;
  const rules = ctx.has(rulesPath) ? ctx.object(rulesPath) : {};
  if (!rules) return undefined;
  const rule: CollectionRule = { ...(rules as Partial<CollectionRule>), database: (rules.database as string) ?? db, collection: (rules.collection as string) ?? coll };
  if (ctx.has(schemaPath)) {
    const schema = ctx.object(schemaPath);
    if (schema) rule.schema = schema;
  }
  if (ctx.has(relPath)) {
    const rel = ctx.object(relPath);
    if (rel) rule.relationships = rel as CollectionRule['relationships'];
  }
  const origin: Origin = {
    file: rulesPath,
    prefix: '',
    redirects: [
      { from: 'schema', file: schemaPath, prefix: '' },
      { from: 'relationships', file: relPath, prefix: '' },
    ],
  };
  ctx.origins.set(rule, origin);
  return rule;
}

/** An App Services export (config_version 20210101), as realm-cli pulls it or the admin API exports it. */
export function readExportLayout(ctx: ReadContext): AppConfig {
  return readExportTree(ctx, 'realm_config.json');
}

/**
 * The App Services CLI's pull and the last export: the 20210101 tree with root_config.json (name,
 * deployment_model, provider_region, environment, allowed_request_origins) at its root and the custom
 * endpoints in https_endpoints/. The endpoint files are kept where the 20210101 export keeps them
 * (http_endpoints/), so every later write and export finds them in one place.
 */
export function readAppServicesLayout(ctx: ReadContext): AppConfig {
  const app = readExportTree(ctx, 'root_config.json');
  for (const name of ['config.json', 'data_api_config.json']) {
    const from = `https_endpoints/${name}`;
    if (ctx.has(from) && !ctx.has(`http_endpoints/${name}`)) ctx.rename(from, `http_endpoints/${name}`);
  }
  return app;
}

function readExportTree(ctx: ReadContext, rootFile: string): AppConfig {
  const realmConfig = readSettingsFile(ctx, rootFile) ?? {};
  const settings: AppSettings = { ...(realmConfig as Partial<AppSettings>), name: realmConfig.name as string };
  delete settings.config_version;
  const redirects: NonNullable<Origin['redirects']> = [];
  if ('allowed_request_origins' in realmConfig) {
    settings.security = { allowed_request_origins: realmConfig.allowed_request_origins as string[] };
    delete settings.allowed_request_origins;
    redirects.push({ from: 'security.allowed_request_origins', file: rootFile, prefix: 'allowed_request_origins' });
  }
  let customUserDataServiceName: string | undefined;
  if (ctx.has('auth/custom_user_data.json')) {
    const cud = ctx.object('auth/custom_user_data.json');
    if (cud) {
      const { mongo_service_name: serviceName, ...rest } = cud;
      if (typeof serviceName === 'string') customUserDataServiceName = serviceName;
      settings.custom_user_data_config = rest;
      if (serviceName !== undefined) settings.custom_user_data_config.mongo_service_id = serviceName as string;
      redirects.push({ from: 'custom_user_data_config.mongo_service_id', file: 'auth/custom_user_data.json', prefix: 'mongo_service_name' });
      redirects.push({ from: 'custom_user_data_config', file: 'auth/custom_user_data.json', prefix: '' });
    }
  }
  takeHostingFile(ctx, settings, rootFile, redirects);
  ctx.origins.set(settings, { file: rootFile, prefix: '', redirects });

  const app: AppConfig = {
    settings,
    authProviders: readExportProviders(ctx),
    functions: readExportFunctions(ctx),
    services: [...readServicesDir(ctx), ...readHttpEndpointServices(ctx), ...readDataSources(ctx)],
    triggers: readTriggers(ctx),
    values: readValues(ctx),
    extraFiles: new Map(),
  };
  const hosting = readHosting(ctx);
  if (hosting) app.hosting = hosting;
  const secrets = readSecrets(ctx);
  if (secrets) app.secrets = secrets;
  const sync = readSync(ctx);
  if (sync) app.sync = sync;
  const graphql = readGraphql(ctx);
  if (graphql) app.graphql = graphql;
  checkEndpoints(ctx, app);
  // The export names the custom-user-data service; the current layout holds its id.
  linkCustomUserDataService(app, customUserDataServiceName);
  return app;
}

/**
 * The custom HTTPS endpoints and the Data API settings are kept as files (the gateway serves the endpoints
 * from them), and a file App Services would refuse is refused here too: bad JSON, the wrong shape, a bad
 * route, method or validation setting, two endpoints on one route and method, a function the app lacks.
 */
function checkEndpoints(ctx: ReadContext, app: Pick<AppConfig, 'functions'>): void {
  const functions = new Set(app.functions.map((f) => f.config.name));
  for (const dir of ['https_endpoints/', 'http_endpoints/']) {
    const endpointsPath = `${dir}config.json`;
    const endpoints = ctx.peek(endpointsPath);
    if (endpoints !== undefined) {
      for (const problem of httpsEndpointsProblems(endpoints, functions)) ctx.report(endpointsPath, problem.path, problem.rule, problem.message);
    }
    const dataApiPath = `${dir}data_api_config.json`;
    const dataApi = ctx.peek(dataApiPath);
    if (dataApi !== undefined) for (const problem of dataApiConfigProblems(dataApi)) ctx.report(dataApiPath, problem.path, problem.path === '' ? 'file.shape' : 'data_api.config', problem.message);
  }
}

function readExportProviders(ctx: ReadContext): AuthProvider[] {
  const path = 'auth/providers.json';
  if (!ctx.has(path)) return [];
  const map = ctx.object(path);
  if (!map) return [];
  const out: AuthProvider[] = [];
  for (const [key, value] of Object.entries(map)) {
    if (!isPlainObject(value)) {
      ctx.report(path, jsonPath('', key), 'file.shape', 'each provider must be an object');
      continue;
    }
    const provider = { ...value, name: value.name ?? key } as AuthProvider;
    ctx.origins.set(provider, { file: path, prefix: jsonPath('', key) });
    out.push(provider);
  }
  return out;
}

/**
 * functions/config.json (the manifest: one config per function) and functions/<name>.js, where a name may
 * hold '/' (functions/utils/format.js is "utils/format"). A source without a manifest entry gets the
 * default config, as App Services does on import, with a warning.
 */
function readExportFunctions(ctx: ReadContext): AppFunction[] {
  const path = 'functions/config.json';
  const out: AppFunction[] = [];
  const list = ctx.has(path) ? ctx.array(path) : [];
  if (!list) return out; // a broken manifest is reported; defaulting every function would hide that
  const listed = new Set<string>();
  list.forEach((item, i) => {
    if (!isPlainObject(item)) {
      ctx.report(path, `[${i}]`, 'file.shape', 'each function config must be an object');
      return;
    }
    const config = item as FunctionConfig;
    const sourcePath = `functions/${typeof config.name === 'string' ? config.name : `#${i}`}.js`;
    listed.add(sourcePath);
    const source = ctx.text(sourcePath);
    ctx.origins.set(config, { file: path, prefix: `[${i}]`, sourceFile: sourcePath });
    out.push({ config, source: source ?? '' });
  });
  for (const sourcePath of ctx.under('functions/')) {
    if (!sourcePath.endsWith('.js') || listed.has(sourcePath) || !isFunctionSource(sourcePath)) continue;
    const name = sourcePath.slice('functions/'.length, -'.js'.length);
    out.push(defaultedFunction(ctx, name, sourcePath, path));
  }
  return out;
}

/** Dependencies and dot-files under functions/ are not functions. */
function isFunctionSource(path: string): boolean {
  return path.split('/').every((segment) => segment !== 'node_modules' && !segment.startsWith('.'));
}

/** http_endpoints/<svc>/ holds older third-party HTTP services with webhooks: same shape as services/. */
function readHttpEndpointServices(ctx: ReadContext): AppService[] {
  const out: AppService[] = [];
  for (const name of childDirectories(ctx, 'http_endpoints/')) {
    if (!ctx.has(`http_endpoints/${name}/config.json`)) continue;
    const svc = readServiceDir(ctx, `http_endpoints/${name}/`);
    if (svc) out.push(svc);
  }
  return out;
}
