import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { type AppConfig, writeAppFiles } from '@tessera/app-config';
import { type FunctionRunRequest, type FunctionRunResponse, Subjects } from '@tessera/contracts';
import { DataAccess, type DataAccessRequest } from '@tessera/data-access';
import { GraphqlGatewayModule } from '@tessera/graphql-gateway';
import { AppServicesExceptionFilter, installAppServicesContentType } from '@tessera/http-edge';
import { CommandHandler, connectMessaging, decodeEjson, encodeEjson, InProcessBus, MessagingModule } from '@tessera/messaging';
import { AppRegistry, DataSources, DeployedApps, DeploymentStore, PlatformModule } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';

/** A stand-in for an app function: gets the decoded arguments and the run request. */
export type TestFunction = (args: unknown[], request: FunctionRunRequest) => unknown;

export interface GraphqlHost {
  url: string;
  /** Every data-access call the GraphQL endpoint made, in order (to count reads per relationship level). */
  calls: Array<Pick<DataAccessRequest, 'action' | 'collection' | 'args'>>;
  runs: FunctionRunRequest[];
  dataSources: DataSources;
  createApp(name: string, config: AppConfig): Promise<{ clientAppId: string; appId: string }>;
  redeploy(appId: string, config: AppConfig): Promise<void>;
  /** An access token of a new anonymous user of the app, through the client API's login. */
  anonymousLogin(clientAppId: string): Promise<{ accessToken: string; userId: string }>;
  close(): Promise<void>;
}

/**
 * The gateway as the host mounts it (platform, exception filter, content-type hook), listening on a random
 * port, with the real client API auth, the real rules-enforcing data access, and an in-process bus whose
 * `functions.execution.run` handler runs `functions` in place of the function runtime.
 */
export async function startGraphqlHost(functions: Record<string, TestFunction>): Promise<GraphqlHost> {
  const dir = makeTempDir('tessera-graphql-');
  const settings = loadSettings({ TESSERA_DATA_DIR: dir.path, LOG_LEVEL: 'silent', TESSERA_EXAMPLE_APP: '' });
  const bus = new InProcessBus();
  const runs: FunctionRunRequest[] = [];

  @Controller()
  class TestFunctionRuntime {
    @CommandHandler(Subjects.FunctionsExecutionRun)
    run(request: FunctionRunRequest): FunctionRunResponse {
      runs.push(request);
      const fn = functions[request.functionName];
      if (!fn) return { ok: false, error: { errorCode: 'FunctionNotFound', message: `function not found: '${request.functionName}'` } };
      try {
        return { ok: true, result: encodeEjson(fn(decodeEjson(request.args) as unknown[], request) ?? null) };
      } catch (error) {
        return { ok: false, error: { errorCode: 'FunctionExecutionError', message: error instanceof Error ? error.message : String(error) } };
      }
    }
  }

  @Module({
    imports: [PlatformModule.forRoot(settings), MessagingModule.forRoot({ transport: 'in-process', bus }), GraphqlGatewayModule],
    controllers: [TestFunctionRuntime],
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
  const url = `http://127.0.0.1:${port}`;

  const calls: GraphqlHost['calls'] = [];
  const dataAccess = app.get(DataAccess, { strict: false });
  const execute = dataAccess.execute.bind(dataAccess);
  dataAccess.execute = (request) => {
    calls.push({ action: request.action, collection: request.collection, args: request.args });
    return execute(request);
  };
  const registry = app.get(AppRegistry);
  const deployments = app.get(DeploymentStore);
  return {
    url,
    calls,
    runs,
    dataSources: app.get(DataSources),
    async createApp(name, config) {
      const record = await registry.create({ name, groupId: '000000000000000000000001' });
      await deployments.deploy(record._id, writeAppFiles(config), { origin: 'test' });
      return { clientAppId: record.client_app_id, appId: record._id };
    },
    async redeploy(appId, config) {
      await deployments.deploy(appId, writeAppFiles(config), { origin: 'test' });
      // What the host's apps.deployment.changed handler does on every replica.
      app.get(DeployedApps).invalidate(appId);
    },
    async anonymousLogin(clientAppId) {
      const response = await fetch(`${url}/api/client/v2.0/app/${clientAppId}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (!response.ok) throw new Error(`login failed: ${response.status} ${await response.text()}`);
      const body = (await response.json()) as { access_token: string; user_id: string };
      return { accessToken: body.access_token, userId: body.user_id };
    },
    async close() {
      await app.close();
      dir.remove();
    },
  };
}
