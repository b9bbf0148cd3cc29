import { DataSources } from '@tessera/platform';
import { type Instruction } from '@tessera/sync-protocol';
import { eventually } from '@tessera/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession } from '../admin-api/admin-session';
import { FlexibleTestClient } from './flexible-test-client';
import { createConfiguredApp, startAdminSyncHost } from './sync-admin-app';
import { type SyncHost } from './sync-host';
import { syncUrl } from './sync-test-client';

// Development mode for flexible sync (spec 2.6): a type a client declares in its changesets becomes a
// collection of database_name with a schema in the app's configuration (a deployment, as App Services made
// one), visible through the admin API, and still synced after the server restarts. The session that
// declared it is not restarted by that deployment.

const password = 'flexible-dev-mode-password';
const CLUSTER = 'flx-dev-cluster';

const note = (id: string): { type: 'ObjectId'; value: string } => ({ type: 'ObjectId', value: id });

/** The schema instructions of `Note { _id: objectId, title: string?, tags: list<string> }`. */
function noteSchema(): Instruction[] {
  return [
    { type: 'AddTable', table: 'Note', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'ObjectId', pkNullable: false } },
    { type: 'AddColumn', table: 'Note', field: 'title', valueType: 'String', nullable: true, collectionType: 'Single', keyType: 'Null' },
    { type: 'AddColumn', table: 'Note', field: 'tags', valueType: 'String', nullable: false, collectionType: 'List', keyType: 'Null' },
  ];
}

describe('flexible sync development mode: schemas from clients persist', () => {
  let host: SyncHost;
  let admin: AdminSession;

  beforeAll(async () => {
    ({ host, admin } = await startAdminSyncHost(password));
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('deploys a declared type as a collection schema, keeps the session, and syncs the type after a restart', async () => {
    const { appId, clientAppId } = await createConfiguredApp(admin, 'flx-dev', (config) => {
      config.authProviders.push({ name: 'anon-user', type: 'anon-user' });
      config.services.push({
        config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: CLUSTER } },
        collectionRules: [],
        defaultRule: { roles: [{ name: 'everyone', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true }] },
        rules: [],
        webhooks: [],
      });
      config.sync = { type: 'flexible', state: 'enabled', service_name: 'mongodb-atlas', database_name: 'devdb', development_mode_enabled: true, queryable_fields_names: ['title'] };
    });

    const { access } = await host.login(clientAppId);
    const client = await FlexibleTestClient.open(syncUrl(host.url, clientAppId, access));
    await client.openSession(1, 0, {});
    // The client's first changeset declares its schema; then it subscribes to the new type and writes.
    client.upload(1, noteSchema());
    expect(await client.next()).toMatchObject({ type: 'download' });
    client.send({ type: 'query', sessionIdent: 1, queryVersion: 1, queries: { Note: 'TRUEPREDICATE' } });
    await client.bootstrap();
    const id = '65a000000000000000000001';
    client.upload(1, [
      { type: 'CreateObject', table: 'Note', object: note(id) },
      { type: 'Update', table: 'Note', object: note(id), field: 'title', path: [], value: { type: 'String', value: 'first note' }, isDefault: false, priorSize: 0 },
    ]);
    expect(await client.next()).toMatchObject({ type: 'download', uploadClientVersion: 3 });
    const notes = host.nest.get(DataSources).forCluster(CLUSTER).db('devdb').collection('Note');
    expect(await notes.findOne({ title: 'first note' })).not.toBeNull();

    // The schema is in the app's configuration, as the admin API exports it.
    await eventually(async () => {
      const files = await admin.pull(appId);
      // The rule file of the collection (this export layout keeps the schema in it).
      const path = [...files.keys()].find((name) => name.endsWith('rules/devdb.Note.json'));
      expect(path, [...files.keys()].join(', ')).toBeDefined();
      expect((JSON.parse(files.get(path!)!) as { schema?: unknown }).schema).toMatchObject({ title: 'Note', properties: { _id: { bsonType: 'objectId' }, title: { bsonType: 'string' }, tags: { bsonType: 'array', items: { bsonType: 'string' } } } });
    });
    // That deployment changed no rule: the session goes on (no restart, no error).
    client.send({ type: 'mark', sessionIdent: 1, requestIdent: 2 });
    expect(await client.next()).toEqual({ type: 'mark', sessionIdent: 1, requestIdent: 2 });
    expect(client.received.filter((message) => message.type === 'json_error' || message.type === 'error')).toEqual([]);
    client.close();

    // After a restart the type is known from the configuration: a new client subscribes and gets the note.
    await host.restart();
    const again = await host.login(clientAppId);
    const fresh = await FlexibleTestClient.open(syncUrl(host.url, clientAppId, again.access));
    await fresh.openSession(1, 1, { Note: 'title == "first note"' });
    expect(fresh.ids('Note')).toEqual([id]);
    fresh.close();
  }, 90_000);
});
