import { isDataSourceType, isFederatedType, type AppConfig, type AppService } from '@tessera/app-config';
import { createDataSourceClient, type DataSourceClient, type ReadPreference } from '@tessera/datastore';
import { TesseraError } from '@tessera/domain';
import type { Settings } from '@tessera/settings';

/** Cluster name of the platform's own databases: its state (`platform`, see PlatformDatabase) and each app's users (`app-<id>`). */
export const PLATFORM_CLUSTER = 'tessera-platform';

export class ServiceNotFoundError extends TesseraError {
  readonly errorCode = 'ServiceNotFound';
  readonly httpStatus = 404;
}

/** A linked data source as a caller sees it: the client and what the service config says about it. */
export interface LinkedDataSource {
  client: DataSourceClient;
  service: AppService;
  federated: boolean;
}

/**
 * One client per cluster, shared by every app that links it (as apps linking one Atlas cluster share its
 * data). A cluster name mapped in `TESSERA_CLUSTER_URIS` is MongoDB; any other is an embedded database in
 * the data directory, so an imported app runs at once.
 */
export class DataSources {
  private readonly clients = new Map<string, DataSourceClient>();

  constructor(private readonly settings: Settings) {}

  /** The platform's own database. */
  platform(): DataSourceClient {
    return this.forCluster(PLATFORM_CLUSTER);
  }

  forCluster(clusterName: string, readPreference?: ReadPreference): DataSourceClient {
    const key = `${clusterName}\u0000${readPreference ?? ''}`;
    let client = this.clients.get(key);
    if (!client) {
      client = createDataSourceClient({ clusterName, dataDir: this.settings.dataDir, clusterUris: this.settings.clusterUris, ...(readPreference ? { readPreference } : {}) });
      this.clients.set(key, client);
    }
    return client;
  }

  /**
   * The data source an app's service links. Accepts the service's name, or `mongodb-atlas` (what realm-web
   * and the SDKs send by default) for the app's one cluster service.
   */
  forService(app: AppConfig, serviceName: string): LinkedDataSource {
    const services = app.services.filter((service) => isDataSourceType(service.config.type));
    const service =
      services.find((candidate) => candidate.config.name === serviceName) ??
      (serviceName === 'mongodb-atlas' || serviceName === 'mongo-db' ? services.find((candidate) => !isFederatedType(candidate.config.type)) : undefined);
    if (!service) throw new ServiceNotFoundError(`service not found: '${serviceName}'`);
    const settings = service.config.config ?? {};
    const federated = isFederatedType(service.config.type);
    const cluster = String((federated ? settings['dataLakeName'] : settings['clusterName']) ?? service.config.name);
    const readPreference = typeof settings['readPreference'] === 'string' ? (settings['readPreference'] as ReadPreference) : undefined;
    return { client: this.forCluster(federated ? `federated-${cluster}` : cluster, readPreference), service, federated };
  }

  async closeAll(): Promise<void> {
    const clients = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(clients.map((client) => client.close()));
  }
}
