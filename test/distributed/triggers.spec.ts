import { findNatsServer, eventually, natsSkipReason } from '@tessera/testing';
import { MongoClient } from 'mongodb';
import { AdminSession } from '../admin-api/admin-session';
import { adminPassword, anonymousLogin, Cluster, distributedApp, postJson } from './cluster';

// The trigger's function counts, per changed note, how often it ran and for which operations.
const countChange = `exports = async function (changeEvent) {
  await context.services.get('mongodb-atlas').db('shop').collection('fired').updateOne(
    { _id: changeEvent.documentKey._id },
    { $inc: { runs: 1 }, $push: { ops: changeEvent.operationType } },
    { upsert: true },
  );
};`;

function triggerApp(name: string): Map<string, string> {
  const files = distributedApp(name);
  files.set('functions/countChange/config.json', JSON.stringify({ name: 'countChange', private: true }));
  files.set('functions/countChange/source.js', countChange);
  files.set(
    'triggers/countNotes.json',
    JSON.stringify({ name: 'countNotes', type: 'DATABASE', function_name: 'countChange', disabled: false, config: { service_name: 'mongodb-atlas', database: 'shop', collection: 'notes', operation_types: ['INSERT', 'UPDATE'], full_document: false } }),
  );
  return files;
}

const handledLines = (output: string): number => output.split('\n').filter((line) => line.includes('handled datastore.document.changed')).length;

// Database triggers across processes: clients write through the gateway into the datastore service, both
// function-runtime replicas publish the changes (the stream stores each once) and share the trigger consumer
// group; the NATS server restarts in the middle of the writes. Skips without nats-server (natsSkipReason).
describe.skipIf(!findNatsServer())(`database triggers across processes over NATS${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let cluster: Cluster;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  let mongo: MongoClient;

  beforeAll(async () => {
    // Runtimes log each event they handle (debug), so the test sees that both took a share.
    cluster = await Cluster.start({ runtimes: 2, serviceEnv: { 'function-runtime': { LOG_LEVEL: 'debug' } } });
    admin = await AdminSession.login(cluster.one('admin-api'), 'admin', adminPassword);
    ({ _id: appId, client_app_id: clientAppId } = await admin.createApp('triggers'));
    expect((await admin.push(appId, triggerApp('triggers'))).status).toBe(204);
    // The app's cluster as any MongoDB client sees it through the datastore service.
    mongo = await MongoClient.connect(`${cluster.datastoreUri}&appName=DistributedCluster`);
  }, 180_000);

  afterAll(async () => {
    await mongo?.close();
    await cluster?.stop();
  });

  it('fires a deploy\'s new trigger on a write made as soon as the deploy is answered', async () => {
    // A new app's data source: its feed opens in a runtime process, which hears of the deploy over NATS.
    const { _id: quickApp } = await admin.createApp('triggers-at-once');
    const files = distributedApp('triggers-at-once');
    files.set('functions/markQuick/config.json', JSON.stringify({ name: 'markQuick', private: true }));
    files.set('functions/markQuick/source.js', `exports = async function (changeEvent) { await context.services.get('mongodb-atlas').db('shop').collection('quick_fired').insertOne({ _id: changeEvent.documentKey._id }); };`);
    files.set('triggers/onQuick.json', JSON.stringify({ name: 'onQuick', type: 'DATABASE', function_name: 'markQuick', disabled: false, config: { service_name: 'mongodb-atlas', database: 'shop', collection: 'quick', operation_types: ['INSERT'] } }));
    expect((await admin.push(quickApp, files)).status).toBe(204);
    // Straight after the answer, through the datastore service (no login in between).
    await mongo.db('shop').collection<{ _id: string }>('quick').insertOne({ _id: 'first' });
    await eventually(async () => expect(await mongo.db('shop').collection<{ _id: string }>('quick_fired').countDocuments({ _id: 'first' })).toBe(1), { timeoutMs: 20_000, intervalMs: 250 });
  }, 60_000);

  it('handles every change exactly once while the NATS server restarts mid-stream, shared by two runtime replicas', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const user = await anonymousLogin(gateway, clientAppId);
    const data = (name: string, args: Record<string, unknown>) =>
      postJson<{ insertedId?: { $oid: string } }>(`${gateway}/api/client/v2.0/app/${clientAppId}/functions/call`, { service: 'mongodb-atlas', name, arguments: [{ database: 'shop', collection: 'notes', ...args }] }, { authorization: `Bearer ${user.access_token}` });
    const expected = new Map<string, string[]>();
    const total = 45;
    for (let n = 1; n <= total; n++) {
      const inserted = await data('insertOne', { document: { owner_id: user.user_id, text: `note ${n}` } });
      expect(inserted.status).toBe(200);
      const id = inserted.body.insertedId!.$oid;
      expected.set(id, ['insert']);
      if (n % 3 === 0) {
        expect((await data('updateOne', { query: { _id: { $oid: id } }, update: { $set: { text: `note ${n}, edited` } } })).status).toBe(200);
        expected.set(id, ['insert', 'update']);
      }
      // Writes go on while NATS is away (the gateway reaches the datastore directly); publishers catch up.
      if (n === 15) await cluster.nats.restart();
    }
    const fired = mongo.db('shop').collection<{ _id: unknown; runs: number; ops: string[] }>('fired');
    await eventually(async () => expect(await fired.countDocuments({})).toBe(expected.size), { timeoutMs: 60_000, intervalMs: 500 });
    // Settled: each runtime's durable consumer has nothing pending or in flight.
    await eventually(async () => {
      const runs = await fired.find({}).toArray();
      expect(runs.reduce((sum, run) => sum + run.runs, 0)).toBe([...expected.values()].flat().length);
    }, { timeoutMs: 30_000, intervalMs: 500 });
    for (const run of await fired.find({}).toArray()) {
      const id = String(run._id);
      // Per document key: every change once (two replicas may run one key's changes in either order).
      expect({ id, runs: run.runs, ops: [...run.ops].sort() }).toEqual({ id, runs: expected.get(id)?.length, ops: expected.get(id) });
    }
    // Each run is in the app's logs as the trigger's (recorded just after the run).
    await eventually(async () => {
      const logs = await admin.request<{ logs: Array<Record<string, unknown>> }>('GET', admin.app(appId, '/logs?type=DB_TRIGGER&limit=1000'));
      expect(logs.body.logs.filter((entry) => entry['trigger_name'] === 'countNotes' && entry['error'] === undefined)).toHaveLength([...expected.values()].flat().length);
    }, { timeoutMs: 10_000 });
    // Both replicas handled a share of the change events.
    const [first, second] = cluster.all('function-runtime');
    expect(handledLines(first.output())).toBeGreaterThan(0);
    expect(handledLines(second.output())).toBeGreaterThan(0);
  }, 150_000);
});
