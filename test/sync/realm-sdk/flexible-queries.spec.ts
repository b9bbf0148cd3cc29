import { type AppConfig } from '@tessera/app-config';
import { type DataSourceClient } from '@tessera/datastore';
import { Binary, Double, Long, ObjectId, UUID } from 'bson';
import { startTestHost, type TestHost } from '../../support/test-host';
import { RealmDevice, realmSdkSkipReason, SdkError } from './realm-client';

// The query shapes a flexible-sync subscription can take, through the real Realm JS SDK 12.15.0's
// subscriptions: each query is subscribed to on a device, and the device must then hold exactly the objects
// the predicate selects from the collection (the expected ids are written by hand from the table below).
// Queries the server does not serve fail with the server's error. The app runs in development mode, so the
// SDK's schema becomes the server's; every field of Item but `name` is queryable.

const CLUSTER = 'queries-cluster';

const everyone = { name: 'everyone', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true };

function queriesApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: CLUSTER } }, collectionRules: [], defaultRule: { roles: [everyone] }, rules: [], webhooks: [] });
  app.sync = {
    type: 'flexible',
    state: 'enabled',
    development_mode_enabled: true,
    service_name: 'mongodb-atlas',
    database_name: 'queries',
    queryable_fields_names: ['int', 'double', 'date', 'string', 'oid', 'uuid', 'tags', 'flag'],
  };
}

const schema = [
  {
    name: 'Item',
    primaryKey: '_id',
    properties: { _id: 'string', int: 'int', double: 'double', date: 'date', string: 'string', oid: 'objectId?', uuid: 'uuid?', tags: 'string[]', flag: 'bool', name: 'string?' },
  },
];

const oidA = new ObjectId('65a1b2c3d4e5f60718293a01');
const oidB = new ObjectId('65a1b2c3d4e5f60718293a02');
const uuidA = new UUID('6f1e8a5c-3b7d-4c2a-9e0f-1a2b3c4d5e6f');
const uuidB = new UUID('0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9');
const uuidBinary = (uuid: UUID) => new Binary(Buffer.from(uuid.toHexString(false), 'hex'), 4);

//  _id  int  double  date        string          tags                 oid   uuid   flag
//  a    1    1.5     2024-01-01  "Apple pie"     red, fruit           A     A      true
//  b    2    2.5     2024-02-01  "apple tart"    green, fruit         B     B      false
//  c    3    -0.5    2024-03-01  "Banana split"  yellow               -     -      true
//  d    4    10.25   2023-12-31  "cherry PIE"    (none)               A     -      false
//  e    5    3       2024-06-15  "Pineapple"     fruit, yellow        -     B      true
//  f    6    0       2025-01-01  "grape"         red                  -     -      false
const items = [
  { _id: 'a', int: 1, double: 1.5, date: '2024-01-01', string: 'Apple pie', tags: ['red', 'fruit'], oid: oidA, uuid: uuidA, flag: true },
  { _id: 'b', int: 2, double: 2.5, date: '2024-02-01', string: 'apple tart', tags: ['green', 'fruit'], oid: oidB, uuid: uuidB, flag: false },
  { _id: 'c', int: 3, double: -0.5, date: '2024-03-01', string: 'Banana split', tags: ['yellow'], oid: null, uuid: null, flag: true },
  { _id: 'd', int: 4, double: 10.25, date: '2023-12-31', string: 'cherry PIE', tags: [], oid: oidA, uuid: null, flag: false },
  { _id: 'e', int: 5, double: 3, date: '2024-06-15', string: 'Pineapple', tags: ['fruit', 'yellow'], oid: null, uuid: uuidB, flag: true },
  { _id: 'f', int: 6, double: 0, date: '2025-01-01', string: 'grape', tags: ['red'], oid: null, uuid: null, flag: false },
];

