import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { functionCallTimeoutMs, Subjects } from '@tessera/contracts';
import { AdminApiModule } from '@tessera/admin-api';
import { FunctionRuntimeServiceModule } from '@tessera/function-runtime';
import { GraphqlGatewayModule } from '@tessera/graphql-gateway';
import { DurableEventsModule, MessagingModule, type MessagingOptions } from '@tessera/messaging';
import { PlatformModule } from '@tessera/platform';
import { SyncServiceModule } from '@tessera/sync-service';
import type { ServiceName, Settings } from '@tessera/settings';
import { traceLogFields } from '@tessera/telemetry';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { DatastoreServiceModule } from './datastore-service';
import { HealthController } from './health.controller';
import { PlatformEventsHandler } from './platform-events.handler';
import { AppWireModule } from './wire/app-wire.module';

/**
 * Stand-ins for service modules, by service name: the end-to-end tests run this host with a fake in one
 * service's place (a function runtime that runs test functions), everything else as users run it.
 */
export type ServiceReplacements = Partial<Record<ServiceName, Type | DynamicModule>>;

const serviceModules: Record<ServiceName, Type | undefined> = {
  'admin-api': AdminApiModule,
  'graphql-gateway': GraphqlGatewayModule,
  'function-runtime': FunctionRuntimeServiceModule,
  'sync-service': SyncServiceModule,
  datastore: DatastoreServiceModule,
};

/** The root module of a Tessera process: the platform, logging, and the services this process runs. */
@Module({})
export class HostModule {
  static forRoot(settings: Settings, version: string, logStream?: DestinationStream, replacements: ServiceReplacements = {}): DynamicModule {
    const logging = {
      level: settings.logLevel,
      // Every line logged while a traced request or message is handled names its trace and span.
      mixin: traceLogFields,
      base: { service: settings.mode === 'standalone' ? 'tessera' : settings.services.join('+'), version },
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.apiKey', '*.key'], censor: '[redacted]' },
      autoLogging: false,
      quietReqLogger: true,
    };
    const services = settings.services.map((name) => replacements[name] ?? serviceModules[name]).filter((module) => module !== undefined);
    // The apps' wire endpoint serves from the gateway's processes, when a port is configured.
    if (settings.wire.port !== undefined && settings.services.includes('graphql-gateway') && !replacements['graphql-gateway']) services.push(AppWireModule);
    // Standalone mode serves its embedded clusters over the wire protocol too (drivers, mongosh, MongoDB's tools).
    if (runsDatastoreWire(settings) && !settings.services.includes('datastore')) services.push(DatastoreServiceModule);
    return {
      module: HostModule,
      controllers: [HealthController, PlatformEventsHandler],
      imports: [
        PlatformModule.forRoot(settings),
        MessagingModule.forRoot(messagingOptions(settings)),
        // The request logger is bound by `bindRequestLogger` (a hook of the HTTP edge: see createHttpEdge), not by pino-http's middleware.
        LoggerModule.forRoot({ pinoHttp: logStream ? [logging, logStream] : logging, forRoutes: [] }),
        // Durable events (document changes): JetStream streams created at boot, or the in-process stream.
        settings.mode === 'distributed' ? DurableEventsModule.forRoot({ url: settings.natsUrl, name: `tessera-${settings.services.join('+')}-events` }) : DurableEventsModule.inProcess(),
        ...services,
      ],
    };
  }
}

/** The process serves the datastore wire server: the `datastore` service, or standalone mode unless its port is `off`. */
export function runsDatastoreWire(settings: Settings): boolean {
  return settings.services.includes('datastore') || (settings.mode === 'standalone' && settings.datastorePort !== undefined);
}

/**
 * Standalone: every service on the in-process bus. Distributed: NATS, with the process named after its services.
 * A function call waits as long as the function may run; other requests wait the configured default.
 */
export function messagingOptions(settings: Settings): MessagingOptions {
  const common = {
    defaultTimeoutMs: settings.requestTimeoutMs,
    timeouts: { [Subjects.FunctionsExecutionRun]: functionCallTimeoutMs(settings.functionTimeLimitMs) },
    drainTimeoutMs: settings.shutdownDrainMs,
  };
  return settings.mode === 'standalone'
    ? { transport: 'in-process', ...common }
    : { transport: 'nats', url: settings.natsUrl, name: `tessera-${settings.services.join('+')}`, ...common };
}
