import 'reflect-metadata';
import { Controller, Module, type Type } from '@nestjs/common';
import { type AppConfig, writeAppFiles } from '@tessera/app-config';
import { type FunctionRunRequest, type FunctionRunResponse, Subjects } from '@tessera/contracts';
import { DataAccess, type DataAccessRequest } from '@tessera/data-access';
import { ChangePublisher, privateCallRefusal } from '@tessera/function-runtime';
import { CommandHandler, decodeEjson, encodeEjson, MessageBus } from '@tessera/messaging';
import { AppRegistry, DataSources, DeployedApps, DeploymentStore, SecretStore } from '@tessera/platform';
import { type RunningHost, startHost } from '@tessera/server';
import { allServiceNames, loadSettings, type ServiceName, type Settings } from '@tessera/settings';
import { anonymousLogin, deployTestApp, makeTempDir, type TestApp, type TestLogin } from '@tessera/testing';

/** A stand-in for an app function: gets the decoded arguments and the run request. */
export type TestFunction = (args: unknown[], request: FunctionRunRequest) => unknown;

export type DataAccessCall = Pick<DataAccessRequest, 'action' | 'collection' | 'args'>;

export interface TestHostOptions {
  /** The services the host runs; every one by default, as standalone mode does. */
  services?: readonly ServiceName[];
  /** Fakes in place of real services: `functions` runs the function runtime as these functions. */
  fakes?: { functions?: Record<string, TestFunction> };
  /** Settings as environment variables, over the test defaults (random ports, silent log, no example app). */
  settings?: Record<string, string>;
  /** Settings set after loading, for values the environment refuses (a two-second token lifetime). */
  overrides?: Partial<Settings>;
  /** A data directory to reuse (a restart); its owner removes it. By default a fresh one, removed on close. */
  dataDir?: string;
}

export interface TestHost {
  url: string;
  dataDir: string;
  /** The Nest application (tests reach providers through it). */
  nest: RunningHost['nest'];
  /** Every request the fake function runtime was sent, in order. */
  runs: FunctionRunRequest[];
  /** The host's own data sources (to write app data as another party would). */
  dataSources: DataSources;
  /** The host's secret store (values sealed with the host's key). */
  secrets: SecretStore;
  /** Creates an app in the test group (or `groupId`), deploys `config` (or `emptyApp(name)` changed by it) and announces it. */
  createApp(name: string, config: AppConfig | ((app: AppConfig) => void), options?: { groupId?: string }): Promise<TestApp>;
  /** Deploys a new version of an app and announces it, as the admin API does. */
  redeploy(appId: string, config: AppConfig): Promise<void>;
  anonymousLogin(clientAppId: string): Promise<TestLogin>;
  /** From now on, every data-access call the host makes, in order (to count reads per relationship level). */
  recordDataAccess(): DataAccessCall[];
  close(): Promise<void>;
}

/**
 * The real process host (`startHost`: its HTTP edge, message handlers and services) on a random port with
 * a fresh data directory, with fakes in place of the services a test replaces, and the helpers every
 * end-to-end test needs: app creation, anonymous login, the stores behind the API.
 */
export async function startTestHost(options: TestHostOptions = {}): Promise<TestHost> {
  const dir = options.dataDir ? { path: options.dataDir, remove: () => undefined } : makeTempDir('tessera-test-host-');
  const runs: FunctionRunRequest[] = [];
  const functions = options.fakes?.functions;
  const services = [...(options.services ?? allServiceNames)];
  if (functions && !services.includes('function-runtime')) services.push('function-runtime');
  const env = { PORT: '0', HOST: '127.0.0.1', TESSERA_DATASTORE_PORT: '0', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'silent', ...options.settings };
  const settings: Settings = { ...loadSettings(env), services, ...options.overrides };
  const host = await startHost(settings, functions ? { replace: { 'function-runtime': fakeFunctionRuntime(functions, runs) } } : {});
  const stores = { apps: host.nest.get(AppRegistry), deployments: host.nest.get(DeploymentStore) };
  // The event reaches the runtime's handler asynchronously, and a new change feed starts from now: waiting
  // here until the app's feeds watch their sources (when the process runs the real runtime) lets a test's
  // first write reach the app's triggers.
  const announce = async (appId: string, deployment: { _id: string; version: number }): Promise<void> => {
    await host.nest.get(MessageBus).emit(Subjects.AppsDeploymentChanged, { appId, deploymentId: deployment._id, version: deployment.version });
    await changePublisher()?.refresh(appId);
  };
  const changePublisher = (): ChangePublisher | undefined => {
    try {
      return host.nest.get(ChangePublisher, { strict: false });
    } catch {
      return undefined;
    }
  };
  let calls: DataAccessCall[] | undefined;
  return {
    url: host.url,
    dataDir: dir.path,
    nest: host.nest,
    runs,
    dataSources: host.nest.get(DataSources),
    secrets: host.nest.get(SecretStore),
    async createApp(name, config, options = {}) {
      const app = await deployTestApp(stores, name, config, options);
      await announce(app.appId, app.deployment);
      return app;
    },
    async redeploy(appId, config) {
      await announce(appId, await stores.deployments.deploy(appId, writeAppFiles(config), { origin: 'test' }));
      // The announcement reaches this process's handler asynchronously; the next request must see the new version.
      host.nest.get(DeployedApps).invalidate(appId);
    },
    anonymousLogin: (clientAppId) => anonymousLogin(host.url, clientAppId),
    recordDataAccess() {
      if (calls) return calls;
      const recorded: DataAccessCall[] = (calls = []);
      const dataAccess = host.nest.get(DataAccess, { strict: false });
      const execute = dataAccess.execute.bind(dataAccess);
      dataAccess.execute = (request) => {
        recorded.push({ action: request.action, collection: request.collection, args: request.args });
        return execute(request);
      };
      return recorded;
    },
    async close() {
      await host.close();
      dir.remove();
    },
  };
}

/**
 * A function runtime that answers `functions.execution.run` by calling `functions` in this process (and
 * records every request in `runs`), so tests choose what an app function returns or throws.
 */
function fakeFunctionRuntime(functions: Record<string, TestFunction>, runs: FunctionRunRequest[]): Type {
  @Controller()
  class FakeFunctionRuntime {
    constructor(private readonly apps: DeployedApps) {}

    @CommandHandler(Subjects.FunctionsExecutionRun)
    async run(request: FunctionRunRequest): Promise<FunctionRunResponse> {
      runs.push(request);
      // The runtime, not the caller, refuses a client's call of a private function: the stand-in does too.
      const config = (await this.apps.byId(request.appId)).config.functions.find((candidate) => candidate.config.name === request.functionName)?.config;
      const refusal = config && (request.metadata.origin === 'client' || request.metadata.origin === 'graphql') ? privateCallRefusal(request.functionName, config) : undefined;
      if (refusal) return { ok: false, error: { errorCode: refusal.errorCode, message: refusal.message } };
      const fn = functions[request.functionName];
      if (!fn) return { ok: false, error: { errorCode: 'FunctionNotFound', message: `function not found: '${request.functionName}'` } };
      try {
        return { ok: true, result: encodeEjson(fn(decodeEjson(request.args) as unknown[], request) ?? null) };
      } catch (error) {
        return { ok: false, error: { errorCode: 'FunctionExecutionError', message: error instanceof Error ? error.message : String(error) } };
      }
    }
  }

  @Module({ controllers: [FakeFunctionRuntime] })
  class FakeFunctionRuntimeModule {}
  return FakeFunctionRuntimeModule;
}
