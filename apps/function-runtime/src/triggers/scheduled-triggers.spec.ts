import { DataSources, DatastoreAppRegistry, DeployedApps, DeploymentStore, PlatformDatabase } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { deployTestApp, eventually, makeTempDir } from '@tessera/testing';
import { InMemoryExecutionLogStore } from '../testing/in-memory-execution-logs';
import { FunctionRuntimeService } from '../function-runtime.service';
import { NodeHttpPort } from '../ports/http.port';
import { InMemoryAppFunctions, InMemoryDataAccess, InMemoryValues } from '../testing/in-memory-ports';
import { ScheduledTriggers } from './scheduled-triggers';
import { TriggerClaims } from './trigger-claims';

// Scheduled triggers on two runtime replicas sharing the platform database, driven by a test clock.
describe('scheduled triggers', () => {
  const dir = makeTempDir('tessera-scheduled-');
  const settings = loadSettings({ TESSERA_DATA_DIR: dir.path });
  const dataSources = new DataSources(settings);
  const platform = new PlatformDatabase(dataSources.platform());
  const registry = new DatastoreAppRegistry(platform);
  const deployments = new DeploymentStore(platform);
  const deployed = new DeployedApps(registry, deployments);
  const replicas: Array<{ scheduler: ScheduledTriggers; runtime: FunctionRuntimeService; logs: InMemoryExecutionLogStore }> = [];
  let appId: string;

  beforeAll(async () => {
    ({ appId } = await deployTestApp({ apps: registry, deployments }, 'clock', (app) => {
      app.functions.push({ config: { name: 'tick', private: true }, source: 'exports = () => { console.log("tick"); };' });
      app.triggers.push(
        { name: 'everyFiveMinutes', type: 'SCHEDULED', function_name: 'tick', config: { schedule: '*/5 * * * *' }, disabled: false },
        { name: 'paused', type: 'SCHEDULED', function_name: 'tick', config: { schedule: '* * * * *' }, disabled: true },
        { name: 'broken', type: 'SCHEDULED', function_name: 'tick', config: { schedule: 'every minute' }, disabled: false },
      );
    }));
    for (let i = 0; i < 2; i++) {
      const functions = new InMemoryAppFunctions();
      functions.deploy(appId, { tick: { source: 'exports = () => { console.log("tick"); };', config: { private: true } } });
      const logs = new InMemoryExecutionLogStore(100);
      const runtime = new FunctionRuntimeService({ dependencies: { functions, dataAccess: new InMemoryDataAccess(), values: new InMemoryValues(), http: new NodeHttpPort({ timeoutMs: 5_000 }), logs }, options: { timeLimitMs: 5_000, memoryLimitMb: 64, sandboxesPerApp: 1 } });
      replicas.push({ scheduler: new ScheduledTriggers(registry, deployed, runtime, new TriggerClaims(dataSources, settings)), runtime, logs });
    }
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.runtime.close();
    await dataSources.closeAll();
    dir.remove();
  });

  const runs = async (): Promise<string[]> => {
    const all = await Promise.all(replicas.map(async ({ logs }, index) => (await logs.list({ appId })).filter((entry) => entry.trigger?.type === 'SCHEDULED').map((entry) => `${index}:${entry.trigger?.name}`)));
    return all.flat();
  };

  it('fires each firing of a schedule once across replicas, and nothing disabled or unparseable', async () => {
    const at = (time: string) => Promise.all(replicas.map(({ scheduler }) => scheduler.tick(new Date(time))));
    await at('2026-03-01T10:01:00Z'); // loads the schedules: next firing 10:05
    await at('2026-03-01T10:04:59Z');
    expect(await runs()).toEqual([]);
    await at('2026-03-01T10:05:00Z');
    // The runtime records a run just after it.
    await eventually(async () => expect((await runs()).map((run) => run.split(':')[1])).toEqual(['everyFiveMinutes']));
    await at('2026-03-01T10:05:30Z');
    expect(await runs()).toHaveLength(1);
    // A replica that was away for three firings fires the current one only.
    await at('2026-03-01T10:21:00Z');
    await eventually(async () => expect(await runs()).toHaveLength(2));
    const [entry] = (await replicas[0].logs.list({ appId })).concat(await replicas[1].logs.list({ appId }));
    expect(entry).toMatchObject({ functionName: 'tick', runAsId: 'system', origin: 'trigger', logs: ['tick'], trigger: { name: 'everyFiveMinutes', type: 'SCHEDULED' } });
  });

  it('loses only the firing it could not claim and keeps its schedule', async () => {
    const functions = new InMemoryAppFunctions();
    functions.deploy(appId, { tick: { source: 'exports = () => { console.log("tick"); };', config: { private: true } } });
    const logs = new InMemoryExecutionLogStore(100);
    const runtime = new FunctionRuntimeService({ dependencies: { functions, dataAccess: new InMemoryDataAccess(), values: new InMemoryValues(), http: new NodeHttpPort({ timeoutMs: 5_000 }), logs }, options: { timeLimitMs: 5_000, memoryLimitMb: 64, sandboxesPerApp: 1 } });
    let reachable = false;
    // The platform database is unreachable for the first firing (the claim cannot be made), then back.
    const claims = { claim: async () => (reachable ? true : Promise.reject(new Error('platform database unreachable'))) } as unknown as TriggerClaims;
    const scheduler = new ScheduledTriggers(registry, deployed, runtime, claims);
    try {
      await scheduler.tick(new Date('2026-03-02T10:01:00Z'));
      await scheduler.tick(new Date('2026-03-02T10:05:00Z'));
      reachable = true;
      await scheduler.tick(new Date('2026-03-02T10:10:00Z'));
      await eventually(async () => expect((await logs.list({ appId })).map((run) => run.trigger?.name)).toEqual(['everyFiveMinutes']));
    } finally {
      await runtime.close();
    }
  });
});