/** Each query with the ids it selects from the table above. */
const shapes: Array<[query: string, ids: string[]]> = [
  ['TRUEPREDICATE', ['a', 'b', 'c', 'd', 'e', 'f']],
  ['FALSEPREDICATE', []],
  // int
  ['int == 3', ['c']],
  ['int != 3', ['a', 'b', 'd', 'e', 'f']],
  ['int < 3', ['a', 'b']],
  ['int <= 3', ['a', 'b', 'c']],
  ['int > 4', ['e', 'f']],
  ['int >= 4', ['d', 'e', 'f']],
  ['2 >= int', ['a', 'b']],
  ['int BETWEEN {2, 4}', ['b', 'c', 'd']],
  // double
  ['double == 2.5', ['b']],
  ['double != 0', ['a', 'b', 'c', 'd', 'e']],
  ['double < 0', ['c']],
  ['double <= 1.5', ['a', 'c', 'f']],
  ['double > 2.5', ['d', 'e']],
  ['double >= 2.5', ['b', 'd', 'e']],
  ['double == 3', ['e']],
  // date (UTC literals)
  ['date == 2024-02-01@00:00:00', ['b']],
  ['date != 2024-02-01@00:00:00', ['a', 'c', 'd', 'e', 'f']],
  ['date < 2024-01-01@00:00:00', ['d']],
  ['date <= 2024-01-01@00:00:00', ['a', 'd']],
  ['date > 2024-03-01@00:00:00', ['e', 'f']],
  ['date >= 2024-03-01@00:00:00', ['c', 'e', 'f']],
  // string comparisons and string operators, case-sensitive and [c]
  ['string == "grape"', ['f']],
  ['string != "grape"', ['a', 'b', 'c', 'd', 'e']],
  ['string ==[c] "APPLE PIE"', ['a']],
  ['string !=[c] "APPLE PIE"', ['b', 'c', 'd', 'e', 'f']],
  ['string < "B"', ['a']],
  ['string >= "a"', ['b', 'd', 'f']],
  ['string BEGINSWITH "apple"', ['b']],
  ['string BEGINSWITH[c] "apple"', ['a', 'b']],
  ['string ENDSWITH "pie"', ['a']],
  ['string ENDSWITH[c] "pie"', ['a', 'd']],
  ['string CONTAINS "apple"', ['b', 'e']],
  ['string CONTAINS[c] "APPLE"', ['a', 'b', 'e']],
  ['string LIKE "*a?e"', ['f']],
  ['string LIKE[c] "*P?E"', ['a', 'd', 'e']],
  ['string LIKE "Apple*"', ['a']],
  ['string LIKE[c] "apple*"', ['a', 'b']],
  ['string LIKE "* *"', ['a', 'b', 'c', 'd']],
  ['string CONTAINS "."', []],
  // IN lists
  ['int IN {1, 3, 5}', ['a', 'c', 'e']],
  ['string IN {"grape", "Pineapple", "nothing"}', ['e', 'f']],
  // `double IN {0, 10.25}` would not do: realm-core 14 drops the integer literal 0 from a double IN list on
  // the device itself (its description of the query is `double == 10.25`), so the server never sees it.
  ['double IN {0.0, 10.25}', ['d', 'f']],
  ['int IN {1, 3, 5} AND NOT string IN {"Apple pie"}', ['c', 'e']],
  ['date IN {2024-02-01@00:00:00, 2025-01-01@00:00:00}', ['b', 'f']],
  ['date BETWEEN {2024-01-01@00:00:00, 2024-03-01@00:00:00}', ['a', 'b', 'c']],
  // Not `string IN[c] {...}`: realm-core 14 drops the [c] of an IN list on the device itself.
  // bool
  ['flag == true', ['a', 'c', 'e']],
  ['flag != true', ['b', 'd', 'f']],
  // AND / OR / NOT
  ['int > 1 AND int < 5', ['b', 'c', 'd']],
  ['int == 1 OR string == "grape"', ['a', 'f']],
  ['NOT (int < 3)', ['c', 'd', 'e', 'f']],
  ['!(string BEGINSWITH[c] "a") AND double >= 0', ['d', 'e', 'f']],
  ['(int <= 2 OR int >= 6) AND NOT flag == false', ['a']],
  ['int == 1 OR (double > 2 AND NOT string CONTAINS "apple")', ['a', 'd']],
  // ObjectId and UUID equality
  [`oid == oid(${oidA.toHexString()})`, ['a', 'd']],
  [`oid != oid(${oidA.toHexString()})`, ['b', 'c', 'e', 'f']],
  ['oid == nil', ['c', 'e', 'f']],
  [`uuid == uuid(${uuidB.toHexString(true)})`, ['b', 'e']],
  [`uuid != uuid(${uuidB.toHexString(true)})`, ['a', 'c', 'd', 'f']],
  ['uuid == nil', ['c', 'd', 'f']],
  // a list field: ANY (the default), ALL, NONE, IN
  ['ANY tags == "fruit"', ['a', 'b', 'e']],
  ['tags == "red"', ['a', 'f']],
  ['"yellow" IN tags', ['c', 'e']],
  ['ALL tags == "red"', ['d', 'f']],
  ['NONE tags == "fruit"', ['c', 'd', 'f']],
  ['ANY tags BEGINSWITH[c] "Y"', ['c', 'e']],
  ['ANY tags IN {"green", "yellow"}', ['b', 'c', 'e']],
  ['ANY tags != "red"', ['a', 'b', 'c', 'e']],
  ['ALL tags BEGINSWITH "y"', ['c', 'd']],
  ['NONE tags IN {"red", "green"}', ['c', 'd', 'e']],
  ['tags.@size == 0', ['d']],
  ['tags.@count >= 2', ['a', 'b', 'e']],
  // edge cases: empty needles, constant parts, dates between whole milliseconds (T<seconds>:<nanoseconds>)
  ['string CONTAINS ""', ['a', 'b', 'c', 'd', 'e', 'f']],
  ['string == ""', []],
  ['NOT TRUEPREDICATE', []],
  ['TRUEPREDICATE AND int == 1', ['a']],
  ['int == 1 OR FALSEPREDICATE', ['a']],
  ['int > 2.5', ['c', 'd', 'e', 'f']],
  ['double BETWEEN {-1, 1.5}', ['a', 'c', 'f']],
  ['int != 3 AND int != 4', ['a', 'b', 'e', 'f']],
  ['NOT (tags.@size > 1)', ['c', 'd', 'f']],
  ['ANY tags ==[c] "RED"', ['a', 'f']],
  ['ALL tags != "red"', ['b', 'c', 'd', 'e']],
  ['NONE tags BEGINSWITH "r"', ['b', 'c', 'd', 'e']],
  ['tags.@count == 1', ['c', 'f']],
  [`oid IN {oid(${oidA.toHexString()}), oid(${oidB.toHexString()})}`, ['a', 'b', 'd']],
  [`uuid IN {uuid(${uuidA.toHexString(true)}), uuid(${uuidB.toHexString(true)})}`, ['a', 'b', 'e']],
  ['date > T1706745599:999999999', ['b', 'c', 'e', 'f']],
  ['date >= T1706745600:1', ['c', 'e', 'f']],
  ['date < T1706745600:1', ['a', 'b', 'd']],
  ['date == T1706745600:1', []],
  ['date != T1706745600:1', ['a', 'b', 'c', 'd', 'e', 'f']],
  // long queries: a thousand-element IN list, three hundred ORs
  [`int IN {${Array.from({ length: 1000 }, (_, i) => i + 2).join(', ')}}`, ['b', 'c', 'd', 'e', 'f']],
  [`${Array.from({ length: 300 }, (_, i) => `int == ${i + 10}`).join(' OR ')} OR string == "grape"`, ['f']],
];

