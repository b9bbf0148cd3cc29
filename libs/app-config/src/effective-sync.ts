import { type AppConfig, isFederatedType, type SyncConfig } from './model';

/**
 * The app's sync configuration as the sync service runs it. An export of the 20210101 generation keeps a
 * partition-sync configuration in its cluster's `data_sources/<name>/config.json` (`config.sync`) and only
 * `{"development_mode_enabled": ...}` in sync/config.json; newer exports keep it all in sync/config.json.
 * So sync/config.json wins when it names a mode (a `type`, a `state` or a `partition`); otherwise the
 * cluster's embedded document is the configuration, with sync/config.json's settings laid over it and the
 * embedding cluster as its `service_name`.
 */
export function effectiveSyncConfig(app: AppConfig): SyncConfig | undefined {
  const own = app.sync;
  if (own && namesMode(own)) return own;
  for (const service of app.services) {
    const embedded = service.config.config?.['sync'];
    if (isObject(embedded) && !isFederatedType(service.config.type)) return { ...embedded, ...own, service_name: own?.service_name ?? service.config.name };
  }
  return own;
}

function namesMode(sync: SyncConfig): boolean {
  return sync.type !== undefined || sync.state !== undefined || sync.partition !== undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
