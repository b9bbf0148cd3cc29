// The App Services export layout (config_version 20210101) that realm-cli reads from `GET .../export`,
// written from the model. @tessera/app-config reads this layout but writes only the current one.

import { defaultGraphqlConfig, defaultSyncConfig } from './app-data';
import { CONFIG_VERSION, isDataSourceType, stringifyJson, type AppConfig, type AppFiles } from '@tessera/app-config';

const encoder = new TextEncoder();

export function writeExportFiles(app: AppConfig, options: { sourceControl: boolean; clientAppId?: string }): AppFiles {
  const files: AppFiles = new Map();
  const json = (path: string, value: unknown): void => void files.set(path, encoder.encode(stringifyJson(value)));
  const text = (path: string, value: string): void => void files.set(path, encoder.encode(value));

  const { security, custom_user_data_config: customUserData, app_id: _appId, hosting, ...settings } = app.settings;
  json('realm_config.json', {
    ...settings,
    config_version: CONFIG_VERSION,
    ...(!options.sourceControl && options.clientAppId ? { app_id: options.clientAppId } : {}),
    ...(security?.allowed_request_origins ? { allowed_request_origins: security.allowed_request_origins } : {}),
  });
  json('auth/providers.json', Object.fromEntries(app.authProviders.map((provider) => [provider.name, provider])));
  if (customUserData) {
    const { mongo_service_id: serviceId, ...rest } = customUserData;
    const service = app.services.find((candidate) => candidate.config.id === serviceId || candidate.config.name === serviceId);
    json('auth/custom_user_data.json', { ...rest, ...(serviceId !== undefined ? { mongo_service_name: service?.config.name ?? serviceId } : {}) });
  }
  json('functions/config.json', app.functions.map((fn) => fn.config));
  for (const fn of app.functions) text(`functions/${fn.config.name}.js`, fn.source);
  for (const service of app.services) {
    if (isDataSourceType(service.config.type)) {
      const dir = `data_sources/${service.config.name}`;
      json(`${dir}/config.json`, service.config);
      if (service.defaultRule) json(`${dir}/default_rule.json`, service.defaultRule);
      for (const rule of service.collectionRules) {
        const { schema, relationships, ...rules } = rule;
        const ruleDir = `${dir}/${rule.database}/${rule.collection}`;
        json(`${ruleDir}/rules.json`, rules);
        if (schema) json(`${ruleDir}/schema.json`, schema);
        if (relationships) json(`${ruleDir}/relationships.json`, relationships);
      }
    } else {
      const dir = `services/${service.config.name}`;
      json(`${dir}/config.json`, service.config);
      for (const rule of service.rules) json(`${dir}/rules/${rule.name}.json`, rule);
      for (const webhook of service.webhooks) {
        json(`${dir}/incoming_webhooks/${webhook.config.name}/config.json`, webhook.config);
        text(`${dir}/incoming_webhooks/${webhook.config.name}/source.js`, webhook.source);
      }
    }
  }
  for (const trigger of app.triggers) json(`triggers/${trigger.name}.json`, trigger);
  for (const value of app.values) json(`values/${value.name}.json`, value);
  json('sync/config.json', app.sync ?? defaultSyncConfig);
  json('graphql/config.json', app.graphql?.config ?? defaultGraphqlConfig);
  for (const resolver of app.graphql?.customResolvers ?? []) json(`graphql/custom_resolvers/${resolver.on_type.toLowerCase()}_${resolver.field_name}.json`, resolver);
  if (hosting) json('hosting/config.json', hosting);
  if (app.hosting) {
    json('hosting/metadata.json', app.hosting.metadata);
    for (const [path, bytes] of app.hosting.files) files.set(`hosting/files/${path.replace(/^\/+/, '')}`, bytes);
  }
  for (const [path, bytes] of app.extraFiles) if (!files.has(path)) files.set(path, bytes);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
