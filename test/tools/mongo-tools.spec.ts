import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { DatastoreWireService } from '@tessera/server';
import { Binary, BSON, Decimal128, Double, EJSON, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, UUID } from 'bson';
import { type Document, MongoClient } from 'mongodb';
import { startTestHost, type TestHost } from '../support/test-host';
import { mongoToolsSkipReason, pipeDumpToRestore, runTool, startWireDatastore } from './mongo-tools';

/** Documents whose `_id` is any BSON value. */
type AnyDoc = { _id: ObjectId | Int32 | string } & Record<string, unknown>;

// MongoDB's own mongodump and mongorestore (and mongoexport/mongoimport) against the datastore service's wire
// server with SCRAM credentials: several collections in two databases, with their indexes and BSON types,
// dumped as a directory, a gzipped directory, an archive and a gzipped archive, dropped, restored, and
// compared value for value (canonical Extended JSON, so an Int32 that came back a Double is a failure).
describe.skipIf(mongoToolsSkipReason !== undefined)(`MongoDB's database tools against Tessera${mongoToolsSkipReason ? ` (skipped: ${mongoToolsSkipReason})` : ''}`, () => {
  const password = 'tools-secret-0123456789';
  let datastore: TestHost;
  let client: MongoClient;
  let uri: string;
  const work = makeTempDir('tessera-mongo-tools-');

  /** Every document of every collection of `dbs`, as canonical Extended JSON, in `_id` order. */
  const snapshot = async (dbs: string[]): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    for (const dbName of dbs) {
      const db = client.db(dbName);
      for (const name of (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort()) {
        // Read without promoting numbers: a double holding 2 that came back an int, or a long that came back an int, differs.
        const docs = await db.collection(name).find({}, { promoteValues: false, promoteLongs: false }).sort({ _id: 1 }).toArray();
        out[`${dbName}.${name}`] = EJSON.stringify(docs, { relaxed: false });
      }
    }
    return out;
  };

  /** Each collection's indexes (name, key and options; `v` is the server's business). */
  const indexes = async (dbs: string[]): Promise<Record<string, Document[]>> => {
    const out: Record<string, Document[]> = {};
    for (const dbName of dbs) {
      const db = client.db(dbName);
      for (const name of (await db.listCollections({ type: 'collection' }, { nameOnly: true }).toArray()).map((c) => c.name).sort()) {
        const list = await db.collection(name).listIndexes().toArray();
        out[`${dbName}.${name}`] = list.map(({ v: _v, ...index }) => index).sort((a, b) => String(a.name).localeCompare(String(b.name)));
      }
    }
    return out;
  };

  const dropAll = async () => {
    for (const dbName of ['shop', 'audit', 'copy']) await client.db(dbName).dropDatabase();
    expect(await snapshot(['shop', 'audit'])).toEqual({});
  };

  const seed = async () => {
    const shop = client.db('shop');
    const customers = Array.from({ length: 250 }, (_, i) => ({
      _id: new ObjectId(),
      name: `customer ${i}`,
      email: `c${i}@example.com`,
      tier: i % 3 === 0 ? 'gold' : 'basic',
      since: new Date(Date.UTC(2020, 0, 1) + i * 86_400_000),
      visits: new Int32(i),
      ...(i % 5 === 0 ? { referrer: `c${i - 1}@example.com` } : {}),
    }));
    await shop.collection('customers').insertMany(customers);
    await shop.collection('customers').createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
    await shop.collection('customers').createIndex({ referrer: 1 }, { sparse: true, name: 'referrer_sparse' });
    await shop.collection<AnyDoc>('orders').insertMany([
      {
        _id: new ObjectId(),
        customer: customers[0]._id,
        total: Decimal128.fromString('1234.5600'),
        placedAt: new Date('2024-02-29T23:59:59.999Z'),
        quantity: Long.fromString('9007199254740993'),
        weight: new Double(2),
        count: new Int32(2),
        receipt: new Binary(Buffer.from([0, 1, 2, 254, 255]), 0),
        token: new UUID('0b1c8a9e-7b3f-4a45-9a8e-1b2c3d4e5f60').toBinary(),
        lines: [{ sku: 'a-1', qty: new Int32(1), price: Decimal128.fromString('0.10') }, { sku: 'b-2', qty: new Int32(3), price: Decimal128.fromString('9.99') }],
        notes: null,
        flags: { gift: true, tags: ['x', 'y'], nested: { deeper: [[1, 2], []] } },
        unicode: 'grüße, 東京 🎉',
        bounds: [new MinKey(), new MaxKey()],
        stamp: new Timestamp({ t: 1_700_000_000, i: 7 }),
      },
      { _id: 'string-id', customer: customers[1]._id, total: Decimal128.fromString('-0.00'), placedAt: new Date(0), quantity: Long.fromNumber(-1), weight: new Double(-0.5) },
      { _id: new Int32(42), customer: customers[2]._id, total: Decimal128.fromString('1E+10'), placedAt: new Date(-1000), weight: new Double(1e300) },
    ]);
    await shop.collection('orders').createIndex({ customer: 1, placedAt: -1 }, { name: 'customer_recent' });
    await shop.collection('orders').createIndex({ 'lines.sku': 1 }, { name: 'line_skus' });
    // An empty collection with an index still exists after the round trip.
    await shop.createCollection('returns');
    await shop.collection('returns').createIndex({ order: 1 }, { name: 'by_order' });
    // A view is dumped as its definition and restored as a view.
    await shop.createCollection('goldCustomers', { viewOn: 'customers', pipeline: [{ $match: { tier: 'gold' } }, { $project: { email: 1 } }] });
    await client.db('audit').collection('events').insertMany(Array.from({ length: 1200 }, (_, i) => ({ seq: new Int32(i), at: new Date(1_700_000_000_000 + i), payload: 'p'.repeat(i % 50) })));
    await client.db('audit').collection('events').createIndex({ seq: -1 }, { name: 'seq_desc', unique: true });
  };

  beforeAll(async () => {
    ({ host: datastore, uri, client } = await startWireDatastore(password));
  });

  afterAll(async () => {
    await client?.close(true);
    await datastore?.close();
    work.remove();
  });

  beforeEach(async () => {
    await dropAll();
    await seed();
  });

  const expectRestored = async (before: { docs: Record<string, string>; indexes: Record<string, Document[]> }) => {
    expect(Object.keys(before.docs).sort()).toEqual(['audit.events', 'shop.customers', 'shop.goldCustomers', 'shop.orders', 'shop.returns']);
    expect(JSON.parse(before.docs['shop.goldCustomers'])).toHaveLength(84);
    // The numbers were stored with the types written: a double holding 2, a long of -1, an int.
    expect(before.docs['shop.orders']).toContain('"weight":{"$numberDouble":"2.0"},"count":{"$numberInt":"2"}');
    expect(before.docs['shop.orders']).toContain('"quantity":{"$numberLong":"-1"}');
    const after = await snapshot(['shop', 'audit']);
    for (const ns of Object.keys(before.docs)) expect(after[ns], ns).toBe(before.docs[ns]);
    expect(after).toEqual(before.docs);
    expect(await indexes(['shop', 'audit'])).toEqual(before.indexes);
  };

  const state = async () => ({ docs: await snapshot(['shop', 'audit']), indexes: await indexes(['shop', 'audit']) });

  const ok = (run: { code: number; stderr: string }) => expect(run.code, run.stderr).toBe(0);

  it('round-trips a directory dump of every database, with indexes and BSON types', async () => {
    const before = await state();
    expect(before.indexes['shop.customers'].map((i) => i.name)).toEqual(['_id_', 'email_unique', 'referrer_sparse']);
    const out = join(work.path, 'plain');
    const dump = await runTool('mongodump', ['--uri', uri, '--out', out]);
    ok(dump);
    // It asked collStats which storage engine runs, and got an answer.
    expect(dump.stderr).not.toContain('failed to determine storage engine');
    expect(dump.stderr).toContain('done dumping audit.events (1200 documents)');
    expect(readdirSync(join(out, 'shop')).sort()).toEqual(['customers.bson', 'customers.metadata.json', 'goldCustomers.metadata.json', 'orders.bson', 'orders.metadata.json', 'returns.bson', 'returns.metadata.json']);
    // The dump's metadata carries the indexes as the server listed them.
    const metadata = JSON.parse(readFileSync(join(out, 'shop', 'orders.metadata.json'), 'utf8')) as { indexes: { name: string; key: unknown }[] };
    expect(metadata.indexes.map((i) => i.name).sort()).toEqual(['_id_', 'customer_recent', 'line_skus']);
    await dropAll();
    const restore = await runTool('mongorestore', ['--uri', uri, out]);
    ok(restore);
    expect(restore.stderr).toContain('1453 document(s) restored successfully. 0 document(s) failed to restore.');
    await expectRestored(before);
    expect(await client.db('shop').listCollections({ name: 'goldCustomers' }).toArray()).toMatchObject([{ type: 'view', options: { viewOn: 'customers' } }]);
    // The unique index restored is enforced.
    await expect(client.db('shop').collection('customers').insertOne({ email: 'c1@example.com' })).rejects.toMatchObject({ code: 11000 });
  });

  it('round-trips gzipped directory dumps, archives and gzipped archives of one database at a time', async () => {
    const before = await state();
    const variants: [string, string[]][] = [
      ['gzip directory', ['--gzip', '--out', join(work.path, 'gz')]],
      ['archive', [`--archive=${join(work.path, 'dump.archive')}`]],
      ['gzipped archive', ['--gzip', `--archive=${join(work.path, 'dump.archive.gz')}`]],
    ];
    for (const [what, args] of variants) {
      for (const db of ['shop', 'audit']) {
        const dumpArgs = args[0] === '--gzip' && args[1] === '--out' ? args : args.map((a) => (a.startsWith('--archive=') ? `${a}.${db}` : a));
        ok(await runTool('mongodump', ['--uri', uri, '--db', db, ...dumpArgs]));
      }
      await dropAll();
      for (const db of ['shop', 'audit']) {
        const restoreArgs = args[0] === '--gzip' && args[1] === '--out' ? ['--gzip', '--nsInclude', `${db}.*`, join(work.path, 'gz')] : args.map((a) => (a.startsWith('--archive=') ? `${a}.${db}` : a));
        const restore = await runTool('mongorestore', ['--uri', uri, ...restoreArgs]);
        expect(restore.code, `${what} ${db}: ${restore.stderr}`).toBe(0);
      }
      await expectRestored(before);
    }
  });

  it('restores over existing data with --drop, and reports duplicates without it', async () => {
    const before = await state();
    const out = join(work.path, 'again');
    ok(await runTool('mongodump', ['--uri', uri, '--db', 'shop', '--out', out]));
    // Without --drop the documents already there are duplicate keys: reported, the rest restored.
    await client.db('shop').collection<AnyDoc>('orders').deleteOne({ _id: 'string-id' });
    const duplicates = await runTool('mongorestore', ['--uri', uri, out]);
    ok(duplicates);
    expect(duplicates.stderr).toContain('1 document(s) restored successfully. 252 document(s) failed to restore.');
    expect(duplicates.stderr).toContain('E11000');
    // With --drop what changed since the dump is replaced by the dump.
    await client.db('shop').collection('customers').updateMany({}, { $set: { tier: 'changed' } });
    await client.db('shop').collection('customers').dropIndex('referrer_sparse');
    await client.db('shop').collection('extra').insertOne({ kept: true });
    const dropped = await runTool('mongorestore', ['--uri', uri, '--drop', out]);
    ok(dropped);
    expect(await client.db('shop').collection('extra').countDocuments()).toBe(1);
    await client.db('shop').collection('extra').drop();
    await expectRestored(before);
  });

  it('restores into another database with --nsFrom/--nsTo', async () => {
    const out = join(work.path, 'renamed');
    ok(await runTool('mongodump', ['--uri', uri, '--db', 'shop', '--out', out]));
    ok(await runTool('mongorestore', ['--uri', uri, '--nsFrom', 'shop.*', '--nsTo', 'copy.*', out]));
    const original = await snapshot(['shop']);
    const copy = await snapshot(['copy']);
    expect(Object.keys(copy).sort()).toEqual(['copy.customers', 'copy.goldCustomers', 'copy.orders', 'copy.returns']);
    // The view came along and reads the copy (its viewOn names a collection of its own database).
    for (const name of ['customers', 'goldCustomers', 'orders', 'returns']) expect(copy[`copy.${name}`]).toBe(original[`shop.${name}`]);
    expect((await client.db('copy').collection('orders').listIndexes().toArray()).map((i) => i.name).sort()).toEqual(['_id_', 'customer_recent', 'line_skus']);
  });

  it('copies a database live through a pipe from mongodump --archive to mongorestore --archive', async () => {
    const { dump, restore } = await pipeDumpToRestore(['--uri', uri, '--db', 'shop', '--archive'], ['--uri', uri, '--archive', '--nsFrom', 'shop.*', '--nsTo', 'copy.*']);
    ok(dump);
    ok(restore);
    const original = await snapshot(['shop']);
    const copy = await snapshot(['copy']);
    for (const name of ['customers', 'goldCustomers', 'orders', 'returns']) expect(copy[`copy.${name}`], name).toBe(original[`shop.${name}`]);
  });

  it('imports with upsert and merge modes, and exports CSV with a query, sort and limit', async () => {
    const file = join(work.path, 'changes.json');
    // Two known customers changed (matched by email), one new.
    writeFileSync(file, ['{"email": "c1@example.com", "tier": "platinum"}', '{"email": "c2@example.com", "tier": "silver"}', '{"email": "new@example.com", "tier": "basic"}'].join('\n'));
    const customers = client.db('shop').collection('customers');
    const c1 = await customers.findOne({ email: 'c1@example.com' });
    ok(await runTool('mongoimport', ['--uri', uri, '--db', 'shop', '--collection', 'customers', '--mode=merge', '--upsertFields=email', `--file=${file}`]));
    // merge keeps the other fields of a matched document and sets the given ones.
    expect(await customers.findOne({ email: 'c1@example.com' })).toEqual({ ...c1, tier: 'platinum' });
    expect(await customers.countDocuments()).toBe(251);
    ok(await runTool('mongoimport', ['--uri', uri, '--db', 'shop', '--collection', 'customers', '--mode=upsert', '--upsertFields=email', `--file=${file}`]));
    // upsert replaces a matched document whole (its _id kept).
    expect(await customers.findOne({ email: 'c2@example.com' }, { projection: { _id: 0 } })).toEqual({ email: 'c2@example.com', tier: 'silver' });
    expect(await customers.countDocuments()).toBe(251);
    const csv = join(work.path, 'gold.csv');
    ok(await runTool('mongoexport', ['--uri', uri, '--db', 'shop', '--collection', 'customers', '--type=csv', '--fields=name,email,visits', '--query={"tier": "gold"}', '--sort={"visits": -1}', '--limit=3', `--out=${csv}`]));
    expect(readFileSync(csv, 'utf8').trim().split('\n')).toEqual(['name,email,visits', 'customer 249,c249@example.com,249', 'customer 246,c246@example.com,246', 'customer 243,c243@example.com,243']);
  });

  it('round-trips documents near the 16 MB limit and batches of thousands of small ones', async () => {
    const blobs = client.db('big').collection<AnyDoc>('blobs');
    const near = 16 * 1024 * 1024 - 1024;
    await blobs.insertOne({ _id: 'largest', data: new Binary(Buffer.alloc(near, 7)) });
    for (let i = 0; i < 4; i++) await blobs.insertOne({ _id: `mb-${i}`, data: new Binary(Buffer.alloc(4 * 1024 * 1024, i)) });
    await client.db('big').collection('small').insertMany(Array.from({ length: 20_000 }, (_, i) => ({ i: new Int32(i), s: `row ${i}` })));
    // The documents' exact BSON, hashed (Extended JSON of 32 MB of binary would be slow to compare).
    const digest = async () => {
      const out: Record<string, string> = {};
      for (const name of ['blobs', 'small']) {
        const hash = createHash('sha256');
        for (const doc of await client.db('big').collection(name).find({}).sort({ _id: 1 }).toArray()) hash.update(BSON.serialize(doc));
        out[name] = hash.digest('hex');
      }
      return out;
    };
    const before = await digest();
    const archive = join(work.path, 'big.archive');
    ok(await runTool('mongodump', ['--uri', uri, '--db', 'big', `--archive=${archive}`]));
    await client.db('big').dropDatabase();
    const restore = await runTool('mongorestore', ['--uri', uri, `--archive=${archive}`]);
    ok(restore);
    expect(restore.stderr).toContain('20005 document(s) restored successfully. 0 document(s) failed to restore.');
    expect(await digest()).toEqual(before);
    expect(await client.db('big').collection('blobs').countDocuments()).toBe(5);
    await client.db('big').dropDatabase();
  }, 120_000);

  it('moves a collection with mongoexport and mongoimport in canonical Extended JSON', async () => {
    const file = join(work.path, 'orders.json');
    ok(await runTool('mongoexport', ['--uri', uri, '--db', 'shop', '--collection', 'orders', '--jsonFormat=canonical', `--out=${file}`]));
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(3);
    ok(await runTool('mongoimport', ['--uri', uri, '--db', 'copy', '--collection', 'orders', `--file=${file}`]));
    const original = await snapshot(['shop']);
    const copy = await snapshot(['copy']);
    expect(copy['copy.orders']).toBe(original['shop.orders']);
  });

  it('restores a dump as MongoDB writes it (collection UUIDs, options, views) and refuses an index it cannot build', async () => {
    // A dump directory as mongodump writes it from MongoDB 7: metadata with the collection's UUID, its
    // options and index versions; a view beside the collection.
    const out = join(work.path, 'from-mongodb', 'legacy');
    mkdirSync(out, { recursive: true });
    const docs = [{ _id: new ObjectId(), sku: 'a', price: Decimal128.fromString('1.50'), added: new Date('2023-05-01T00:00:00Z') }, { _id: new ObjectId(), sku: 'b', price: Decimal128.fromString('2.25'), added: new Date('2023-05-02T00:00:00Z') }];
    writeFileSync(join(out, 'products.bson'), Buffer.concat(docs.map((doc) => BSON.serialize(doc))));
    const productIndexes = [
      { v: new Int32(2), key: { _id: new Int32(1) }, name: '_id_' },
      { v: new Int32(2), key: { sku: new Int32(1) }, name: 'sku_1', unique: true },
    ];
    writeFileSync(join(out, 'products.metadata.json'), EJSON.stringify({ indexes: productIndexes, uuid: '6f1c2b3a4d5e4f60a1b2c3d4e5f60718', collectionName: 'products', type: 'collection', options: {} }, { relaxed: false }));
    writeFileSync(join(out, 'cheap.metadata.json'), EJSON.stringify({ options: { viewOn: 'products', pipeline: [{ $match: { price: { $lt: Decimal128.fromString('2') } } }] }, uuid: '', collectionName: 'cheap', type: 'view', indexes: [] }, { relaxed: false }));
    writeFileSync(join(out, 'cheap.bson'), Buffer.alloc(0));
    const restore = await runTool('mongorestore', ['--uri', uri, join(work.path, 'from-mongodb')]);
    ok(restore);
    expect(EJSON.stringify(await client.db('legacy').collection('products').find({}).sort({ _id: 1 }).toArray(), { relaxed: false })).toBe(EJSON.stringify(docs, { relaxed: false }));
    expect((await client.db('legacy').collection('products').listIndexes().toArray()).map(({ v: _v, ...index }) => index)).toEqual([{ key: { _id: 1 }, name: '_id_' }, { key: { sku: 1 }, name: 'sku_1', unique: true }]);
    expect(await client.db('legacy').collection('cheap').find({}, { projection: { _id: 0, sku: 1 } }).toArray()).toEqual([{ sku: 'a' }]);
    expect(await client.db('legacy').listCollections({ name: 'cheap' }).toArray()).toMatchObject([{ type: 'view', options: { viewOn: 'products' } }]);

    // The datastore's collections have no UUIDs: --preserveUUID (applyOps) is refused, not ignored.
    const uuids = await runTool('mongorestore', ['--uri', uri, '--drop', '--preserveUUID', '--nsInclude', 'legacy.products', join(work.path, 'from-mongodb')]);
    expect(uuids.code).not.toBe(0);
    expect(uuids.stderr).toContain("no such command: 'applyOps'");

    // An index option the datastore cannot honour fails the restore loudly, naming it; the documents are in.
    productIndexes.push({ v: new Int32(2), key: { added: new Int32(1) }, name: 'added_1', weights: { sku: new Int32(1) } } as never);
    writeFileSync(join(out, 'products.metadata.json'), EJSON.stringify({ indexes: productIndexes, uuid: '6f1c2b3a4d5e4f60a1b2c3d4e5f60718', collectionName: 'products', type: 'collection', options: {} }, { relaxed: false }));
    rmSync(join(out, 'cheap.metadata.json'));
    rmSync(join(out, 'cheap.bson'));
    const refused = await runTool('mongorestore', ['--uri', uri, '--drop', join(work.path, 'from-mongodb')]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/index option 'weights' is not supported/);
    expect(await client.db('legacy').collection('products').countDocuments()).toBe(2);
    await client.db('legacy').dropDatabase();
  });

  it("refuses a full dump's MongoDB users and roles with what to do, and restores the rest without them", async () => {
    // A full mongodump of a MongoDB deployment holds admin.system.users/roles/version beside the data.
    const out = join(work.path, 'full');
    mkdirSync(join(out, 'admin'), { recursive: true });
    mkdirSync(join(out, 'inventory'), { recursive: true });
    writeFileSync(join(out, 'admin', 'system.version.bson'), BSON.serialize({ _id: 'authSchema', currentVersion: new Int32(5) }));
    writeFileSync(join(out, 'admin', 'system.users.bson'), BSON.serialize({ _id: 'admin.bob', user: 'bob', db: 'admin', credentials: {}, roles: [{ role: 'root', db: 'admin' }] }));
    writeFileSync(join(out, 'inventory', 'parts.bson'), BSON.serialize({ _id: new Int32(1), name: 'bolt' }));
    writeFileSync(join(out, 'inventory', 'parts.metadata.json'), EJSON.stringify({ indexes: [{ v: new Int32(2), key: { _id: new Int32(1) }, name: '_id_' }], collectionName: 'parts', type: 'collection', options: {} }, { relaxed: false }));
    const refused = await runTool('mongorestore', ['--uri', uri, out]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("keeps no MongoDB users or roles (authSchemaVersion): leave them out of the restore (mongorestore --nsExclude 'admin.system.*')");
    expect(await client.db('inventory').collection('parts').countDocuments()).toBe(0);
    ok(await runTool('mongorestore', ['--uri', uri, '--nsExclude', 'admin.system.*', out]));
    expect(await client.db('inventory').collection('parts').find().toArray()).toEqual([{ _id: 1, name: 'bolt' }]);
    expect(await client.db('admin').listCollections().toArray()).toEqual([]);
    await client.db('inventory').dropDatabase();
  });

  it('dumps what a query selects and restores without indexes when told', async () => {
    const out = join(work.path, 'query');
    ok(await runTool('mongodump', ['--uri', uri, '--db', 'shop', '--collection', 'customers', '--query', '{"tier": "gold", "visits": {"$gte": 100}}', '--out', out]));
    const expected = await client.db('shop').collection('customers').find({ tier: 'gold', visits: { $gte: 100 } }).sort({ _id: 1 }).toArray();
    expect(expected.length).toBe(50);
    ok(await runTool('mongorestore', ['--uri', uri, '--noIndexRestore', '--nsFrom', 'shop.customers', '--nsTo', 'copy.gold', out]));
    const copied = await client.db('copy').collection('gold').find({}).sort({ _id: 1 }).toArray();
    expect(EJSON.stringify(copied, { relaxed: false })).toBe(EJSON.stringify(expected, { relaxed: false }));
    expect((await client.db('copy').collection('gold').listIndexes().toArray()).map((i) => i.name)).toEqual(['_id_']);
  });

  it("moves one cluster's data into another named by the user name (`tessera+<cluster>`), the tools' appName being fixed", async () => {
    const port = datastore.nest.get(DatastoreWireService).port ?? 0;
    const clusterUri = (cluster: string) => `mongodb://tessera+${cluster}:${password}@127.0.0.1:${port}/?directConnection=true`;
    const appClient = async (cluster: string) => {
      const c = new MongoClient(`${uri}&appName=${cluster}`);
      await c.connect();
      return c;
    };
    const source = await appClient('AtlasCluster');
    const target = await appClient('TargetCluster');
    try {
      await source.db('todo').collection('items').insertMany([{ text: 'one', done: false }, { text: 'two', done: true }]);
      await source.db('todo').collection('items').createIndex({ done: 1, text: 1 }, { name: 'by_done' });
      const archive = join(work.path, 'cluster.archive');
      ok(await runTool('mongodump', ['--uri', clusterUri('AtlasCluster'), '--db', 'todo', `--archive=${archive}`]));
      ok(await runTool('mongorestore', ['--uri', clusterUri('TargetCluster'), `--archive=${archive}`]));
      const read = async (c: MongoClient) => EJSON.stringify(await c.db('todo').collection('items').find({}).sort({ _id: 1 }).toArray(), { relaxed: false });
      expect(await read(target)).toBe(await read(source));
      expect((await target.db('todo').collection('items').listIndexes().toArray()).map((i) => i.name)).toEqual(['_id_', 'by_done']);
      // Nothing of it reached the default cluster (whatever the datastore's setting names it).
      expect(await client.db('todo').collection('items').countDocuments()).toBe(0);
    } finally {
      await source.close();
      await target.close();
    }
  });

  it('dumps and restores over TLS (TESSERA_DATASTORE_TLS_CERT/KEY), and gets nowhere without it', async () => {
    const cert = join(work.path, 'cert.pem');
    const key = join(work.path, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    const secure = await startTestHost({ services: ['datastore'], settings: { TESSERA_DATASTORE_PORT: '0', TESSERA_DATASTORE_PASSWORD: password, TESSERA_DATASTORE_TLS_CERT: cert, TESSERA_DATASTORE_TLS_KEY: key } });
    const port = secure.nest.get(DatastoreWireService).port ?? 0;
    // No serverSelectionTimeoutMS: mongodump 100.8.0 given one in the URI waits forever for a server it cannot reach.
    const plainUri = `mongodb://tessera:${password}@127.0.0.1:${port}/?directConnection=true`;
    const tlsUri = `${plainUri}&tls=true&tlsCAFile=${encodeURIComponent(cert)}`;
    const secureClient = new MongoClient(tlsUri);
    try {
      await secureClient.connect();
      await secureClient.db('vault').collection('notes').insertMany(Array.from({ length: 150 }, (_, i) => ({ i: new Int32(i), at: new Date(i), amount: Decimal128.fromString(`${i}.01`) })));
      const out = join(work.path, 'tls');
      ok(await runTool('mongodump', ['--uri', tlsUri, '--db', 'vault', '--gzip', '--out', out]));
      ok(await runTool('mongorestore', ['--uri', tlsUri, '--gzip', '--nsFrom', 'vault.*', '--nsTo', 'vault2.*', out]));
      const read = async (db: string) => EJSON.stringify(await secureClient.db(db).collection('notes').find({}).sort({ _id: 1 }).toArray(), { relaxed: false });
      expect(await read('vault2')).toBe(await read('vault'));
      // Plain TCP to the TLS server gets no session (the tool gives up after its 30 s server selection).
      const plain = await runTool('mongodump', ['--uri', plainUri, '--db', 'vault', '--out', join(work.path, 'tls-plain')], 90_000);
      expect(plain.code).not.toBe(0);
      expect(plain.stderr).toContain('server selection timeout');
    } finally {
      await secureClient.close();
      await secure.close();
    }
  }, 180_000);

  it('refuses the tools without the credentials or with a wrong password', async () => {
    const port = datastore.nest.get(DatastoreWireService).port ?? 0;
    const anonymous = await runTool('mongodump', ['--uri', `mongodb://127.0.0.1:${port}/?directConnection=true`, '--out', join(work.path, 'anonymous')]);
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/requires authentication|Unauthorized/);
    const wrong = await runTool('mongorestore', ['--uri', `mongodb://tessera:wrong-password@127.0.0.1:${port}/?directConnection=true`, join(work.path, 'anonymous')]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/Authentication failed/);
  });

  it('refuses a dump whose documents are not BSON, naming the file, and leaves the database as it was', async () => {
    const out = join(work.path, 'corrupt');
    ok(await runTool('mongodump', ['--uri', uri, '--db', 'shop', '--collection', 'returns', '--out', out]));
    writeFileSync(join(out, 'shop', 'returns.bson'), Buffer.from([0xff, 0xff, 0xff, 0x7f, 1, 2, 3]));
    const before = await snapshot(['shop']);
    const restore = await runTool('mongorestore', ['--uri', uri, out]);
    expect(restore.code).not.toBe(0);
    expect(restore.stderr).toContain('returns.bson');
    expect(await snapshot(['shop'])).toEqual(before);
  });
});
