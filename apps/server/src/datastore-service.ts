/**
 * The `datastore` service: the MongoDB wire server over the embedded clusters of this process's data
 * directory, so the other services of a distributed deployment reach them by URI (TESSERA_CLUSTER_URIS).
 */
import { Inject, Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { embeddedClusterDir, WireServer } from '@tessera/datastore';
import { SETTINGS, type Settings } from '@tessera/settings';
import { isLoopback, readTlsFiles } from './wire/tls-files';

@Injectable()
export class DatastoreWireService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('datastore');
  private server?: WireServer;

  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  async onApplicationBootstrap(): Promise<void> {
    this.server = await WireServer.start({
      // The clusters live where standalone mode keeps them, so one data directory serves either mode.
      clustersDir: embeddedClusterDir(this.settings.dataDir, ''),
      port: this.settings.datastorePort,
      // Not settings.host: loopback unless told (a pod sets 0.0.0.0 with TESSERA_DATASTORE_PASSWORD).
      host: this.settings.datastoreHost,
      credentials: this.settings.datastoreCredentials,
      tls: readTlsFiles(this.settings.datastoreTls),
      log: (level, message) => this.logger[level === 'info' ? 'log' : level](message),
    });
    const auth = this.settings.datastoreCredentials ? 'SCRAM-SHA-256' : 'no authentication';
    this.logger.log(`MongoDB wire server listening on ${this.settings.datastoreHost}:${this.server.port} (${auth}${this.settings.datastoreTls ? ', TLS' : ''})`);
    if (!this.settings.datastoreCredentials && !isLoopback(this.settings.datastoreHost)) {
      this.logger.warn('the datastore wire server listens beyond loopback without TESSERA_DATASTORE_PASSWORD: any client that reaches it reads every cluster');
    }
  }

  /** Port the wire server listens on (undefined until it started). */
  get port(): number | undefined {
    return this.server?.port;
  }

  /** Readiness: the server accepts connections. */
  get listening(): boolean {
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
