// Readers for the parts of an app directory that the current layout and the older layouts share.
// The files' JSON is taken as the model object as is (unknown members included); shapes beyond
// "an object" are checked by validateApp, not here.

import { isPlainObject, type JsonObject } from '../json';
import {
  type AppFunction,
  type AppService,
  type CollectionRule,
  type CustomResolver,
  type GraphqlConfig,
  type Hosting,
  type HostingFileMetadata,
  type ServiceConfig,
  type ServiceRule,
  type SyncConfig,
  type Trigger,
  type Value,
  type Webhook,
  type WebhookConfig,
  type AuthProvider,
  type Secrets,
  type FunctionConfig,
} from '../model';
import { baseName, childDirectories, directChildren, type ReadContext } from './context';

export function readSecrets(ctx: ReadContext, path = 'secrets.json'): Secrets | undefined {
  if (!ctx.has(path)) return undefined;
  const obj = ctx.object(path);
  if (obj) ctx.origins.set(obj, { file: path, prefix: '' });
  return obj;
}

export function readAuthProvidersDir(ctx: ReadContext, dir = 'auth_providers/'): AuthProvider[] {
  const out: AuthProvider[] = [];
  for (const path of directChildren(ctx, dir, '.json')) {
    const obj = ctx.object(path);
    if (!obj) continue;
    ctx.origins.set(obj, { file: path, prefix: '' });
    out.push(obj as AuthProvider);
  }
  return out;
}

/** functions/<name>/config.json + source.js; a name may contain '/' (nested directories). */
export function readFunctionsDir(ctx: ReadContext, dir = 'functions/'): AppFunction[] {
  const out: AppFunction[] = [];
  const paths = ctx.under(dir);
  const configDirs = new Set<string>();
  for (const path of paths) {
    if (!path.endsWith('/config.json') || path.includes('/node_modules/')) continue;
    const fnDir = path.slice(0, -'config.json'.length);
    if (fnDir === dir) continue; // functions/config.json is the export layout's list, not a function
    configDirs.add(fnDir);
    const config = ctx.object(path);
    const sourcePath = `${fnDir}source.js`;
    const source = ctx.text(sourcePath);
    if (!config) continue;
    ctx.origins.set(config, { file: path, prefix: '', sourceFile: sourcePath });
    out.push({ config: config as FunctionConfig, source: source ?? '' });
  }
  for (const path of paths) {
    if (!path.endsWith('/source.js') || path.includes('/node_modules/')) continue;
    const fnDir = path.slice(0, -'source.js'.length);
    if (configDirs.has(fnDir) || fnDir === dir) continue;
    out.push(defaultedFunction(ctx, fnDir.slice(dir.length, -1), path, `${fnDir}config.json`));
  }
  return out;
}

/**
 * What App Services gives a function whose source has no configuration on import (docs-app-services,
 * function configuration files): callable by clients, running as the calling user, arguments logged,
 * no can_evaluate (every authenticated call may run it).
 */
export function defaultFunctionConfig(name: string): FunctionConfig {
  return { name, private: false, run_as_system: false };
}

/** A function read from a source file alone, with the default config and a warning naming where its config belongs. */
export function defaultedFunction(ctx: ReadContext, name: string, sourcePath: string, configFile: string): AppFunction {
  const config = defaultFunctionConfig(name);
  const source = ctx.text(sourcePath) ?? '';
  ctx.origins.set(config, { file: sourcePath, prefix: '', sourceFile: sourcePath });
  ctx.warn(
    sourcePath,
    '',
    'function.config.default',
    `function "${name}" has no configuration in ${configFile}: added with the default one (private: false, run_as_system: false), as App Services does on import`,
  );
  return { config, source };
}

export function readServicesDir(ctx: ReadContext, dir = 'services/'): AppService[] {
  const out: AppService[] = [];
  for (const name of childDirectories(ctx, dir)) {
    const svc = readServiceDir(ctx, `${dir}${name}/`);
    if (svc) out.push(svc);
  }
  return out;
}

