import { DatabaseTriggerRunner, databaseTriggers, type FunctionRuntimeService, TriggerClaims } from '@tessera/function-runtime';
import { type InMemoryExecutionLogStore } from '@tessera/function-runtime/testing';
import { type DocumentChanged } from '@tessera/contracts';
import { encodeEjson } from '@tessera/messaging';
import { type DataSources, type DeployedApps, TriggerStates } from '@tessera/platform';
import { deployTestApp, eventually, makeTempDir } from '@tessera/testing';
import { platformOf, triggerTestRuntime } from '../support/trigger-replicas';

// Fails on documents marked `fail`; logs the number of the others.
const handle = `exports = (changeEvent) => { if (changeEvent.fullDocument.fail) throw new Error('boom'); console.log(String(changeEvent.fullDocument.n)); };`;

// A suspended trigger whose backlog overflowed (its saved position is gone): `tolerate_resume_errors` decides
// whether a resume fails or starts from now; and a change handed over twice runs once. The runner over the
// real platform database (embedded, in a data directory) and the real sandbox, with a backlog of two changes;
// changes are handed to it as the trigger consumer hands them.
describe('the trigger runner: resuming a trigger whose saved position is gone (tolerate_resume_errors), repeated deliveries', () => {
  const dir = makeTempDir('tessera-resume-errors-');
  let dataSources: DataSources;
  let deployed: DeployedApps;
  let runtime: FunctionRuntimeService;
  let runner: DatabaseTriggerRunner;
  let states: TriggerStates;
  let logs: InMemoryExecutionLogStore;
  let appId: string;
  let token = 0;

  const change = (n: number, fail = false): DocumentChanged => {
    const resume = String(++token).padStart(24, '0');
    return {
      appId,
      service: 'mongodb-atlas',
      cluster: 'ResumeCluster',
      db: 'shop',
      coll: 'jobs',
      operationType: 'insert',
      documentKey: { _id: n },
      fullDocument: encodeEjson({ _id: n, n, fail }) as DocumentChanged['fullDocument'],
      wallTime: encodeEjson(new Date()),
      resumeToken: { _data: resume },
    };
  };
  const triggerNamed = async (name: string) => databaseTriggers((await deployed.byId(appId)).config).find((candidate) => candidate.name === name)!;
  const delivery = (payload: DocumentChanged) => ({ change: payload, messageId: `${appId}/mongodb-atlas/${(payload.resumeToken as { _data: string })._data}` });
  const deliver = async (name: string, payload: DocumentChanged) => runner.deliver(await triggerNamed(name), delivery(payload));
  const ran = async (name: string) => (await logs.list({ appId, limit: 1_000 })).filter((run) => run.trigger?.name === name && !run.error).flatMap((run) => run.logs);

  beforeAll(async () => {
    const { settings, registry, deployments, ...platform } = platformOf(dir.path);
    ({ dataSources, deployed } = platform);
    ({ appId } = await deployTestApp({ apps: registry, deployments }, 'resume-errors', (app) => {
      app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'ResumeCluster' } }, collectionRules: [], rules: [], webhooks: [] });
      app.functions.push({ config: { name: 'handle', private: true }, source: handle });
      const config = (tolerate: boolean) => ({ service_name: 'mongodb-atlas', database: 'shop', collection: 'jobs', operation_types: ['INSERT'], full_document: true, tolerate_resume_errors: tolerate });
      app.triggers.push(
        { name: 'strict', type: 'DATABASE', function_name: 'handle', config: config(false) },
        { name: 'tolerant', type: 'DATABASE', function_name: 'handle', config: config(true) },
        { name: 'plain', type: 'DATABASE', function_name: 'handle', config: { ...config(false), unordered: true } },
      );
    }));
    ({ runtime, logs } = triggerTestRuntime(appId, { handle }));
    runner = new DatabaseTriggerRunner(dataSources, deployed, runtime, new TriggerClaims(dataSources, settings), { backlogLimit: 2 });
    runner.onApplicationBootstrap();
    states = new TriggerStates(dataSources.platform());
  }, 60_000);

  afterAll(async () => {
    await runner?.onModuleDestroy();
    await runtime?.close();
    await dataSources?.closeAll();
    dir.remove();
  });

  for (const [name, tolerant] of [['strict', false], ['tolerant', true]] as const) {
    it(`${tolerant ? 'starts from now' : 'stays suspended with the error'} when its backlog overflowed (${name})`, async () => {
      await deliver(name, change(1, true));
      expect(await states.get(appId, name)).toMatchObject({ status: 'suspended', error: expect.stringContaining('boom') });
      // The failed change and one more fill the backlog of two; the third is more than it keeps.
      await deliver(name, change(2));
      await deliver(name, change(3));
      expect(await states.get(appId, name)).toMatchObject({ status: 'suspended', backlog: 2, backlog_lost: true });
      expect(await states.requestResume(appId, name, 'position')).toBe(true);
      if (tolerant) {
        await eventually(async () => expect((await states.get(appId, name))?.status).toBeUndefined(), { timeoutMs: 10_000 });
        await deliver(name, change(4));
        expect(await ran(name)).toEqual(['4']);
      } else {
        await eventually(async () => expect(await states.get(appId, name)).toMatchObject({ status: 'suspended', error: expect.stringContaining('saved position is gone') }), { timeoutMs: 10_000 });
        await deliver(name, change(4));
        // Still suspended: the change waits (or is dropped once the backlog is full), and nothing ran.
        expect(await ran(name)).toEqual([]);
      }
    }, 30_000);
  }

  it('runs a change once when one batch holds it twice (a broker restart handed it out again)', async () => {
    const [ten, eleven] = [change(10), change(11)];
    await runner.deliverBatch(await triggerNamed('plain'), [delivery(ten), delivery(eleven), delivery(ten), delivery(eleven), delivery(ten)]);
    expect((await ran('plain')).sort()).toEqual(['10', '11']);
    // Handed over again later, by this replica or another: the claims keep it from running again.
    await runner.deliverBatch(await triggerNamed('plain'), [delivery(eleven), delivery(ten)]);
    expect((await ran('plain')).sort()).toEqual(['10', '11']);
  });
});
