import { type DynamicModule, Module } from '@nestjs/common';
import { AdminApiModule } from '@tessera/admin-api';
import { GraphqlGatewayModule } from '@tessera/graphql-gateway';
import { PlatformModule } from '@tessera/platform';
import type { ServiceName, Settings } from '@tessera/settings';
import { LoggerModule } from 'nestjs-pino';
import { HealthController } from './health.controller';

const serviceModules: Record<ServiceName, DynamicModule['module'] | undefined> = {
  'admin-api': AdminApiModule,
  'graphql-gateway': GraphqlGatewayModule,
  'function-runtime': undefined,
  'sync-service': undefined,
};

/** The root module of a Tessera process: the platform, logging, and the services this process runs. */
@Module({})
export class HostModule {
  static forRoot(settings: Settings, version: string): DynamicModule {
    const services = settings.services.map((name) => serviceModules[name]).filter((module) => module !== undefined);
    return {
      module: HostModule,
      controllers: [HealthController],
      imports: [
        PlatformModule.forRoot(settings),
        LoggerModule.forRoot({
          pinoHttp: {
            level: settings.logLevel,
            base: { service: settings.mode === 'standalone' ? 'tessera' : settings.services.join('+'), version },
            redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.apiKey', '*.key'], censor: '[redacted]' },
            autoLogging: false,
            quietReqLogger: true,
          },
        }),
        ...services,
      ],
    };
  }
}
