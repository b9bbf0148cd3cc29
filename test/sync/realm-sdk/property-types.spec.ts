import { runInNewContext } from 'node:vm';
import { type AppConfig, generateDataModels } from '@tessera/app-config';
import { DeployedApps } from '@tessera/platform';
import { type DataSourceClient } from '@tessera/datastore';
import { eventually } from '@tessera/testing';
import { BSON, Binary, Decimal128, Double, Long, ObjectId, UUID } from 'bson';
import { startTestHost, type TestHost } from '../../support/test-host';
import { anonymousDevices, canonical, type RealmDevice, realmSdkSkipReason } from './realm-client';

// Every property type the Realm JS SDK 12.15.0 syncs, in both directions, on partition-based and on flexible
// sync: an object made on one device reaches another with equal values and lands in the collection with the
// BSON types App Services stored; a document written into the collection with those types reaches the devices.
// Both apps run in development mode, so the SDK's schema becomes the server's, as it did on App Services.

const CLUSTER = 'types-cluster';

const everyone = { name: 'everyone', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true };

function typesApp(sync: 'partition' | 'flexible') {
  return (app: AppConfig): void => {
    app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
    app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: CLUSTER } }, collectionRules: [], defaultRule: { roles: [everyone] }, rules: [], webhooks: [] });
    app.sync =
      sync === 'partition'
        ? { type: 'partition', state: 'enabled', development_mode_enabled: true, service_name: 'mongodb-atlas', database_name: 'partitioned', partition: { key: '_partition', type: 'string', permissions: { read: true, write: true } } }
        : { type: 'flexible', state: 'enabled', development_mode_enabled: true, service_name: 'mongodb-atlas', database_name: 'flexible', queryable_fields_names: ['group'] };
  };
}

/** The SDK schema: every property type on Thing, links to Owner (which links back), embedded Address. */
function schemaFor(sync: 'partition' | 'flexible') {
  const scope = sync === 'partition' ? { _partition: 'string?' } : { group: 'string?' };
  return [
    {
      name: 'Thing',
      primaryKey: '_id',
      properties: {
        _id: 'objectId',
        ...scope,
        bool: 'bool',
        int: 'int',
        float: 'float',
        double: 'double',
        string: 'string',
        data: 'data',
        date: 'date',
        decimal: 'decimal128',
        objectId: 'objectId',
        uuid: 'uuid',
        mixed: 'mixed',
        optBool: 'bool?',
        optInt: 'int?',
        optFloat: 'float?',
        optDouble: 'double?',
        optString: 'string?',
        optData: 'data?',
        optDate: 'date?',
        optDecimal: 'decimal128?',
        optObjectId: 'objectId?',
        optUuid: 'uuid?',
        intList: 'int[]',
        optStringList: 'string?[]',
        doubleList: 'double[]',
        dateList: 'date[]',
        uuidList: 'uuid[]',
        dataList: 'data[]',
        mixedList: 'mixed[]',
        intSet: 'int<>',
        stringSet: 'string<>',
        objectIdSet: 'objectId<>',
        decimalSet: 'decimal128<>',
        intDict: 'int{}',
        stringDict: 'string?{}',
        mixedDict: 'mixed{}',
        address: 'Address?',
        addresses: 'Address[]',
        addressDict: 'Address?{}',
        owner: 'Owner?',
        owners: 'Owner[]',
        ownerSet: 'Owner<>',
        ownerDict: 'Owner?{}',
      },
    },
    { name: 'Owner', primaryKey: '_id', properties: { _id: 'string', ...scope, name: 'string', things: { type: 'linkingObjects', objectType: 'Thing', property: 'owners' } } },
    { name: 'Address', embedded: true, properties: { street: 'string', zip: 'int?', tags: 'string[]' } },
  ];
}

const uuid = new UUID('6f1e8a5c-3b7d-4c2a-9e0f-1a2b3c4d5e6f');
const otherUuid = new UUID('0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9');
const date = new Date('2024-02-29T12:34:56.789Z');
const bytes = new Binary(Buffer.from([0, 1, 2, 254, 255]));

