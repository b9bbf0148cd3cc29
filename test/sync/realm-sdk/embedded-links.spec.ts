import { type AppConfig } from '@tessera/app-config';
import { eventually } from '@tessera/testing';
import { ObjectId } from 'bson';
import { startTestHost, type TestHost } from '../../support/test-host';
import { anonymousDevices, type RealmDevice, realmSdkSkipReason } from './realm-client';

// Links inside embedded objects (a single one, a list of them, a dictionary of them) in development mode: the
// schema the server writes from the SDK's types keys their relationships by path (`visit.by`,
// `visits.[].by`, `byRoom.[].by`, as App Services did), so it reads back as the SDK declared it and a second
// device opens; the links sync between devices and are stored as the target's _id.

const CLUSTER = 'embedded-links-cluster';
const everyone = { name: 'everyone', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true };

function linksApp(sync: 'partition' | 'flexible') {
  return (app: AppConfig): void => {
    app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
    app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: CLUSTER } }, collectionRules: [], defaultRule: { roles: [everyone] }, rules: [], webhooks: [] });
    app.sync =
      sync === 'partition'
        ? { type: 'partition', state: 'enabled', development_mode_enabled: true, service_name: 'mongodb-atlas', database_name: 'linked', partition: { key: '_partition', type: 'string', permissions: { read: true, write: true } } }
        : { type: 'flexible', state: 'enabled', development_mode_enabled: true, service_name: 'mongodb-atlas', database_name: 'linked', queryable_fields_names: ['group'] };
  };
}

function schemaFor(sync: 'partition' | 'flexible') {
  const scope = sync === 'partition' ? { _partition: 'string?' } : { group: 'string?' };
  return [
    { name: 'Person', primaryKey: '_id', properties: { _id: 'string', ...scope, name: 'string' } },
    { name: 'Visit', embedded: true, properties: { by: 'Person?', note: 'string' } },
    { name: 'House', primaryKey: '_id', properties: { _id: 'objectId', ...scope, visit: 'Visit?', visits: 'Visit[]', byRoom: 'Visit?{}' } },
  ];
}

for (const sync of ['partition', 'flexible'] as const) {
  describe.skipIf(realmSdkSkipReason !== undefined)(`links inside embedded objects over ${sync} sync with the real Realm JS SDK${realmSdkSkipReason ? ` (skipped: ${realmSdkSkipReason})` : ''}`, () => {
    let host: TestHost;
    let clientAppId = '';
    const scope = sync === 'partition' ? { _partition: 'homes' } : { group: 'homes' };
    const schema = schemaFor(sync);

    beforeAll(async () => {
      host = await startTestHost();
      clientAppId = (await host.createApp(`embedded-links-${sync}`, linksApp(sync))).clientAppId;
    }, 60_000);

    const devices = anonymousDevices(() => ({ url: host.url, clientAppId }), {
      schema,
      ...(sync === 'partition'
        ? { partition: 'homes' }
        : {
            subscriptions: [
              { name: 'houses', type: 'House', query: 'group == "homes"' },
              { name: 'people', type: 'Person', query: 'group == "homes"' },
            ],
          }),
    });
    const openDevice = (): Promise<RealmDevice> => devices.open();

    afterAll(async () => {
      await devices.stopAll();
      await host?.close();
    });

    it('writes their relationships by path, opens a second device, and syncs and stores the links', async () => {
      const a = await openDevice();
      await a.put('Person', { _id: 'ada', ...scope, name: 'Ada' });
      await a.put('Person', { _id: 'grace', ...scope, name: 'Grace' });
      const id = new ObjectId('65b0c0d0e0f0a0b0c0d0e0f1');
      const link = (person: string) => ({ __link: ['Person', person] });
      await a.put('House', {
        _id: id,
        ...scope,
        visit: { by: link('ada'), note: 'front door' },
        visits: [
          { by: link('grace'), note: 'monday' },
          { by: null, note: 'tuesday' },
        ],
        byRoom: { kitchen: { by: link('ada'), note: 'tea' } },
      });
      await a.upload();

      const b = await openDevice();
      await b.waitForCount('House', 1);
      expect(await b.objects('House')).toEqual(await a.objects('House'));

      const stored = await eventually(async () => {
        const doc = await host.dataSources.forCluster(CLUSTER).db('linked').collection('House').findOne({ _id: id });
        expect(doc).not.toBeNull();
        return doc as Record<string, unknown>;
      });
      expect(stored['visit']).toEqual({ by: 'ada', note: 'front door' });
      expect((stored['visits'] as unknown[])[0]).toEqual({ by: 'grace', note: 'monday' });
      expect(((stored['visits'] as Array<Record<string, unknown>>)[1]?.['by']) ?? null).toBeNull();
      expect(stored['byRoom']).toEqual({ kitchen: { by: 'ada', note: 'tea' } });
    });
  });
}
