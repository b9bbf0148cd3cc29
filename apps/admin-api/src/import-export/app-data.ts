// realm-cli's AppData JSON (the whole 20210101 export directory as one object, sent to `POST .../import`)
// converted to and from the export layout's files, which @tessera/app-config reads.

import { stringifyJson, type AppFiles } from '@tessera/app-config';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';

type Json = Record<string, unknown>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function nameOf(value: Json, fallback: string): string {
  return typeof value['name'] === 'string' && value['name'] ? value['name'] : fallback;
}

/** What an export writes for an app without sync or GraphQL settings; importing them back adds nothing. */
export const defaultSyncConfig = { development_mode_enabled: false };
export const defaultGraphqlConfig = { use_natural_pluralization: true };

function isDefault(value: Json, defaults: Json): boolean {
  return JSON.stringify(Object.entries(value).sort()) === JSON.stringify(Object.entries(defaults).sort());
}

/** AppData JSON -> files of the 20210101 export layout (export defaults dropped). */
export function appDataToFiles(data: unknown): AppFiles {
  if (!isObject(data)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the import body must be a JSON object (realm-cli AppData)');
  const files: AppFiles = new Map();
  const json = (path: string, value: unknown): void => void files.set(path, encoder.encode(stringifyJson(value)));
  const text = (path: string, value: unknown): void => void files.set(path, encoder.encode(typeof value === 'string' ? value : ''));

  const realmConfig: Json = {};
  for (const key of ['config_version', 'app_id', 'name', 'location', 'provider_region', 'deployment_model', 'environment', 'allowed_request_origins']) {
    if (data[key] !== undefined && data[key] !== '') realmConfig[key] = data[key];
  }
  json('realm_config.json', realmConfig);
  for (const value of list(data['values'])) json(`values/${nameOf(value, 'value')}.json`, value);
  const auth = isObject(data['auth']) ? data['auth'] : {};
  if (isObject(auth['providers'])) json('auth/providers.json', auth['providers']);
  if (isObject(auth['config']) && Object.keys(auth['config']).length) json('auth/config.json', auth['config']);
  if (isObject(auth['custom_user_data']) && Object.keys(auth['custom_user_data']).length) json('auth/custom_user_data.json', auth['custom_user_data']);
  const functions = isObject(data['functions']) ? data['functions'] : {};
  if (Array.isArray(functions['config'])) json('functions/config.json', functions['config']);
  if (isObject(functions['sources'])) for (const [path, source] of Object.entries(functions['sources'])) text(`functions/${path}`, source);
  for (const trigger of list(data['triggers'])) json(`triggers/${nameOf(trigger, 'trigger')}.json`, trigger);
  for (const source of list(data['data_sources'])) {
    const config = isObject(source['config']) ? source['config'] : {};
    const dir = `data_sources/${nameOf(config, 'datastore-cluster')}`;
    json(`${dir}/config.json`, config);
    if (isObject(source['default_rule']) && Object.keys(source['default_rule']).length) json(`${dir}/default_rule.json`, source['default_rule']);
    for (const rule of list(source['rules'])) {
      const { schema, relationships, ...rules } = rule;
      const ruleDir = `${dir}/${String(rule['database'])}/${String(rule['collection'])}`;
      json(`${ruleDir}/rules.json`, rules);
      if (schema !== undefined) json(`${ruleDir}/schema.json`, schema);
      if (relationships !== undefined) json(`${ruleDir}/relationships.json`, relationships);
    }
  }
  for (const [root, members] of [['services', data['services']], ['http_endpoints', data['http_endpoints']]] as const) {
    for (const service of list(members)) {
      const config = isObject(service['config']) ? service['config'] : {};
      const dir = `${root}/${nameOf(config, 'service')}`;
      json(`${dir}/config.json`, config);
      for (const rule of list(service['rules'])) json(`${dir}/rules/${nameOf(rule, 'rule')}.json`, rule);
      for (const webhook of list(service['incoming_webhooks'])) {
        const webhookConfig = isObject(webhook['config']) ? webhook['config'] : {};
        const webhookDir = `${dir}/incoming_webhooks/${nameOf(webhookConfig, 'webhook')}`;
        json(`${webhookDir}/config.json`, webhookConfig);
        text(`${webhookDir}/source.js`, webhook['source']);
      }
    }
  }
  const graphql = isObject(data['graphql']) ? data['graphql'] : undefined;
  if (graphql) {
    if (isObject(graphql['config']) && !isDefault(graphql['config'], defaultGraphqlConfig)) json('graphql/config.json', graphql['config']);
    for (const resolver of list(graphql['custom_resolvers'])) json(`graphql/custom_resolvers/${String(resolver['on_type']).toLowerCase()}_${String(resolver['field_name'])}.json`, resolver);
  }
  if (isObject(data['hosting']) && Object.keys(data['hosting']).length) json('hosting/config.json', data['hosting']);
  const sync = isObject(data['sync']) ? data['sync'] : undefined;
  if (sync && isObject(sync['config']) && !isDefault(sync['config'], defaultSyncConfig)) json('sync/config.json', sync['config']);
  if (isObject(data['environments'])) for (const [name, environment] of Object.entries(data['environments'])) json(`environments/${name}.json`, environment);
  for (const forwarder of list(data['log_forwarders'])) json(`log_forwarders/${nameOf(forwarder, 'forwarder')}.json`, forwarder);
  // The custom HTTPS endpoints and the Data API settings (kept as files; see @tessera/app-config).
  const endpoints = isObject(data['endpoints']) ? data['endpoints']['config'] : data['endpoints'];
  if (Array.isArray(endpoints) && endpoints.length) json('http_endpoints/config.json', endpoints);
  if (isObject(data['data_api_config'])) json('http_endpoints/data_api_config.json', data['data_api_config']);
  return files;
}

/** Files of the 20210101 export layout -> AppData JSON (what realm-cli would send for that directory). */
export function filesToAppData(files: AppFiles): Json {
  const read = (path: string): unknown => (files.has(path) ? (JSON.parse(decoder.decode(files.get(path))) as unknown) : undefined);
  const data: Json = { ...(read('realm_config.json') as Json | undefined) };
  const underDir = (dir: string): string[] => [...files.keys()].filter((path) => path.startsWith(dir)).sort();
  const values = underDir('values/').map(read);
  if (values.length) data['values'] = values;
  const providers = read('auth/providers.json');
  const customUserData = read('auth/custom_user_data.json');
  if (providers !== undefined || customUserData !== undefined) data['auth'] = { ...(providers !== undefined ? { providers } : {}), ...(customUserData !== undefined ? { custom_user_data: customUserData } : {}) };
  const functionConfig = read('functions/config.json');
  if (functionConfig !== undefined) {
    const sources = Object.fromEntries(underDir('functions/').filter((path) => path.endsWith('.js')).map((path) => [path.slice('functions/'.length), decoder.decode(files.get(path))]));
    data['functions'] = { config: functionConfig, sources };
  }
  const triggers = underDir('triggers/').map(read);
  if (triggers.length) data['triggers'] = triggers;
  const dataSources: Json[] = [];
  for (const configPath of underDir('data_sources/').filter((path) => /^data_sources\/[^/]+\/config\.json$/.test(path))) {
    const dir = configPath.slice(0, -'config.json'.length);
    const rules = underDir(dir)
      .filter((path) => path.endsWith('/rules.json'))
      .map((path) => {
        const ruleDir = path.slice(0, -'rules.json'.length);
        const schema = read(`${ruleDir}schema.json`);
        const relationships = read(`${ruleDir}relationships.json`);
        return { ...(read(path) as Json), ...(schema !== undefined ? { schema } : {}), ...(relationships !== undefined ? { relationships } : {}) };
      });
    const defaultRule = read(`${dir}default_rule.json`);
    dataSources.push({ config: read(configPath), ...(defaultRule !== undefined ? { default_rule: defaultRule } : {}), rules });
  }
  if (dataSources.length) data['data_sources'] = dataSources;
  const services: Json[] = [];
  for (const configPath of underDir('services/').filter((path) => /^services\/[^/]+\/config\.json$/.test(path))) {
    const dir = configPath.slice(0, -'config.json'.length);
    const webhooks = underDir(`${dir}incoming_webhooks/`)
      .filter((path) => path.endsWith('/config.json'))
      .map((path) => ({ config: read(path), source: decoder.decode(files.get(`${path.slice(0, -'config.json'.length)}source.js`) ?? new Uint8Array()) }));
    services.push({ config: read(configPath), incoming_webhooks: webhooks, rules: underDir(`${dir}rules/`).map(read) });
  }
  if (services.length) data['services'] = services;
  const graphqlConfig = read('graphql/config.json');
  if (graphqlConfig !== undefined) data['graphql'] = { config: graphqlConfig, custom_resolvers: underDir('graphql/custom_resolvers/').map(read) };
  const sync = read('sync/config.json');
  if (sync !== undefined) data['sync'] = { config: sync };
  const hosting = read('hosting/config.json');
  if (hosting !== undefined) data['hosting'] = hosting;
  return data;
}