/** Each value a mixed property can hold: every scalar type, null, and (SDK 12) a nested list and dictionary. */
const mixedValues: Array<[string, unknown]> = [
  ['bool', true],
  ['int', Long.fromNumber(1_099_511_627_779)],
  ['double', new Double(2.5)],
  ['string', 'mixed text'],
  ['data', bytes],
  ['date', date],
  ['decimal', Decimal128.fromString('-0.000123')],
  ['objectId', new ObjectId('65a1b2c3d4e5f60718293a4b')],
  ['uuid', uuid],
  ['null', null],
  ['list', [1, 'two', [3, { four: 4 }], null]],
  ['dictionary', { a: 'x', b: 2, nested: { list: [true, 'y'], deeper: { z: 0.25 } } }],
];

/** The Thing with every property set; `mixed` varies between objects. */
function thing(id: ObjectId, scope: Record<string, unknown>, mixed: unknown, owners: string[]): Record<string, unknown> {
  return {
    _id: id,
    ...scope,
    bool: true,
    int: Long.fromNumber(1_099_511_627_776), // 2^40: needs 64 bits
    float: new Double(1.5),
    double: new Double(3.141592653589793),
    string: 'ünïcødé ✓',
    data: bytes,
    date,
    decimal: Decimal128.fromString('12345.6789'),
    objectId: new ObjectId('0123456789abcdef01234567'),
    uuid,
    mixed,
    optBool: false,
    optInt: null,
    optFloat: new Double(-0.5),
    optDouble: null,
    optString: null,
    optData: null,
    optDate: new Date(0),
    optDecimal: null,
    optObjectId: null,
    optUuid: otherUuid,
    intList: [Long.fromNumber(3), Long.fromNumber(-1), Long.fromNumber(3)],
    optStringList: ['a', null, 'c'],
    doubleList: [new Double(0.1), new Double(-2.75)],
    dateList: [date, new Date(86_400_000)],
    uuidList: [uuid, otherUuid],
    dataList: [bytes, new Binary(Buffer.from('text'))],
    mixedList: mixedValues.map(([, value]) => value),
    intSet: [Long.fromNumber(7), Long.fromNumber(8)],
    stringSet: ['x', 'y'],
    objectIdSet: [new ObjectId('65a1b2c3d4e5f60718293a4b')],
    decimalSet: [Decimal128.fromString('1.5')],
    intDict: { one: Long.fromNumber(1), minus: Long.fromNumber(-5) },
    stringDict: { hello: 'world', nothing: null },
    mixedDict: Object.fromEntries(mixedValues),
    address: { street: '1 Main St', zip: Long.fromNumber(12345), tags: ['home'] },
    addresses: [
      { street: 'a street', zip: null, tags: [] },
      { street: 'b street', zip: Long.fromNumber(2), tags: ['x', 'y'] },
    ],
    addressDict: { work: { street: 'office', zip: Long.fromNumber(99), tags: ['w'] } },
    owner: { __link: ['Owner', owners[0]] },
    owners: owners.map((owner) => ({ __link: ['Owner', owner] })),
    ownerSet: [{ __link: ['Owner', owners[0]] }],
    ownerDict: { main: { __link: ['Owner', owners[0]] } },
  };
}

/** What the device holds for `thing(...)`: sets in the SDK's order, links as written, backlinks computed. */
function held(value: Record<string, unknown>): Record<string, unknown> {
  const sortedSet = (items: unknown[]) => (canonical(items) as unknown[]).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  return {
    ...(canonical(value) as Record<string, unknown>),
    intSet: sortedSet(value['intSet'] as unknown[]),
    stringSet: sortedSet(value['stringSet'] as unknown[]),
    objectIdSet: sortedSet(value['objectIdSet'] as unknown[]),
    decimalSet: sortedSet(value['decimalSet'] as unknown[]),
    ownerSet: sortedSet(value['ownerSet'] as unknown[]),
  };
}

