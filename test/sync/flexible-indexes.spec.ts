import { type DataSourceClient, observeSelects, type ObservedSelect } from '@tessera/datastore';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdminSession, canonicalJson } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';
import { FlexibleTestClient } from './flexible-test-client';
import { syncUrl } from './sync-test-client';

// Flexible sync's queryable fields are indexed on the synced collections when the app deploys (as App
// Services indexed them), and a selective session's bootstrap reads through such an index: it examines about
// as many documents as it sends, not the whole collection. Deployed through the admin API's push, as a user does.

const CLUSTER = 'FlexIndexCluster';
const string = { bsonType: 'string' };

describe('flexible sync indexes on queryable fields', () => {
  const password = 'flexible-indexes-admin';
  let host: TestHost;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  let cluster: DataSourceClient;

  const tasks = () => cluster.db('app').collection('Task');
  const notes = () => cluster.db('app').collection('Note');
  const indexKeys = async (collection: ReturnType<typeof tasks>) => Object.fromEntries((await collection.listIndexes().catch(() => [])).map((index) => [index.name, index.key]));

  const pushSync = async (sync: Record<string, unknown>) => {
    const files = await admin.pull(appId);
    files.set('auth_providers/anon-user.json', canonicalJson({ name: 'anon-user', type: 'anon-user', disabled: false }));
    files.set('services/mongodb-atlas/config.json', canonicalJson({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: CLUSTER } }));
    const role = { name: 'all', apply_when: {}, document_filters: { read: { owner_id: { $ne: 'ghost' } }, write: { owner_id: { $ne: 'ghost' } } }, read: true, write: true, insert: true, delete: true, search: true };
    files.set('services/mongodb-atlas/rules/app.Task.json', canonicalJson({ database: 'app', collection: 'Task', roles: [role], filters: [], schema: { title: 'Task', bsonType: 'object', properties: { _id: string, owner_id: string, status: string, name: string } } }));
    // Note has no `status`: no index is made on a field its schema does not have.
    files.set('services/mongodb-atlas/rules/app.Note.json', canonicalJson({ database: 'app', collection: 'Note', roles: [{ ...role, document_filters: { read: true, write: true } }], filters: [], schema: { title: 'Note', bsonType: 'object', properties: { _id: string, owner_id: string, text: string } } }));
    files.set('sync/config.json', canonicalJson({ type: 'flexible', state: 'enabled', service_name: 'mongodb-atlas', database_name: 'app', development_mode_enabled: false, ...sync }));
    const pushed = await admin.push(appId, files);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
  };

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    admin = await AdminSession.login(host, 'admin', password);
    const created = await admin.createApp('flexible-indexes');
    appId = created._id;
    clientAppId = created.client_app_id;
    cluster = host.dataSources.forCluster(CLUSTER);
    // An index of owner_id's key made by hand under another name: sync's own is not made beside it.
    await notes().createIndex({ owner_id: 1 }, { name: 'by_owner' });
    await tasks().insertMany(Array.from({ length: 3_000 }, (_, i) => ({ _id: `t${String(i).padStart(5, '0')}`, owner_id: i % 1_000 === 8 ? 'ghost' : `u${i % 50}`, status: i % 1_000 === 7 ? 'rare' : i % 1_000 === 8 ? 'hidden' : 'common', name: `task ${i}` })));
  }, 60_000);

  afterEach(() => observeSelects(undefined));

  afterAll(async () => {
    await host?.close();
  });

  it('creates an ascending index per queryable field of each synced collection at deploy', async () => {
    await pushSync({ queryable_fields_names: ['owner_id', 'status'], collection_queryable_fields_names: { Note: ['text'] } });
    expect(await indexKeys(tasks())).toEqual({ _id_: { _id: 1 }, owner_id_1: { owner_id: 1 }, status_1: { status: 1 } });
    expect(await indexKeys(notes())).toEqual({ _id_: { _id: 1 }, by_owner: { owner_id: 1 }, text_1: { text: 1 } });
  });

  it('bootstraps a selective session through the index: documents examined are the documents sent', async () => {
    const seen: ObservedSelect[] = [];
    observeSelects((observed) => {
      if (observed.namespace === 'app.Task') seen.push(observed);
    });
    const login = await host.anonymousLogin(clientAppId);
    const client = await FlexibleTestClient.open(syncUrl(host.url, clientAppId, login.accessToken));
    try {
      await client.openSession(1, 1, { Task: 'status == "rare" OR status == "hidden"' });
      // The role's read filter keeps the hidden ones (the ghost's) out; three of 3,000 are rare.
      expect(client.ids('Task')).toEqual(['t00007', 't01007', 't02007']);
      const examined = seen.reduce((sum, observed) => sum + observed.docsExamined, 0);
      expect(seen.map((observed) => observed.plan)).toEqual([expect.stringMatching(/status_1/)]);
      // The rare and the hidden ones (the index serves the query; the role's filter is checked on each).
      expect(examined).toBe(6);

      // A query the indexes serve by owner: 60 of 3,000, read once, not page by page.
      seen.length = 0;
      client.send({ type: 'query', sessionIdent: 1, queryVersion: 2, queries: { Task: 'owner_id == "u7"' } });
      await client.bootstrap();
      expect(client.ids('Task')).toHaveLength(60);
      expect(seen.reduce((sum, observed) => sum + observed.docsExamined, 0)).toBeLessThanOrEqual(60);
    } finally {
      client.close();
    }
  });

  it('drops the index of a field that stops being queryable, refuses a bad field, drops all when sync is disabled, never one made by hand', async () => {
    await pushSync({ queryable_fields_names: ['owner_id'], indexed_queryable_fields_names: ['owner_id'] });
    expect(await indexKeys(tasks())).toEqual({ _id_: { _id: 1 }, owner_id_1: { owner_id: 1 } });
    expect(await indexKeys(notes())).toEqual({ _id_: { _id: 1 }, by_owner: { owner_id: 1 } });
    // An operator as a queryable field is a configuration error: nothing deployed, no index tried.
    const files = await admin.pull(appId);
    files.set('sync/config.json', canonicalJson({ type: 'flexible', state: 'enabled', service_name: 'mongodb-atlas', database_name: 'app', queryable_fields_names: ['owner_id', '$where'] }));
    expect((await admin.push(appId, files)).status).toBe(400);
    expect(await indexKeys(tasks())).toEqual({ _id_: { _id: 1 }, owner_id_1: { owner_id: 1 } });
    await pushSync({ state: 'disabled', queryable_fields_names: ['owner_id'] });
    expect(await indexKeys(tasks())).toEqual({ _id_: { _id: 1 } });
    expect(await indexKeys(notes())).toEqual({ _id_: { _id: 1 }, by_owner: { owner_id: 1 } });
  });
});
