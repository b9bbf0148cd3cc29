/**
 * The MongoDB wire server over the embedded clusters of this process's data directory: the `datastore`
 * service of a distributed deployment (the other services reach the clusters by URI, TESSERA_CLUSTER_URIS),
 * and, beside the other services, standalone mode's, so drivers, mongosh, Compass and mongodump/mongorestore
 * reach the clusters `npm start` keeps. Loopback unless told; wider only with credentials (settings refuse it).
 */
import { Inject, Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { embeddedClusterDir, WireServer } from '@tessera/datastore';
import { SETTINGS, type Settings } from '@tessera/settings';
import { readTlsFiles } from './wire/tls-files';

@Injectable()
export class DatastoreWireService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('datastore');
  private server?: WireServer;
  /** Standalone mode only: why the wire server is not running (its port was taken). */
  unavailable?: string;

  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  async onApplicationBootstrap(): Promise<void> {
    const { datastorePort: port, datastoreHost: host, datastoreCredentials: credentials } = this.settings;
    if (port === undefined) return;
    try {
      this.server = await WireServer.start({
        // The clusters live where standalone mode keeps them, so one data directory serves either mode (and
        // in standalone mode the server shares this process's open stores: one writer per directory).
        clustersDir: embeddedClusterDir(this.settings.dataDir, ''),
        defaultCluster: this.settings.datastoreDefaultCluster,
        port,
        host,
        credentials,
        tls: readTlsFiles(this.settings.datastoreTls),
        log: (level, message) => this.logger[level === 'info' ? 'log' : level](message),
      });
    } catch (error) {
      // A laptop may already run a mongod on 27017: standalone mode starts without its wire server, saying so.
      if (this.settings.mode !== 'standalone' || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      this.unavailable = `port ${port} on ${host} is in use (set TESSERA_DATASTORE_PORT, or off)`;
      this.logger.warn(`the datastore wire server did not start: ${this.unavailable}`);
      return;
    }
    const auth = credentials ? 'SCRAM-SHA-256' : 'no authentication';
    this.logger.log(`MongoDB wire server listening on ${host}:${this.server.port} (${auth}${this.settings.datastoreTls ? ', TLS' : ''})`);
  }

  /** Port the wire server listens on (undefined until it started, or when it is off). */
  get port(): number | undefined {
    return this.server?.port;
  }

  /** Readiness: the server accepts connections, or is not meant to (off, or standalone's port was taken). */
  get ready(): boolean {
    if (this.settings.datastorePort === undefined || this.unavailable !== undefined) return true;
    return this.server?.listening ?? false;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await server?.close();
  }
}

@Module({ providers: [DatastoreWireService], exports: [DatastoreWireService] })
export class DatastoreServiceModule {}
