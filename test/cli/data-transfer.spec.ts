import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { BSON, Binary, Decimal128, type Document, Double, EJSON, Int32, Long, ObjectId } from 'bson';
import { freePort, makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import { MongoClient, MongoServerError } from 'mongodb';
import * as Realm from 'realm-web';
import { tessera } from './tessera-cli';

const CLI_TIMEOUT_MS = 120_000;

/** Every document of a collection, `_id` order, as canonical Extended JSON (types included). */
async function contents(client: MongoClient, db: string, coll: string): Promise<string[]> {
  const docs = await client.db(db).collection(coll).find({}, { sort: { _id: 1 }, promoteValues: false }).toArray();
  return docs.map((doc) => EJSON.stringify(doc, { relaxed: false }));
}

async function indexes(client: MongoClient, db: string, coll: string): Promise<Document[]> {
  return (await client.db(db).collection(coll).listIndexes().toArray()).map(({ name, key, unique, sparse }) => ({ name, key, unique: unique === true, sparse: sparse === true }));
}

// `npm start` serves its embedded clusters over the wire protocol (here with SCRAM-SHA-256), and `tessera data
// export|import` moves an app's collections through it in mongodump's directory format (plain, gzip) and as
// Extended JSON lines: a round trip of several collections, their value types, indexes and a view, with the
// CLI run as a subprocess against the real server.
describe('the standalone wire server and tessera data export/import', () => {
  const dataDir = makeTempDir('tessera-data-transfer-');
  const work = makeTempDir('tessera-data-transfer-work-');
  const datastorePassword = 'data-transfer-secret-0123';
  let server: ServerProcess;
  let port: number;
  let env: Record<string, string>;
  let appId: string;
  let client: MongoClient;
  const original: Record<string, string[]> = {};

  const wire = (cluster: string, credentials = `tessera:${datastorePassword}@`) => new MongoClient(`mongodb://${credentials}127.0.0.1:${port}/?directConnection=true&appName=${cluster}&serverSelectionTimeoutMS=3000`);

  beforeAll(async () => {
    port = await freePort();
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'data-transfer-admin', TESSERA_DATASTORE_PORT: String(port), TESSERA_DATASTORE_PASSWORD: datastorePassword } });
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config'), TESSERA_DATASTORE_URI: `mongodb://127.0.0.1:${port}/?directConnection=true`, TESSERA_DATASTORE_PASSWORD: datastorePassword };
    const login = await tessera(['login', '--url', server.url, '--username', 'admin', '--password', 'data-transfer-admin'], env);
    expect(login.code, login.stderr).toBe(0);
    appId = /app "todo": app id (\S+)/.exec(server.stdout())![1];
    client = wire('Cluster0');
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await server?.stop();
    dataDir.remove();
    work.remove();
  });

  it('prints the wire server in the banner, and serves the example app its own cluster to an authenticated driver', async () => {
    expect(server.stdout()).toContain(`datastore (MongoDB wire protocol): mongodb://tessera:<password>@127.0.0.1:${port}/?directConnection=true&appName=<cluster name>`);
    // A document written through the wire is the app's: a user of the example app reads it under its rules.
    const app = new Realm.App({ id: appId, baseUrl: server.url });
    const user = await app.logIn(Realm.Credentials.anonymous());
    await client.db('todo').collection('items').insertOne({ _id: new ObjectId(), owner_id: user.id, summary: 'written through the wire', isComplete: false });
    const mine = await user.mongoClient('mongodb-atlas').db('todo').collection('items').find({ owner_id: user.id });
    expect(mine.map((item) => item.summary)).toEqual(['written through the wire']);
    // The example app declares an index on owner_id: deployed at first start, used by the user's query.
    const explained = await client.db('todo').collection('items').find({ owner_id: user.id }).explain('executionStats');
    expect(explained.queryPlanner.winningPlan.inputStage).toMatchObject({ stage: 'IXSCAN', indexName: 'owner_id_1' });
    expect(explained.executionStats.totalDocsExamined).toBe(1);
  });

  it('refuses an unauthenticated command and a wrong password', async () => {
    const anonymous = wire('Cluster0', '');
    try {
      const refused = await anonymous.db('todo').collection('items').findOne({}).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(MongoServerError);
      expect((refused as MongoServerError).code).toBe(13);
    } finally {
      await anonymous.close();
    }
    const wrong = wire('Cluster0', 'tessera:not-the-password-at-all@');
    try {
      await expect(wrong.connect()).rejects.toThrow(/Authentication failed/);
    } finally {
      await wrong.close();
    }
  });

  it('exports the app\'s collections in mongodump\'s format and imports them into another cluster unchanged', async () => {
    const items = client.db('todo').collection('items');
    const docs: Document[] = [];
    for (let i = 0; i < 2500; i++) {
      docs.push({
        _id: i % 5 === 0 ? new ObjectId() : i,
        owner_id: `user-${i % 25}`,
        summary: `item ${i}`,
        isComplete: i % 2 === 0,
        count: new Int32(i),
        big: Long.fromString(`${9_000_000_000 + i}`),
        ratio: new Double(i + 0.5),
        price: Decimal128.fromString(`${i}.99`),
        due: new Date(Date.UTC(2026, 0, 1 + (i % 300))),
        blob: new Binary(Buffer.from([i % 256, 1, 2])),
        nested: { tags: [`t${i % 7}`, `t${(i + 3) % 7}`], depth: { level: i % 3 } },
        ...(i % 10 === 0 ? { note: null } : {}),
      });
    }
    await items.insertMany(docs);
    await items.createIndex({ due: -1 }, { sparse: true });
    const lists = client.db('todo').collection('lists');
    await lists.insertMany(Array.from({ length: 40 }, (_, i) => ({ _id: new ObjectId(), name: `list ${i}`, owner_id: `user-${i % 25}` })));
    await lists.createIndex({ name: 1 }, { unique: true, name: 'list_name' });
    await lists.createIndex({ owner_id: 1, name: -1 });
    await client.db('todo').collection<{ _id: string; name: string }>('users').insertOne({ _id: 'user-1', name: 'Ada' });
    await client.db('todo').createCollection('open_items', { viewOn: 'items', pipeline: [{ $match: { isComplete: false } }] });
    for (const coll of ['items', 'lists', 'users']) original[coll] = await contents(client, 'todo', coll);

    const out = join(work.path, 'dump');
    const exported = await tessera(['data', 'export', '--remote', appId, '--out', out], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toContain(`todo.items: ${original.items.length} document(s), 3 index(es)`);
    expect(exported.stdout).toContain(`exported 3 collection(s), ${original.items.length + 40 + 1} document(s) of cluster "Cluster0"`);
    // mongodump's layout: <db>/<collection>.bson and .metadata.json (the view only with rules would be listed;
    // it has none in the example app, so it is not the app's and stays out).
    expect(readdirSync(join(out, 'todo')).sort()).toEqual(['items.bson', 'items.metadata.json', 'lists.bson', 'lists.metadata.json', 'users.bson', 'users.metadata.json']);
    const metadata = EJSON.parse(readFileSync(join(out, 'todo', 'lists.metadata.json'), 'utf8'), { relaxed: false }) as Document;
    expect(Object.keys(metadata)).toEqual(['indexes', 'collectionName', 'type']);
    expect(metadata.collectionName).toBe('lists');
    expect(metadata.indexes.map((index: Document) => index.name)).toEqual(['_id_', 'list_name', 'owner_id_1_name_-1']);
    expect(readFileSync(join(out, 'todo', 'lists.metadata.json'), 'utf8')).toContain('"v":{"$numberInt":"2"}');
    // The .bson file is the documents' BSON one after another.
    const bytes = readFileSync(join(out, 'todo', 'users.bson'));
    expect(bytes.readInt32LE(0)).toBe(bytes.length);
    expect(BSON.deserialize(bytes)).toEqual({ _id: 'user-1', name: 'Ada' });

    const imported = await tessera(['data', 'import', '--cluster', 'Restored', '--dir', out], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toContain(`todo.items: ${original.items.length} document(s) restored, 2 index(es)`);
    const restored = wire('Restored');
    try {
      for (const coll of ['items', 'lists', 'users']) {
        expect(await contents(restored, 'todo', coll)).toEqual(original[coll]);
        expect(await indexes(restored, 'todo', coll)).toEqual(await indexes(client, 'todo', coll));
      }
      // Again without --drop: every document is a duplicate, reported, nothing doubled; with --drop: clean.
      const again = await tessera(['data', 'import', '--cluster', 'Restored', '--dir', out, '--db', 'todo', '--collection', 'users'], env);
      expect(again.code).toBe(1);
      expect(again.stdout).toMatch(/duplicate key/i);
      expect(await restored.db('todo').collection('users').countDocuments()).toBe(1);
      const dropped = await tessera(['data', 'import', '--cluster', 'Restored', '--dir', out, '--db', 'todo', '--collection', 'users', '--drop'], env);
      expect(dropped.code, dropped.stderr).toBe(0);
      expect(await contents(restored, 'todo', 'users')).toEqual(original.users);
    } finally {
      await restored.close();
    }
  }, CLI_TIMEOUT_MS);

  it('round-trips a whole cluster with --gzip, views included, and as Extended JSON lines', async () => {
    const gz = join(work.path, 'dump-gz');
    const exported = await tessera(['data', 'export', '--cluster', 'Cluster0', '--db', 'todo', '--out', gz, '--gzip', '--json'], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect((JSON.parse(exported.stdout) as { collections: unknown[] }).collections).toHaveLength(4);
    expect(existsSync(join(gz, 'todo', 'items.bson.gz'))).toBe(true);
    expect(existsSync(join(gz, 'todo', 'open_items.bson.gz'))).toBe(false);
    const viewMeta = EJSON.parse(gunzipSync(readFileSync(join(gz, 'todo', 'open_items.metadata.json.gz'))).toString('utf8')) as Document;
    expect(viewMeta).toMatchObject({ options: { viewOn: 'items' }, indexes: [], collectionName: 'open_items', type: 'view' });

    const json = join(work.path, 'dump-json');
    expect((await tessera(['data', 'export', '--remote', appId, '--out', json, '--type', 'json'], env)).code).toBe(0);
    const lines = readFileSync(join(json, 'todo', 'items.json'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(original.items.length);
    expect(lines.filter((line) => line.includes('"$numberDecimal"'))).toHaveLength(2500);

    for (const [cluster, dir, type] of [['FromGzip', gz, 'bson'], ['FromJson', json, 'json']] as const) {
      const imported = await tessera(['data', 'import', '--cluster', cluster, '--dir', dir, '--type', type], env);
      expect(imported.code, `${imported.stdout}\n${imported.stderr}`).toBe(0);
      const restored = wire(cluster);
      try {
        for (const coll of ['items', 'lists', 'users']) {
          expect(await contents(restored, 'todo', coll)).toEqual(original[coll]);
          expect(await indexes(restored, 'todo', coll)).toEqual(await indexes(client, 'todo', coll));
        }
        if (type === 'bson') expect(await restored.db('todo').collection('open_items').countDocuments()).toBe(await client.db('todo').collection('open_items').countDocuments());
      } finally {
        await restored.close();
      }
    }
  }, CLI_TIMEOUT_MS);

  it('lists the indexes, marking those the app declares', async () => {
    const listed = await tessera(['data', 'indexes', '--remote', appId, '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const { indexes: rows } = JSON.parse(listed.stdout) as { indexes: { namespace: string; name: string; declared: boolean; sparse: boolean }[] };
    expect(rows.filter((row) => row.namespace === 'todo.items').map(({ name, declared, sparse }) => ({ name, declared, sparse }))).toEqual([
      { name: '_id_', declared: false, sparse: false },
      { name: 'owner_id_1', declared: true, sparse: false },
      { name: 'due_-1', declared: false, sparse: true },
    ]);
    const text = await tessera(['data', 'indexes', '--remote', appId], env);
    expect(text.stdout).toMatch(/todo\.lists\s+list_name\s+\{"name":1\}\s+unique\s+no/);
  }, CLI_TIMEOUT_MS);

  it('refuses a wrong datastore password, a bad --type and a missing directory with clear exit codes', async () => {
    const wrong = await tessera(['data', 'indexes', '--remote', appId], { ...env, TESSERA_DATASTORE_PASSWORD: 'not-the-password-at-all' });
    expect(wrong.code).toBe(8);
    expect(wrong.stderr).toMatch(/cannot reach the cluster "Cluster0".*Authentication failed/);
    expect(wrong.stderr).not.toContain('not-the-password-at-all');
    const type = await tessera(['data', 'export', '--remote', appId, '--out', join(work.path, 'x'), '--type', 'csv'], env);
    expect(type.code).toBe(2);
    const missing = await tessera(['data', 'import', '--cluster', 'X', '--dir', join(work.path, 'nope')], env);
    expect(missing.code).toBe(4);
  }, CLI_TIMEOUT_MS);
});
