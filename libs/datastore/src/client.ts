/**
 * Cluster mapping: a data-source service's `clusterName` resolves to MongoDB when the server settings map
 * that name (or `*`, every other name) to a URI, else to an embedded database under
 * `<dataDir>/clusters/<clusterName>`, so an imported app runs without any database set up. The MongoDB
 * client names itself after the cluster (`appName`, unless the URI sets one): Tessera's datastore service
 * serves each connection the embedded cluster of that name.
 */
import { join } from 'node:path';
import { type DataSourceClient } from './api/data-source';
import { DatastoreError } from './api/datastore.error';
import { openEmbeddedClient } from './embedded/embedded-client';
import { type ServiceStoreOptions } from './embedded/service-store';
import { MongoDataSourceClient } from './mongodb/mongodb-client';
import { traceDataSource } from './tracing/traced-client';

export type ReadPreference = 'primary' | 'primaryPreferred' | 'secondary' | 'secondaryPreferred' | 'nearest';

export interface DataSourceClientOptions {
  /** `config.clusterName` of the data-source service. */
  clusterName: string;
  /** Name of the service in the app (for messages). */
  serviceName?: string;
  /** The server's data directory (embedded clusters live under `clusters/`). */
  dataDir: string;
  /** Server setting: cluster name -> MongoDB connection string. */
  clusterUris?: Record<string, string | undefined>;
  /** `config.readPreference` of the service (MongoDB engine only). */
  readPreference?: ReadPreference;
  /** Tuning of the embedded engine. */
  embedded?: ServiceStoreOptions;
}

export function embeddedClusterDir(dataDir: string, clusterName: string): string {
  return join(dataDir, 'clusters', clusterName);
}

export function createDataSourceClient(options: DataSourceClientOptions): DataSourceClient {
  const { clusterName } = options;
  if (!clusterName || /[/\\]|^\.\.?$/.test(clusterName)) {
    throw new DatastoreError('BadValue', `Invalid cluster name '${clusterName}' for service '${options.serviceName ?? ''}'`);
  }
  const uri = options.clusterUris?.[clusterName] ?? options.clusterUris?.['*'];
  // Both engines behind the same spans: a request's trace shows its data access whichever engine serves it.
  const client = uri
    ? new MongoDataSourceClient(uri, { readPreference: options.readPreference, ...(/[?&]appname=/i.test(uri) ? {} : { appName: clusterName }) })
    : openEmbeddedClient(embeddedClusterDir(options.dataDir, clusterName), options.embedded);
  return traceDataSource(client, clusterName);
}
