import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { type AppConfig, emptyApp, writeAppFiles } from '@tessera/app-config';
import { type FunctionRunRequest, type FunctionRunResponse, Subjects } from '@tessera/contracts';
import { privateCallRefusal } from '@tessera/function-runtime';
import { GraphqlGatewayModule } from '@tessera/graphql-gateway';
import { AppServicesExceptionFilter, installAppServicesContentType } from '@tessera/http-edge';
import { CommandHandler, connectMessaging, decodeEjson, encodeEjson, InProcessBus, MessagingModule } from '@tessera/messaging';
import { AppRegistry, DataSources, DeployedApps, DeploymentStore, PlatformModule, SecretStore } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';

/** A test stand-in for an app function: gets the decoded arguments and the run request. */
export type TestFunction = (args: unknown[], request: FunctionRunRequest) => unknown;

export interface InProcessHost {
  url: string;
  dataDir: string;
  runs: FunctionRunRequest[];
  /** The host's own data sources (to write app data as another party would). */
  dataSources: DataSources;
  /** The host's secret store (values sealed with the host's key). */
  secrets: SecretStore;
  /** Creates an app and deploys `configure(emptyApp)`; returns its client app id and `_id`. */
  createApp(name: string, configure: (app: AppConfig) => void): Promise<{ clientAppId: string; appId: string }>;
  close(): Promise<void>;
}

const FUNCTIONS = Symbol('TEST_FUNCTIONS');
const RUNS = Symbol('TEST_RUNS');

/**
 * The client API as the host mounts it (platform, exception filter, content-type hook, 18 MB body limit),
 * in this process, with an in-process bus whose `functions.execution.run` handler runs `functions` in
 * place of the function runtime. Data access is the production one: libs/data-access under the app's rules.
 */
export async function startInProcessHost(functions: Record<string, TestFunction>, options: { settings?: Record<string, string>; extraSettings?: Record<string, unknown> } = {}): Promise<InProcessHost> {
  const dir = makeTempDir('tessera-client-api-');
  const settings = { ...loadSettings({ TESSERA_DATA_DIR: dir.path, LOG_LEVEL: 'silent', TESSERA_EXAMPLE_APP: '', ...options.settings }), ...options.extraSettings };
  const bus = new InProcessBus();
  const runs: FunctionRunRequest[] = [];

  @Controller()
  class TestFunctionRuntime {
    constructor(private readonly apps: DeployedApps) {}

    @CommandHandler(Subjects.FunctionsExecutionRun)
    async run(request: FunctionRunRequest): Promise<FunctionRunResponse> {
      runs.push(request);
      // The runtime decides `private` for client callers; the stand-in asks the runtime's own check.
      const config = (await this.apps.byId(request.appId)).config.functions.find((candidate) => candidate.config.name === request.functionName)?.config;
      const refusal = config && (request.metadata.origin === 'client' || request.metadata.origin === 'graphql') ? privateCallRefusal(request.functionName, config) : undefined;
      if (refusal) return { ok: false, error: { errorCode: refusal.errorCode, message: refusal.message } };
      const fn = functions[request.functionName];
      if (!fn) return { ok: false, error: { errorCode: 'FunctionNotFound', message: `function not found: '${request.functionName}'` } };
      try {
        const result = fn(decodeEjson(request.args) as unknown[], request);
        return { ok: true, result: encodeEjson(result ?? null) };
      } catch (error) {
        return { ok: false, error: { errorCode: 'FunctionExecutionError', message: error instanceof Error ? error.message : String(error) } };
      }
    }
  }

  @Module({
    imports: [PlatformModule.forRoot(settings), MessagingModule.forRoot({ transport: 'in-process', bus }), GraphqlGatewayModule],
    controllers: [TestFunctionRuntime],
    providers: [{ provide: FUNCTIONS, useValue: functions }, { provide: RUNS, useValue: runs }],
  })
  class TestHostModule {}

  const app = await NestFactory.create<NestFastifyApplication>(TestHostModule, new FastifyAdapter({ bodyLimit: 18 * 1024 * 1024 }), { logger: false });
  app.useGlobalFilters(new AppServicesExceptionFilter());
  installAppServicesContentType(app.getHttpAdapter().getInstance());
  connectMessaging(app, { transport: 'in-process', bus, queue: 'function-runtime' });
  await app.startAllMicroservices();
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const registry = app.get(AppRegistry);
  const deployments = app.get(DeploymentStore);
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir: dir.path,
    runs,
    dataSources: app.get(DataSources),
    secrets: app.get(SecretStore),
    async createApp(name, configure) {
      const record = await registry.create({ name, groupId: '000000000000000000000001' });
      const config = emptyApp(name);
      configure(config);
      await deployments.deploy(record._id, writeAppFiles(config), { origin: 'test' });
      return { clientAppId: record.client_app_id, appId: record._id };
    },
    async close() {
      await app.close();
      dir.remove();
    },
  };
}
