import { type AppConfig } from '@tessera/app-config';
import { eventually } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';

const password = 'unordered-batch-password';

// Fails on n = 7 while ctl.switch says so; otherwise counts its runs per document.
const failOnSeven = `exports = async function (changeEvent) {
  const db = context.services.get('mongodb-atlas').db('shop');
  const n = changeEvent.fullDocument.n;
  const control = await db.collection('ctl').findOne({ _id: 'switch' });
  if (n === 7 && control && control.fail) throw new Error('seven is broken');
  await db.collection('seen').updateOne({ _id: n }, { $inc: { runs: 1 } }, { upsert: true });
};`;

function batchApp(app: AppConfig): void {
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'BatchCluster' } }, collectionRules: [], rules: [], webhooks: [] });
  app.functions.push({ config: { name: 'failOnSeven', private: true }, source: failOnSeven });
  app.triggers.push({ name: 'anyOrder', type: 'DATABASE', function_name: 'failOnSeven', config: { service_name: 'mongodb-atlas', database: 'shop', collection: 'jobs', operation_types: ['INSERT'], full_document: true, unordered: true } });
}

// An unordered trigger runs a batch of changes concurrently; when one keeps failing the trigger is suspended
// with that change and those no run had started kept, and the resume runs exactly those: nothing lost,
// nothing run twice.
describe('an unordered trigger suspended in the middle of a batch (standalone)', () => {
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  const shop = () => host.dataSources.forCluster('BatchCluster').db('shop');
  const runs = async (): Promise<Map<number, number>> => new Map((await shop().collection('seen').find({}).toArray()).map((doc) => [doc['_id'] as number, doc['runs'] as number]));

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    admin = await AdminSession.login(host, 'admin', password);
    ({ appId } = await host.createApp('unordered-batch', batchApp, { groupId: admin.groupId }));
  });

  afterAll(async () => {
    await host?.close();
  });

  it('keeps the failed change and the ones not started, and the resume runs each of them once', async () => {
    await shop().collection('ctl').insertOne({ _id: 'switch', fail: true });
    const total = 200;
    await shop()
      .collection('jobs')
      .insertMany(Array.from({ length: total }, (_, index) => ({ n: index + 1 })));
    const triggers = async () => (await admin.request<Array<{ _id: string; name: string; error?: string }>>('GET', admin.app(appId, '/triggers'))).body;
    const suspended = await eventually(async () => {
      const found = (await triggers()).find((trigger) => trigger.name === 'anyOrder')!;
      expect(found.error).toContain('seven is broken');
      return found;
    }, { timeoutMs: 30_000 });
    // Every change delivered before the suspension ran once or waits; seven never ran.
    await eventually(async () => {
      const seen = await runs();
      expect(seen.has(7)).toBe(false);
      expect([...seen.values()].every((count) => count === 1)).toBe(true);
    });

    await shop().collection('ctl').updateOne({ _id: 'switch' }, { $set: { fail: false } });
    expect((await admin.request('PUT', admin.app(appId, `/triggers/${suspended._id}/resume`), {})).status).toBe(204);
    await eventually(async () => {
      const seen = await runs();
      expect(seen.size).toBe(total);
      expect([...seen.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    }, { timeoutMs: 30_000 });
  }, 90_000);
});
