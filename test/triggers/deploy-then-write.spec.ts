import { ChangePublisher } from '@tessera/function-runtime';
import { DeploymentFollowers } from '@tessera/platform';
import { eventually } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';

const PASSWORD = 'deploy-then-write-password';

// A client that deploys an app with a database trigger and writes at once (a script, a CI job) must see the
// trigger fire: the admin API answers a deploy once this process's change publisher watches the app's new
// data source (DeploymentFollowers), where the deployment event alone reaches it some time after.
describe('a write made as soon as a deploy is answered', () => {
  let host: TestHost;
  let admin: AdminSession;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: PASSWORD } });
    admin = await AdminSession.login(host, 'admin', PASSWORD);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('is watched when the push answers, and fires the trigger the push added', async () => {
    const app = await admin.createApp('follow', { data_source: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'FollowCluster' } } });
    const files = await admin.pull(app._id);
    files.set('functions/record/config.json', JSON.stringify({ name: 'record', private: true }));
    files.set('functions/record/source.js', "exports = async (event) => { await context.services.get('mongodb-atlas').db('shop').collection('seen').insertOne({ item: event.documentKey._id }); };\n");
    files.set('triggers/onItem.json', JSON.stringify({ name: 'onItem', type: 'DATABASE', function_name: 'record', disabled: false, config: { service_name: 'mongodb-atlas', database: 'shop', collection: 'items', operation_types: ['INSERT'] } }));
    const pushed = await admin.push(app._id, files);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    // Answered: the feed of the app's data source is followed already, not some time after.
    expect(host.nest.get(ChangePublisher, { strict: false }).following).toContain(`${app._id}/mongodb-atlas`);
    const cluster = host.dataSources.forCluster('FollowCluster').db('shop');
    const { insertedId } = await cluster.collection('items').insertOne({ name: 'written at once' });
    await eventually(async () => expect(await cluster.collection('seen').findOne({ item: insertedId })).not.toBeNull(), { timeoutMs: 20_000 });
  }, 60_000);

  it('has the change publisher follow deployments in this process', async () => {
    const publisher = host.nest.get(ChangePublisher, { strict: false });
    const refreshed: string[] = [];
    const refresh = publisher.refresh.bind(publisher);
    publisher.refresh = async (appId: string) => {
      refreshed.push(appId);
      await refresh(appId);
    };
    try {
      await host.nest.get(DeploymentFollowers, { strict: false }).deployed('some-app-id');
    } finally {
      publisher.refresh = refresh;
    }
    expect(refreshed).toEqual(['some-app-id']);
  });
});
