import { emptyApp, type AppConfig } from '@tessera/app-config';
import { embeddedClusterDir, openEmbeddedClient } from '@tessera/datastore';
import { LogStore } from '@tessera/platform';
import { eventually, makeTempDir } from '@tessera/testing';
import { ObjectId } from 'bson';
import * as Realm from 'realm-web';
// The real process host (every service in one process, in-process transport and durable stream).
import { startTestHost, type TestHost } from '../support/test-host';

// A trigger function that records what it received in a marker document, keyed by the changed document.
const recordChange = `exports = async function (changeEvent) {
  const markers = context.services.get('mongodb-atlas').db('shop').collection('markers');
  const id = changeEvent.documentKey._id;
  await markers.updateOne({ _id: id }, {
    $inc: { fired: 1 },
    $push: { ops: changeEvent.operationType },
    $set: {
      summary: changeEvent.fullDocument ? changeEvent.fullDocument.summary : null,
      hasBefore: changeEvent.fullDocumentBeforeChange !== undefined,
      coll: changeEvent.ns.coll,
      tokenIsString: typeof changeEvent._id._data === 'string',
      idIsObjectId: id instanceof BSON.ObjectId,
      runAs: context.user.type,
    },
  }, { upsert: true });
  console.log('fired for ' + id.toString());
};`;

const onDone = `exports = async function (changeEvent) {
  await context.services.get('mongodb-atlas').db('shop').collection('done').insertOne({ item: changeEvent.documentKey._id, done: changeEvent.fullDocument.done, before: changeEvent.fullDocumentBeforeChange });
};`;

function shopApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'ShopCluster' } },
    defaultRule: { roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] },
    collectionRules: [],
    rules: [],
    webhooks: [],
  });
  app.functions.push({ config: { name: 'recordChange', private: true }, source: recordChange }, { config: { name: 'onDone', private: true }, source: onDone });
  app.triggers.push(
    { name: 'itemsChanged', type: 'DATABASE', function_name: 'recordChange', config: { service_name: 'mongodb-atlas', database: 'shop', collection: 'items', operation_types: ['INSERT', 'DELETE'], full_document: false }, disabled: false },
    // App Services' exported shape: the function under event_processors; fires on updates that set done.
    {
      name: 'itemDone',
      type: 'DATABASE',
      event_processors: { FUNCTION: { config: { function_name: 'onDone' } } },
      config: { service_name: 'mongodb-atlas', database: 'shop', collection: 'items', operation_types: ['UPDATE'], full_document: true, full_document_before_change: true, match: { 'updateDescription.updatedFields.done': true } },
      disabled: false,
    },
    { name: 'switchedOff', type: 'DATABASE', function_name: 'onDone', config: { service_name: 'mongodb-atlas', database: 'shop', collection: 'items', operation_types: ['INSERT'] }, disabled: true },
  );
}