/** One service directory: config.json, default_rule.json, rules/*.json, incoming_webhooks/. */
export function readServiceDir(ctx: ReadContext, dir: string): AppService | undefined {
  const configPath = `${dir}config.json`;
  if (!ctx.has(configPath)) {
    ctx.report(configPath, '', 'service.config.missing', `service directory ${dir} has no config.json`);
    return undefined;
  }
  const config = ctx.object(configPath);
  if (!config) return undefined;
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
  for (const path of directChildren(ctx, `${dir}rules/`, '.json')) {
    const rule = ctx.object(path);
    if (!rule) continue;
    ctx.origins.set(rule, { file: path, prefix: '' });
    if ('database' in rule || 'collection' in rule) service.collectionRules.push(rule as CollectionRule);
    else service.rules.push(rule as ServiceRule);
  }
  service.webhooks = readWebhooks(ctx, `${dir}incoming_webhooks/`);
  return service;
}

function readWebhooks(ctx: ReadContext, dir: string): Webhook[] {
  const out: Webhook[] = [];
  const read = (configPath: string, sourcePath: string) => {
    const config = ctx.object(configPath);
    const source = ctx.text(sourcePath);
    if (!config) return;
    ctx.origins.set(config, { file: configPath, prefix: '', sourceFile: sourcePath });
    out.push({ config: config as WebhookConfig, source: source ?? '' });
  };
  // The spec's single-webhook form (incoming_webhooks/config.json) and realm-cli's one directory per webhook.
  if (ctx.has(`${dir}config.json`)) read(`${dir}config.json`, `${dir}source.js`);
  for (const name of childDirectories(ctx, dir)) {
    if (ctx.has(`${dir}${name}/config.json`)) read(`${dir}${name}/config.json`, `${dir}${name}/source.js`);
  }
  return out;
}

/** A directory of one JSON object per file: triggers/, values/. */
export function readObjectsDir<T>(ctx: ReadContext, dir: string): T[] {
  const out: T[] = [];
  for (const path of directChildren(ctx, dir, '.json')) {
    const obj = ctx.object(path);
    if (!obj) continue;
    ctx.origins.set(obj, { file: path, prefix: '' });
    out.push(obj as T);
  }
  return out;
}

export function readTriggers(ctx: ReadContext): Trigger[] {
  return readObjectsDir<Trigger>(ctx, 'triggers/');
}

export function readValues(ctx: ReadContext): Value[] {
  return readObjectsDir<Value>(ctx, 'values/');
}

export function readHosting(ctx: ReadContext): Hosting | undefined {
  const metaPath = 'hosting/metadata.json';
  const filePaths = ctx.under('hosting/files/');
  if (!ctx.has(metaPath) && filePaths.length === 0) return undefined;
  const metadata: HostingFileMetadata[] = [];
  if (ctx.has(metaPath)) {
    const items = ctx.array(metaPath);
    items?.forEach((item, i) => {
      if (!isPlainObject(item)) {
        ctx.report(metaPath, `[${i}]`, 'hosting.metadata.shape', 'each metadata item must be an object with path and attrs');
        return;
      }
      metadata.push(item as HostingFileMetadata);
    });
    const holder: object = metadata;
    ctx.origins.set(holder, { file: metaPath, prefix: '' });
  }
  const files = new Map<string, Uint8Array>();
  for (const path of filePaths) {
    const bytes = ctx.bytes(path);
    if (bytes) files.set(`/${path.slice('hosting/files/'.length)}`, bytes);
  }
  return { metadata, files };
}

export function readSync(ctx: ReadContext, path = 'sync/config.json'): SyncConfig | undefined {
  if (!ctx.has(path)) return undefined;
  const obj = ctx.object(path);
  if (obj) ctx.origins.set(obj, { file: path, prefix: '' });
  return obj;
}

export function readGraphql(ctx: ReadContext): GraphqlConfig | undefined {
  const configPath = 'graphql/config.json';
  const resolverPaths = directChildren(ctx, 'graphql/custom_resolvers/', '.json');
  if (!ctx.has(configPath) && resolverPaths.length === 0) return undefined;
  const graphql: GraphqlConfig = { customResolvers: [] };
  if (ctx.has(configPath)) {
    const config = ctx.object(configPath);
    if (config) {
      ctx.origins.set(config, { file: configPath, prefix: '' });
      graphql.config = config;
    }
  }
  for (const path of resolverPaths) {
    const obj = ctx.object(path);
    if (!obj) continue;
    ctx.origins.set(obj, { file: path, prefix: '' });
    graphql.customResolvers.push(obj as CustomResolver);
  }
  return graphql;
}

export function readSettingsFile(ctx: ReadContext, path: string): JsonObject | undefined {
  if (!ctx.has(path)) {
    ctx.report(path, '', 'app.config.missing', `the app has no ${path}`);
    return undefined;
  }
  return ctx.object(path);
}

export { baseName };