/** The BSON type of each value as a MongoDB client reads it (Int32, Long, Double ...), by field. */
function bsonTypesOf(value: Record<string, unknown>): unknown {
  const name = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(name);
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, name(x)]));
    return v !== null && typeof v === 'object' ? (v as { _bsontype?: string })._bsontype : typeof v;
  };
  return name(BSON.deserialize(BSON.serialize(value), { promoteValues: false, promoteLongs: false }));
}

/** Checks the BSON types App Services stored a device's Thing with. */
function expectStoredTypes(doc: Record<string, unknown>, id: ObjectId, owners: string[]): void {
  expect(doc['_id']).toBeInstanceOf(ObjectId);
  expect((doc['_id'] as ObjectId).equals(id)).toBe(true);
  expect(doc['bool']).toBe(true);
  // A Realm int is stored as a long, float and double as doubles, as App Services stored them.
  expect(Number(doc['int'])).toBe(1_099_511_627_776);
  expect(Number(doc['float'])).toBe(1.5);
  expect(bsonTypesOf({ int: doc['int'], float: doc['float'], double: doc['double'], intList: doc['intList'], intDict: doc['intDict'], zip: (doc['address'] as Record<string, unknown>)['zip'] })).toEqual({
    int: 'Long',
    float: 'Double',
    double: 'Double',
    intList: ['Long', 'Long', 'Long'],
    intDict: { one: 'Long', minus: 'Long' },
    zip: 'Long',
  });
  expect(doc['string']).toBe('ünïcødé ✓');
  expect(doc['data']).toBeInstanceOf(Binary);
  expect((doc['data'] as Binary).sub_type).toBe(0);
  expect(doc['date']).toEqual(date);
  expect(doc['decimal']).toBeInstanceOf(Decimal128);
  expect(String(doc['decimal'])).toBe('12345.6789');
  expect(doc['objectId']).toBeInstanceOf(ObjectId);
  expect(doc['uuid']).toBeInstanceOf(Binary);
  expect((doc['uuid'] as Binary).sub_type).toBe(4);
  expect(Buffer.from((doc['uuid'] as Binary).buffer).toString('hex')).toBe(uuid.toHexString(false));
  expect(doc['optInt'] ?? null).toBeNull();
  expect((doc['optUuid'] as Binary).sub_type).toBe(4);
  expect(Array.isArray(doc['intList'])).toBe(true);
  expect(canonical(doc['intList'])).toEqual([3, -1, 3]);
  expect(canonical(doc['optStringList'])).toEqual(['a', null, 'c']);
  expect(((canonical(doc['intSet']) as number[]) ?? []).sort()).toEqual([7, 8]);
  expect(canonical(doc['intDict'])).toEqual({ one: 1, minus: -5 });
  // Embedded objects are sub-documents; links hold the target's _id.
  expect(canonical(doc['address'])).toEqual({ street: '1 Main St', zip: 12345, tags: ['home'] });
  // realm-core records no instruction for a list left empty, so the empty `tags` may be absent.
  expect(canonical(doc['addresses'])).toEqual([
    { street: 'a street', zip: null, ...((doc['addresses'] as Array<Record<string, unknown>>)[0]?.['tags'] ? { tags: [] } : {}) },
    { street: 'b street', zip: 2, tags: ['x', 'y'] },
  ]);
  expect(canonical(doc['addressDict'])).toEqual({ work: { street: 'office', zip: 99, tags: ['w'] } });
  expect(doc['owner']).toBe(owners[0]);
  expect(doc['owners']).toEqual(owners);
  expect(doc['ownerDict']).toEqual({ main: owners[0] });
  // Mixed holds the BSON value itself; a nested list is an array and a nested dictionary a sub-document.
  const mixedDict = doc['mixedDict'] as Record<string, unknown>;
  expect((mixedDict['uuid'] as Binary).sub_type).toBe(4);
  expect(mixedDict['decimal']).toBeInstanceOf(Decimal128);
  expect(mixedDict['objectId']).toBeInstanceOf(ObjectId);
  expect(mixedDict['date']).toEqual(date);
  expect(canonical(mixedDict['list'])).toEqual([1, 'two', [3, { four: 4 }], null]);
  expect(canonical(mixedDict['dictionary'])).toEqual({ a: 'x', b: 2, nested: { list: [true, 'y'], deeper: { z: 0.25 } } });
}

