import { findNatsServer, eventually, natsSkipReason } from '@tessera/testing';
import { MongoClient } from 'mongodb';
import { AdminSession } from '../admin-api/admin-session';
import { adminPassword, anonymousLogin, Cluster, distributedApp } from './cluster';

// Counts its runs per user, so a run that is lost or happens twice shows.
const countCreate = `exports = async function (authEvent) {
  await context.services.get('mongodb-atlas').db('audit').collection('created').updateOne({ _id: authEvent.user.id }, { $inc: { runs: 1 } }, { upsert: true });
};`;

function authApp(name: string): Map<string, string> {
  const files = distributedApp(name);
  files.set('functions/countCreate/config.json', JSON.stringify({ name: 'countCreate', private: true }));
  files.set('functions/countCreate/source.js', countCreate);
  files.set('triggers/onCreate.json', JSON.stringify({ name: 'onCreate', type: 'AUTHENTICATION', function_name: 'countCreate', disabled: false, config: { operation_type: 'CREATE', providers: ['anon-user'] } }));
  return files;
}

// Authentication events across processes over a real nats-server: the gateway records each in the outbox and
// publishes it on the JetStream stream; a user created while no function runtime runs gets its CREATE trigger
// run once a runtime is back, once. Skips without nats-server (natsSkipReason).
describe.skipIf(!findNatsServer())(`durable authentication events across processes${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let cluster: Cluster;
  let clientAppId: string;
  let mongo: MongoClient;

  const runsOf = async (userId: string): Promise<number | undefined> => (await mongo.db('audit').collection<{ _id: string; runs: number }>('created').findOne({ _id: userId }))?.runs;

  beforeAll(async () => {
    cluster = await Cluster.start({ runtimes: 1 });
    const admin = await AdminSession.login(cluster.one('admin-api'), 'admin', adminPassword);
    let appId: string;
    ({ _id: appId, client_app_id: clientAppId } = await admin.createApp('durable-auth'));
    expect((await admin.push(appId, authApp('durable-auth'))).status).toBe(204);
    mongo = await MongoClient.connect(`${cluster.datastoreUri}&appName=DistributedCluster`);
  }, 180_000);

  afterAll(async () => {
    await mongo?.close();
    await cluster?.stop();
  });

  it('runs the CREATE trigger of a user created while no runtime runs once a runtime is back, once', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const live = await anonymousLogin(gateway, clientAppId);
    await eventually(async () => expect(await runsOf(live.user_id)).toBe(1), { timeoutMs: 30_000 });

    await cluster.stopService(cluster.one('function-runtime'));
    const whileDown = [await anonymousLogin(gateway, clientAppId), await anonymousLogin(gateway, clientAppId)];
    for (const user of whileDown) expect(await runsOf(user.user_id)).toBeUndefined();

    await cluster.startService('function-runtime');
    await eventually(async () => {
      for (const user of whileDown) expect(await runsOf(user.user_id)).toBe(1);
    }, { timeoutMs: 60_000, intervalMs: 250 });
    // Nothing ran twice: the live user's run stays one after the runtime replayed the stream.
    expect(await runsOf(live.user_id)).toBe(1);
  }, 120_000);
});
