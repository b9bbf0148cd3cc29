import { join } from 'node:path';
import { effectiveSyncConfig, emptyApp, readAppFiles } from './index';
import { readDirSync } from './__fixtures__/app-files';

describe('the sync configuration the sync service runs', () => {
  it('takes a 20210101 export’s partition sync from its cluster, with sync/config.json laid over it', () => {
    const { app } = readAppFiles(readDirSync(join(__dirname, '__fixtures__', 'export-20210101')));
    expect(app.sync).toEqual({ development_mode_enabled: false });
    expect(effectiveSyncConfig(app)).toMatchObject({
      state: 'enabled',
      service_name: 'mongodb-atlas',
      database_name: 'shop',
      development_mode_enabled: false,
      partition: { key: 'store_id', type: 'string', permissions: { read: true } },
    });
  });

  it('keeps sync/config.json when it names a mode, and says nothing when no document does', () => {
    const app = emptyApp('modern');
    expect(effectiveSyncConfig(app)).toBeUndefined();
    app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'c', sync: { state: 'enabled', partition: { key: 'old', type: 'string' } } } }, collectionRules: [], rules: [], webhooks: [] });
    app.sync = { type: 'flexible', state: 'enabled', service_name: 'mongodb-atlas' };
    expect(effectiveSyncConfig(app)).toBe(app.sync);
    // A federated data source's `sync` is not a cluster's sync configuration.
    const federated = emptyApp('federated');
    federated.services.push({ config: { name: 'lake', type: 'datalake', config: { sync: { state: 'enabled' } } }, collectionRules: [], rules: [], webhooks: [] });
    expect(effectiveSyncConfig(federated)).toBeUndefined();
  });
});
