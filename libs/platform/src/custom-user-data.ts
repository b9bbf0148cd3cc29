import type { AppConfig } from '@tessera/app-config';
import type { Document } from '@tessera/datastore';
import type { DataSources } from './data-sources';

/**
 * The user's custom data document (config.json `custom_user_data_config`): read from its collection each
 * time it is needed (token issue, a function call, a sync BIND), as App Services does, so a change applies
 * at the next use. Null when disabled or absent.
 */
export async function readCustomUserData(config: AppConfig, dataSources: DataSources, userId: string): Promise<Document | null> {
  const custom = config.settings.custom_user_data_config;
  if (!custom || custom.enabled !== true || !custom.database_name || !custom.collection_name || !custom.user_id_field) return null;
  const service = config.services.find((candidate) => candidate.config.id === custom.mongo_service_id || candidate.config.name === custom.mongo_service_id);
  if (!service) return null;
  const { client } = dataSources.forService(config, service.config.name);
  return client.db(custom.database_name).collection(custom.collection_name).findOne({ [custom.user_id_field]: userId });
}