// Database triggers in standalone mode: a client write through the real HTTP server and realm-web becomes a
// change event on the in-process durable stream, and the trigger's function runs in the sandbox.
describe('database triggers (standalone)', () => {
  const dir = makeTempDir('tessera-triggers-');
  let host: TestHost;
  let appId: string;
  let clientAppId: string;

  const start = (): Promise<TestHost> => startTestHost({ dataDir: dir.path });
  const collection = async (name: string) => {
    const user = await new Realm.App({ id: clientAppId, baseUrl: host.url }).logIn(Realm.Credentials.anonymous(false));
    return user.mongoClient('mongodb-atlas').db('shop').collection(name);
  };

  beforeAll(async () => {
    host = await start();
    ({ appId, clientAppId } = await host.createApp('shop', shopApp));
  });

  afterAll(async () => {
    await host?.close();
    dir.remove();
  });

  it('fires a database trigger for an insert made through the client API, as system, with the change event', async () => {
    const items = await collection('items');
    const { insertedId } = await items.insertOne({ summary: 'first', done: false });
    const markers = await collection('markers');
    const marker = await eventually(async () => {
      const found = await markers.findOne({ _id: insertedId });
      expect(found).not.toBeNull();
      return found!;
    });
    expect(marker).toMatchObject({ fired: 1, ops: ['insert'], summary: 'first', hasBefore: false, coll: 'items', tokenIsString: true, idIsObjectId: true, runAs: 'system' });
    const logs = await eventually(async () => {
      const entries = await host.nest.get(LogStore).list(appId, { types: ['DB_TRIGGER'] });
      expect(entries.length).toBeGreaterThan(0);
      return entries;
    });
    expect(logs[0]).toMatchObject({ type: 'DB_TRIGGER', trigger_name: 'itemsChanged', function_name: 'recordChange', messages: [`fired for ${String(insertedId)}`], run_as: 'system' });
    // The disabled trigger never ran.
    expect(await (await collection('done')).count()).toBe(0);
  });

  it('applies operation types, match, full document and the pre-image of an update', async () => {
    const items = await collection('items');
    const { insertedId } = await items.insertOne({ summary: 'second', done: false });
    await items.updateOne({ _id: insertedId }, { $set: { summary: 'renamed' } }); // no trigger: done not set
    await items.updateOne({ _id: insertedId }, { $set: { done: true } });
    const done = await collection('done');
    const fired = await eventually(async () => {
      const found = await done.find({ item: insertedId });
      expect(found).toHaveLength(1);
      return found[0];
    });
    expect(fired).toMatchObject({ done: true, before: { _id: insertedId, summary: 'renamed', done: false } });
    await items.deleteOne({ _id: insertedId });
    const markers = await collection('markers');
    await eventually(async () => expect(await markers.findOne({ _id: insertedId })).toMatchObject({ fired: 2, ops: ['insert', 'delete'], summary: null }));
    // Updates are not among itemsChanged's operation types, and the match kept the rename out of itemDone.
    expect(await done.count({ item: insertedId })).toBe(1);
  });

  it('resumes after a restart without a gap or a repeat: changes made while it was down fire once', async () => {
    const items = await collection('items');
    const before = await items.insertOne({ summary: 'before restart' });
    const markers = await collection('markers');
    await eventually(async () => expect(await markers.findOne({ _id: before.insertedId })).not.toBeNull());
    // Stopped while changes are on their way to the triggers: each fires once, before or after the restart.
    const inFlight = await items.insertMany([{ summary: 'in flight 1' }, { summary: 'in flight 2' }, { summary: 'in flight 3' }]);
    await host.close();

    // Another writer changes the cluster while the host is down.
    const offline = openEmbeddedClient(embeddedClusterDir(dir.path, 'ShopCluster'));
    const whileDown = [new ObjectId(), new ObjectId(), new ObjectId()];
    await offline.db('shop').collection('items').insertMany(whileDown.map((_id, n) => ({ _id, summary: `offline ${n}` })));
    await offline.close();

    host = await start();
    const after = await (await collection('items')).insertOne({ summary: 'after restart' });
    const fresh = await collection('markers');
    for (const id of [...inFlight.insertedIds, ...whileDown, after.insertedId]) {
      await eventually(async () => expect(await fresh.findOne({ _id: id })).toMatchObject({ fired: 1, ops: ['insert'] }), { timeoutMs: 20_000 });
    }
    // Nothing handled before the restart ran again.
    expect(await fresh.findOne({ _id: before.insertedId })).toMatchObject({ fired: 1 });
    const all = await fresh.find({});
    expect(all.every((marker) => marker['fired'] === (marker['ops'] as string[]).length)).toBe(true);
  });

  it('follows a service relinked to another cluster: its changes fire the triggers once', async () => {
    const config = emptyApp('shop');
    shopApp(config);
    const service = config.services[0].config;
    service.config = { ...service.config, clusterName: 'OtherCluster' };
    await host.redeploy(appId, config);
    const items = await collection('items');
    // The new cluster's feed is followed once the deployment is reloaded.
    const first = await eventually(async () => {
      const { insertedId } = await items.insertOne({ summary: 'on the other cluster' });
      await eventually(async () => expect(await (await collection('markers')).findOne({ _id: insertedId })).not.toBeNull(), { timeoutMs: 2_000 });
      return insertedId;
    }, { timeoutMs: 20_000 });
    const second = await items.insertOne({ summary: 'second on the other cluster' });
    await eventually(async () => expect(await (await collection('markers')).findOne({ _id: second.insertedId })).toMatchObject({ fired: 1, ops: ['insert'] }));
    expect(await (await collection('markers')).findOne({ _id: first })).toMatchObject({ fired: 1 });
  });
});