for (const sync of ['partition', 'flexible'] as const) {
  describe.skipIf(realmSdkSkipReason !== undefined)(`every property type over ${sync} sync with the real Realm JS SDK${realmSdkSkipReason ? ` (skipped: ${realmSdkSkipReason})` : ''}`, () => {
    let host: TestHost;
    let clientAppId = '';
    let appId = '';
    let cluster: DataSourceClient;
    const database = sync === 'partition' ? 'partitioned' : 'flexible';
    const scope = sync === 'partition' ? { _partition: 'types' } : { group: 'types' };
    const schema = schemaFor(sync);

    beforeAll(async () => {
      host = await startTestHost();
      ({ clientAppId, appId } = await host.createApp(`types-${sync}`, typesApp(sync)));
      cluster = host.dataSources.forCluster(CLUSTER);
    }, 60_000);

    const devices = anonymousDevices(() => ({ url: host.url, clientAppId }), {
      schema,
      ...(sync === 'partition'
        ? { partition: 'types' }
        : {
            subscriptions: [
              { name: 'things', type: 'Thing', query: 'group == "types"' },
              { name: 'owners', type: 'Owner', query: 'group == "types"' },
            ],
          }),
    });
    const openDevice = (): Promise<RealmDevice> => devices.open();

    afterAll(async () => {
      await devices.stopAll();
      await host?.close();
    });
    const collection = (name: string) => cluster.db(database).collection(name);

    it('syncs an object with every property type from one device to another and stores App Services BSON types', async () => {
      const a = await openDevice();
      const owners = ['ada', 'grace'];
      for (const owner of owners) await a.put('Owner', { _id: owner, ...scope, name: owner.toUpperCase() });
      const ids = mixedValues.map((_, i) => new ObjectId(`65a1b2c3d4e5f60718293a${(0x50 + i).toString(16)}`));
      const written = mixedValues.map(([, mixed], i) => thing(ids[i], scope, mixed, owners));
      for (const value of written) await a.put('Thing', value);
      // What device A holds is what was written (the SDK's own round trip).
      const onA = await a.objects('Thing');
      expect(onA).toEqual(written.map(held));
      await a.upload();

      const b = await openDevice();
      await b.waitForCount('Thing', written.length);
      expect(await b.objects('Thing')).toEqual(onA);
      // Backlinks are computed on each device from the links that synced.
      expect(await b.objects('Owner')).toEqual([
        { _id: 'ada', ...scope, name: 'ADA', things: ids.map((id) => ({ __link: ['Thing', { $oid: id.toHexString() }] })) },
        { _id: 'grace', ...scope, name: 'GRACE', things: ids.map((id) => ({ __link: ['Thing', { $oid: id.toHexString() }] })) },
      ]);

      const stored = await eventually(async () => {
        const docs = await collection('Thing').find({ _id: { $in: ids } }).sort({ _id: 1 }).toArray();
        expect(docs).toHaveLength(ids.length);
        return docs;
      });
      expectStoredTypes(stored[0], ids[0], owners);
      // Each mixed variant is stored as its own BSON value.
      const mixedStored = Object.fromEntries(mixedValues.map(([name], i) => [name, (stored[i] as Record<string, unknown>)['mixed']]));
      expect(mixedStored['bool']).toBe(true);
      expect(mixedStored['string']).toBe('mixed text');
      expect(mixedStored['null'] ?? null).toBeNull();
      expect(mixedStored['decimal']).toBeInstanceOf(Decimal128);
      expect((mixedStored['uuid'] as Binary).sub_type).toBe(4);
      expect((mixedStored['data'] as Binary).sub_type).toBe(0);
      expect(canonical(mixedStored['int'])).toBe(1_099_511_627_779);
      expect(canonical(mixedStored['double'])).toBe(2.5);
      expect(canonical(mixedStored['list'])).toEqual([1, 'two', [3, { four: 4 }], null]);
      expect(canonical(mixedStored['dictionary'])).toEqual({ a: 'x', b: 2, nested: { list: [true, 'y'], deeper: { z: 0.25 } } });
      expect(await collection('Owner').findOne({ _id: 'ada' })).toEqual({ _id: 'ada', ...scope, name: 'ADA' });

      // And back: B changes values inside collections, embedded objects and mixed; A gets them.
      await b.change('Thing', ids[0], {
        intList: [Long.fromNumber(9)],
        mixed: { replaced: [Long.fromNumber(1), 'list'] },
        address: { street: '2 Side St', zip: null, tags: ['moved'] },
        stringDict: { only: 'one' },
        owner: null,
      });
      await b.upload();
      await a.waitForCount('Thing', 1, 'address.street == "2 Side St" AND owner == null');
      const changed = (await a.objects('Thing')).find((object) => (object['_id'] as { $oid: string }).$oid === ids[0].toHexString());
      expect(changed).toMatchObject({ intList: [9], mixed: { replaced: [1, 'list'] }, address: { street: '2 Side St', zip: null, tags: ['moved'] }, stringDict: { only: 'one' }, owner: null });
      await eventually(async () => expect(canonical(await collection('Thing').findOne({ _id: ids[0] }))).toMatchObject({ intList: [9], mixed: { replaced: [1, 'list'] }, address: { street: '2 Side St', zip: null, tags: ['moved'] }, stringDict: { only: 'one' }, owner: null }));
    }, 90_000);

    it('delivers a document written into the collection with App Services BSON types to the devices', async () => {
      const a = await openDevice();
      await a.put('Owner', { _id: 'linus', ...scope, name: 'LINUS' });
      await a.upload();
      await eventually(async () => expect(await collection('Owner').findOne({ _id: 'linus' })).not.toBeNull());
      const id = new ObjectId();
      // As App Services stored a Thing (and as a function or the Data API would write one): ints as longs,
      // floats as doubles, UUIDs as binary subtype 4, embedded objects as sub-documents, links as the _id.
      const document = {
        _id: id,
        ...scope,
        bool: false,
        int: Long.fromNumber(-9_007_199_254),
        float: new Double(0.25),
        double: new Double(-1e300),
        string: 'from the collection',
        data: new Binary(Buffer.from([9, 8, 7])),
        date: new Date('2001-09-09T01:46:40.000Z'),
        decimal: Decimal128.fromString('9.99'),
        objectId: new ObjectId('0123456789abcdef01234567'),
        uuid: new Binary(Buffer.from(otherUuid.toHexString(false), 'hex'), 4),
        mixed: { inner: [Long.fromNumber(1), 'two', { three: new Double(3.5) }] },
        optBool: null,
        optInt: Long.fromNumber(5),
        optFloat: null,
        optDouble: new Double(6.5),
        optString: 'present',
        optData: null,
        optDate: null,
        optDecimal: Decimal128.fromString('-1'),
        optObjectId: new ObjectId('65a1b2c3d4e5f60718293a4b'),
        optUuid: null,
        intList: [Long.fromNumber(1), Long.fromNumber(2)],
        optStringList: [null, 'b'],
        doubleList: [new Double(1.25)],
        dateList: [new Date(1000)],
        uuidList: [new Binary(Buffer.from(uuid.toHexString(false), 'hex'), 4)],
        dataList: [new Binary(Buffer.from([1]))],
        mixedList: [true, Long.fromNumber(2), 'three', null, new Binary(Buffer.from(uuid.toHexString(false), 'hex'), 4)],
        intSet: [Long.fromNumber(10)],
        stringSet: ['only'],
        objectIdSet: [],
        decimalSet: [Decimal128.fromString('2.5'), Decimal128.fromString('0.5')],
        intDict: { k: Long.fromNumber(42) },
        stringDict: { k: 'v' },
        mixedDict: { n: new Double(1.5), s: 'str', l: [Long.fromNumber(1)], d: { x: null } },
        address: { street: 'collection street', zip: Long.fromNumber(7), tags: ['ext'] },
        addresses: [{ street: 'listed', zip: null, tags: [] }],
        addressDict: { home: { street: 'in a dictionary', zip: Long.fromNumber(1), tags: [] } },
        owner: 'linus',
        owners: ['linus', 'linus'],
        ownerSet: ['linus'],
        ownerDict: { boss: 'linus' },
      };
      await collection('Thing').insertOne(document);
      const b = await openDevice();
      const query = `string == "from the collection"`;
      await Promise.all([a.waitForCount('Thing', 1, query, 20_000), b.waitForCount('Thing', 1, query, 20_000)]);
      const link = { __link: ['Owner', 'linus'] };
      const expected = held({
        ...document,
        uuid: otherUuid,
        uuidList: [uuid],
        mixedList: [true, 2, 'three', null, uuid],
        owner: link,
        owners: [link, link],
        ownerSet: [link],
        ownerDict: { boss: link },
      });
      expect((await a.objects('Thing', query))[0]).toEqual(expected);
      expect((await b.objects('Thing', query))[0]).toEqual(expected);
      // An update of some fields reaches the devices too.
      await collection('Thing').updateOne({ _id: id }, { $set: { 'address.zip': Long.fromNumber(8), mixedDict: { replaced: true }, intList: [Long.fromNumber(3)] } });
      await Promise.all([a.waitForCount('Thing', 1, `${query} AND address.zip == 8`, 20_000), b.waitForCount('Thing', 1, `${query} AND address.zip == 8`, 20_000)]);
      expect((await b.objects('Thing', query))[0]).toMatchObject({ mixedDict: { replaced: true }, intList: [3], address: { street: 'collection street', zip: 8, tags: ['ext'] } });
    }, 90_000);

    it('opens with the data models generated from the schemas development mode wrote, and sees what the hand-written schema sees', async () => {
      // realm-cli's `schema datamodels` (admin API sync/client_schemas): the JavaScript models of the app as
      // deployed now, evaluated, and their `static schema` given to a device of the real SDK.
      host.nest.get(DeployedApps).invalidate(appId);
      const { config } = await host.nest.get(DeployedApps).byClientAppId(clientAppId);
      const models = generateDataModels(config, 'JAVA_SCRIPT');
      expect(models.map((model) => model.model_name).sort()).toEqual(['Address', 'Owner', 'Thing']);
      expect(models.flatMap((model) => [...model.warnings, ...(model.error.error ? [model.error] : [])])).toEqual([]);
      const code = models.map((model) => model.schema.replace(/^export /gm, '')).join('\n');
      const realmStub = { Object: class {} };
      const generated = runInNewContext(`${code}\n[${models.map((model) => model.model_name).join(', ')}].map((model) => model.schema);`, { Realm: realmStub }) as unknown[];
      const devices = anonymousDevices(() => ({ url: host.url, clientAppId }), {
        schema: generated,
        ...(sync === 'partition'
          ? { partition: 'types' }
          : {
              subscriptions: [
                { name: 'things', type: 'Thing', query: 'group == "types"' },
                { name: 'owners', type: 'Owner', query: 'group == "types"' },
              ],
            }),
      });
      try {
        const reference = await openDevice();
        const count = (await collection('Thing').find({ ...scope }).toArray()).length;
        await reference.waitForCount('Thing', count);
        const device = await devices.open();
        await device.waitForCount('Thing', count);
        expect(await device.objects('Thing')).toEqual(await reference.objects('Thing'));
        // And it writes: an object made with the generated models reaches the collection.
        const id = new ObjectId();
        await device.put('Thing', { ...thing(id, scope, 'generated', ['ada']), owners: [], ownerSet: [], ownerDict: {} });
        await device.upload();
        await eventually(async () => expect(await collection('Thing').findOne({ _id: id })).toMatchObject({ mixed: 'generated', string: 'ünïcødé ✓' }));
      } finally {
        await devices.stopAll();
      }
    }, 90_000);
  });
}