const ids = (objects: Array<Record<string, unknown>>) => objects.map((object) => object['_id']);

describe.skipIf(realmSdkSkipReason !== undefined)(`flexible sync query shapes with the real Realm JS SDK${realmSdkSkipReason ? ` (skipped: ${realmSdkSkipReason})` : ''}`, () => {
  let host: TestHost;
  let clientAppId = '';
  let cluster: DataSourceClient;
  const devices: RealmDevice[] = [];

  beforeAll(async () => {
    host = await startTestHost();
    clientAppId = (await host.createApp('flexible-queries', queriesApp)).clientAppId;
    cluster = host.dataSources.forCluster(CLUSTER);
    // As App Services stored them: ints as longs, doubles as doubles, UUIDs as binary subtype 4.
    await cluster
      .db('queries')
      .collection('Item')
      .insertMany(
        items.map((item) => ({
          ...item,
          int: Long.fromNumber(item.int),
          double: new Double(item.double),
          date: new Date(`${item.date}T00:00:00.000Z`),
          uuid: item.uuid ? uuidBinary(item.uuid) : null,
          name: `item ${item._id}`,
        })),
      );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(devices.map((device) => device.stop()));
    await host?.close();
  });

  /** A device subscribed to `query` on Item (nothing by default). */
  const openDevice = async (query = 'int == -1'): Promise<RealmDevice> => {
    const device = RealmDevice.start();
    devices.push(device);
    await device.login(host.url, clientAppId, 'anonymous');
    await device.call('openFlexible', { schema, subscriptions: [{ name: 'items', type: 'Item', query }] });
    return device;
  };

  const subscribe = (device: RealmDevice, subscriptions: Array<{ name: string; query: string }>, options: { keep?: boolean; remove?: string[] } = {}) =>
    device.call<{ state: string; names: string[] }>('setSubscriptions', { subscriptions: subscriptions.map((sub) => ({ ...sub, type: 'Item' })), ...options });

  it('holds exactly the objects each query shape selects once its subscription is complete', async () => {
    const device = await openDevice();
    expect(await device.objects('Item')).toEqual([]);
    const wrong: string[] = [];
    for (const [query, expected] of shapes) {
      const outcome = await subscribe(device, [{ name: 'items', query }]).catch((error: unknown) => error as Error);
      if (outcome instanceof Error) {
        wrong.push(`${query}: refused: ${outcome.message}`);
        continue;
      }
      expect(outcome.state).toBe('complete');
      const held = ids(await device.objects('Item'));
      if (JSON.stringify(held) !== JSON.stringify(expected)) wrong.push(`${query}: holds ${JSON.stringify(held)}, expected ${JSON.stringify(expected)}`);
    }
    expect(wrong).toEqual([]);
  }, 90_000);

  it('holds the union of several subscriptions, and removing one removes only the objects it alone matched', async () => {
    const device = await openDevice();
    await subscribe(device, [
      { name: 'small', query: 'int <= 3' },
      { name: 'fruit', query: 'ANY tags == "fruit"' },
      { name: 'late', query: 'date >= 2025-01-01@00:00:00' },
    ]);
    expect(ids(await device.objects('Item'))).toEqual(['a', 'b', 'c', 'e', 'f']);
    // a and b are fruit too: they stay with `small`; e was fruit only.
    expect((await subscribe(device, [], { keep: true, remove: ['fruit'] })).names.sort()).toEqual(['late', 'small']);
    expect(ids(await device.objects('Item'))).toEqual(['a', 'b', 'c', 'f']);
    await subscribe(device, [], { keep: true, remove: ['small'] });
    expect(ids(await device.objects('Item'))).toEqual(['f']);
    // Two subscriptions selecting the same object: it stays until neither does.
    await subscribe(device, [{ name: 'pie', query: 'string ENDSWITH[c] "pie"' }, { name: 'four', query: 'int == 4' }], { keep: true });
    expect(ids(await device.objects('Item'))).toEqual(['a', 'd', 'f']);
    await subscribe(device, [], { keep: true, remove: ['four'] });
    expect(ids(await device.objects('Item'))).toEqual(['a', 'd', 'f']);
    await subscribe(device, [], { keep: true, remove: ['pie', 'late'] });
    expect(await device.objects('Item')).toEqual([]);
  }, 60_000);

  it("subscribes and unsubscribes results with SDK 12's subscribe() and unsubscribe()", async () => {
    const device = await openDevice();
    const first = await device.call<{ count: number; subscriptions: number }>('subscribeResults', { type: 'Item', query: 'int > 4', behavior: 'FirstTime' });
    // The results resolve once the server's bootstrap is on the device: both objects are there.
    expect(first).toEqual({ count: 2, subscriptions: 2 });
    const named = await device.call<{ count: number; subscriptions: number }>('subscribeResults', { type: 'Item', query: 'string BEGINSWITH[c] "a"', name: 'a-items', behavior: 'Always' });
    expect(named).toEqual({ count: 2, subscriptions: 3 });
    expect(ids(await device.objects('Item'))).toEqual(['a', 'b', 'e', 'f']);
    expect(await device.call('unsubscribeResults', { type: 'Item', query: 'int > 4' })).toEqual({ subscriptions: 2 });
    expect(ids(await device.objects('Item'))).toEqual(['a', 'b']);
    // A write to the collection that enters a subscribed query reaches the device.
    await cluster.db('queries').collection('Item').insertOne({ _id: 'g', int: Long.fromNumber(7), double: new Double(7), date: new Date('2024-07-07T00:00:00.000Z'), string: 'avocado', tags: [], oid: null, uuid: null, flag: true });
    await device.waitForCount('Item', 3, 'TRUEPREDICATE', 30_000);
    expect(ids(await device.objects('Item'))).toEqual(['a', 'b', 'g']);
  }, 60_000);

  it('fails a query the server cannot serve with the server error, and keeps serving the next one', async () => {
    const device = await openDevice('int == 1');
    const refused: Array<[query: string, message: RegExp]> = [
      ['name == "item a"', /^Invalid query: .*key "name" is not a queryable field/],
      ['int == double', /^Invalid query: .*comparing two properties is not supported/],
      ['int * 2 == 6', /^Invalid query: .*arithmetic is not supported/],
      ['int == 1 OR (flag == true AND name BEGINSWITH "item")', /^Invalid query: .*key "name" is not a queryable field/],
      ['ANY tags == string', /^Invalid query: .*comparing two properties is not supported/],
    ];
    for (const [query, message] of refused) {
      const error = await subscribe(device, [{ name: 'items', query }]).catch((caught: unknown) => caught);
      expect(error, query).toBeInstanceOf(SdkError);
      expect((error as SdkError).message, query).toMatch(message);
    }
    // A query the SDK itself refuses never reaches the server, and the session goes on.
    await expect(subscribe(device, [{ name: 'items', query: 'tags.@max == "x"' }])).rejects.toThrow(/Cannot use aggregate '.@max'/);
    expect((await subscribe(device, [{ name: 'items', query: 'int == 2' }])).state).toBe('complete');
    expect(ids(await device.objects('Item'))).toEqual(['b']);
  }, 60_000);

  it('matches writes to the collection against each query shape as they happen: what enters, what leaves', async () => {
    // Live changes are matched one document at a time, not through the store's filter: the same shapes again,
    // on documents of their own (int >= 100), written after the tests above read the collection.
    const live: Record<string, string> = {
      prefix: 'int >= 100 AND string BEGINSWITH[c] "ab"',
      like: 'int >= 100 AND string LIKE "*x?z"',
      all: 'int >= 100 AND ALL tags == "only"',
      size: 'int >= 100 AND tags.@size >= 3',
      date: 'int >= 100 AND date > 2030-01-01@00:00:00',
      uuid: `int >= 100 AND uuid == uuid(${uuidA.toHexString(true)})`,
      oid: `int >= 100 AND oid == oid(${oidB.toHexString()})`,
      double: 'int >= 100 AND double < -100',
      suffix: 'int >= 100 AND string ENDSWITH[c] "END" AND NOT flag == true',
      sentinel: 'int IN {998, 999}',
    };
    const device = await openDevice();
    await subscribe(device, Object.entries(live).map(([name, query]) => ({ name, query })));
    expect(await device.objects('Item')).toEqual([]);
    let n = 100;
    const doc = (id: string, fields: Record<string, unknown>) => ({
      _id: id,
      int: Long.fromNumber(n++),
      double: new Double(0),
      date: new Date('2020-01-01T00:00:00.000Z'),
      string: 'none',
      tags: ['x'],
      oid: null,
      uuid: null,
      flag: true,
      ...fields,
    });
    const collection = cluster.db('queries').collection('Item');
    await collection.insertMany([
      doc('h01', { string: 'ABacus' }),
      doc('h02', { string: 'boxyz' }),
      doc('h03', { tags: [] }),
      doc('h04', { tags: ['only', 'only'] }),
      doc('h05', { tags: ['a', 'b', 'c'] }),
      doc('h06', { date: new Date('2031-05-05T00:00:00.000Z') }),
      doc('h07', { uuid: uuidBinary(uuidA) }),
      doc('h08', { oid: oidB }),
      doc('h09', { double: new Double(-200) }),
      doc('h10', { string: 'the end', flag: false }),
      doc('h11', { string: 'the end', flag: true }),
      doc('h12', { string: 'abc' }),
      doc('n01', { string: 'xabc', tags: ['only', 'other'], uuid: uuidBinary(uuidB), oid: oidA, double: new Double(-100) }),
      // No tags at all: the device has an empty list, which ALL matches.
      Object.fromEntries(Object.entries(doc('h13', {})).filter(([key]) => key !== 'tags')),
      doc('s01', { int: Long.fromNumber(999) }),
    ]);
    // Each session's changes go out in the order they were written: once the last write is on the device, the others are.
    await device.waitForCount('Item', 1, 'int == 999', 30_000);
    expect(ids(await device.objects('Item'))).toEqual(['h01', 'h02', 'h03', 'h04', 'h05', 'h06', 'h07', 'h08', 'h09', 'h10', 'h12', 'h13', 's01']);

    await collection.updateOne({ _id: 'h01' }, { $set: { string: 'zzz' } }); // leaves prefix
    await collection.updateOne({ _id: 'h04' }, { $push: { tags: 'not only' } }); // leaves all, enters size
    await collection.updateOne({ _id: 'h03' }, { $set: { tags: ['other'] } }); // leaves all
    await collection.updateOne({ _id: 'h10' }, { $set: { flag: true } }); // leaves suffix
    await collection.updateOne({ _id: 'n01' }, { $set: { double: new Double(-100.5) } }); // enters double
    await collection.insertOne(doc('s02', { int: Long.fromNumber(998) }));
    await device.waitForCount('Item', 1, 'int == 998', 30_000);
    expect(ids(await device.objects('Item'))).toEqual(['h02', 'h04', 'h05', 'h06', 'h07', 'h08', 'h09', 'h12', 'h13', 'n01', 's01', 's02']);
  }, 60_000);
});
