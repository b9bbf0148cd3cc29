import { ChangePublisher, DatabaseTriggerConsumer, DatabaseTriggerRunner, FunctionRuntimeService, NodeHttpPort, TriggerClaims } from '@tessera/function-runtime';
import { InMemoryAppFunctions, InMemoryDataAccess, InMemoryExecutionLogStore, InMemoryValues } from '@tessera/function-runtime/testing';
import { durableStreams, JetStreamEvents } from '@tessera/messaging';
import { DataSources, DatastoreAppRegistry, DeployedApps, DeploymentStore, PlatformDatabase } from '@tessera/platform';
import { loadSettings, type Settings } from '@tessera/settings';
import { eventually } from '@tessera/testing';
import { expect } from 'vitest';

/** A function-runtime replica as far as database triggers go: its own NATS connection, runtime and execution log. */
export interface TriggerReplica {
  events: JetStreamEvents;
  consumer: DatabaseTriggerConsumer;
  runner: DatabaseTriggerRunner;
  runtime: FunctionRuntimeService;
  logs: InMemoryExecutionLogStore;
}

export interface TriggerReplicaOptions {
  natsUrl: string;
  appId: string;
  /** The app's functions: name -> source. */
  functions: Record<string, string>;
  /** The platform database and deployed apps the replicas share, as runtime processes do. */
  dataSources: DataSources;
  deployed: DeployedApps;
  dataDir: string;
  /** Connection options of its NATS connection. */
  connection?: Parameters<typeof JetStreamEvents.connect>[0]['connection'];
}

/**
 * Starts a replica consuming the trigger groups of the change stream. Tests of test/distributed and
 * test/triggers run several in one process (the embedded data directory opens in one process only).
 */
export async function startTriggerReplica(options: TriggerReplicaOptions): Promise<TriggerReplica> {
  const { runtime, logs } = triggerTestRuntime(options.appId, options.functions);
  const events = await JetStreamEvents.connect({ url: options.natsUrl, ...(options.connection ? { connection: options.connection } : {}) });
  // Replicas share the claims of trigger runs and the triggers' states in the platform database.
  const runner = new DatabaseTriggerRunner(options.dataSources, options.deployed, runtime, new TriggerClaims(options.dataSources, loadSettings({ TESSERA_DATA_DIR: options.dataDir })));
  const consumer = new DatabaseTriggerConsumer(events, options.deployed, runner);
  await consumer.onApplicationBootstrap();
  return { events, consumer, runner, runtime, logs };
}

/** A real runtime (the sandbox) running the app's private `functions` (name -> source), with an in-memory execution log. */
export function triggerTestRuntime(appId: string, sources: Record<string, string>): { runtime: FunctionRuntimeService; logs: InMemoryExecutionLogStore } {
  const functions = new InMemoryAppFunctions();
  functions.deploy(appId, Object.fromEntries(Object.entries(sources).map(([name, source]) => [name, { source, config: { private: true } }])));
  const logs = new InMemoryExecutionLogStore(10_000);
  const runtime = new FunctionRuntimeService({
    dependencies: { functions, dataAccess: new InMemoryDataAccess(), values: new InMemoryValues(), http: new NodeHttpPort({ timeoutMs: 5_000 }), logs },
    options: { timeLimitMs: 5_000, memoryLimitMb: 64, sandboxesPerApp: 1 },
  });
  return { runtime, logs };
}

export async function stopTriggerReplica(replica: TriggerReplica): Promise<void> {
  await replica.consumer.onModuleDestroy();
  await replica.runner.onModuleDestroy();
  await replica.events.close();
  await replica.runtime.close();
}

/** The platform state of a data directory as a runtime process opens it: the registry, deployments and deployed apps. */
export function platformOf(dataDir: string): { settings: Settings; dataSources: DataSources; registry: DatastoreAppRegistry; deployments: DeploymentStore; deployed: DeployedApps } {
  const settings = loadSettings({ TESSERA_DATA_DIR: dataDir });
  const dataSources = new DataSources(settings);
  const platform = new PlatformDatabase(dataSources.platform());
  const registry = new DatastoreAppRegistry(platform);
  const deployments = new DeploymentStore(platform);
  return { settings, dataSources, registry, deployments, deployed: new DeployedApps(registry, deployments) };
}

/** A change publisher following `appId`'s linked cluster, publishing on `events` (its durable streams ensured first). */
export async function startChangePublisher(platform: ReturnType<typeof platformOf>, events: JetStreamEvents, appId: string): Promise<ChangePublisher> {
  for (const stream of durableStreams) await events.ensureStream(stream);
  const publisher = new ChangePublisher(platform.registry, platform.deployed, platform.dataSources, events, platform.settings);
  publisher.onApplicationBootstrap();
  await eventually(() => expect(publisher.following).toEqual([`${appId}/mongodb-atlas`]));
  return publisher;
}

/** Stops what a trigger test started, in order: the publisher, the replicas, the publisher's connection, the clusters. */
export async function stopTriggerTest(parts: { publisher?: ChangePublisher; replicas: readonly TriggerReplica[]; events?: JetStreamEvents; dataSources?: DataSources }): Promise<void> {
  await parts.publisher?.onModuleDestroy();
  for (const replica of parts.replicas) await stopTriggerReplica(replica);
  await parts.events?.close();
  await parts.dataSources?.closeAll();
}
