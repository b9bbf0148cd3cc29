import { type AppConfig, emptyApp, writeAppFiles } from '@tessera/app-config';
import {
  columnOf,
  encodeChangeset,
  type Instruction,
  ObjectStore,
  parseChangeset,
  type PrimaryKey,
  type ServerMessage,
} from '@tessera/sync-protocol';
import { eventually } from '@tessera/testing';
import { ObjectId } from 'bson';
import { AdminSession } from '../admin-api/admin-session';
import { Realm, realmApp } from '../client-api/realm-helpers';
import { partitionSync, type SyncHost, startSyncHost } from './sync-host';
import { connect, type SyncTestClient, syncUrl } from './sync-test-client';

// Issue 16 item 3 (spec 2.6): the translation between changesets and the documents of the synced
// collections, end to end: the real host, real WebSockets, clients built on the protocol library (their
// state is the library's strict ObjectStore, so every server changeset must apply as realm-core applies
// it), and remote data access through realm-web for the collection side.

const adminPassword = 'sync-translation-password';
const everyone = { roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] };


/** The schema a Dog client writes first: scalars, a list, a set, a dictionary and an embedded address. */
const dogSchema: Instruction[] = [
  { type: 'AddTable', table: 'Dog', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'ObjectId', pkNullable: false } },
  { type: 'AddTable', table: 'Address', spec: { kind: 'Embedded' } },
  columnOf('Address', 'street', 'String'),
  columnOf('Dog', '_partition', 'String', { nullable: true }),
  columnOf('Dog', 'name', 'String'),
  columnOf('Dog', 'age', 'Int'),
  columnOf('Dog', 'toys', 'String', { collectionType: 'List' }),
  columnOf('Dog', 'tags', 'String', { collectionType: 'Set' }),
  columnOf('Dog', 'marks', 'Int', { collectionType: 'Dictionary', keyType: 'String' }),
  columnOf('Dog', 'address', 'Link', { nullable: true, linkTargetTable: 'Address' }),
];

const oid = (hex: string): PrimaryKey => ({ type: 'ObjectId', value: hex });
const set = (object: PrimaryKey, field: string, value: Extract<Instruction, { type: 'Update' }>['value'], path: (string | number)[] = []): Instruction => ({
  type: 'Update',
  table: 'Dog',
  object,
  field,
  path,
  value,
  isDefault: false,
  priorSize: 0,
});

/** A sync client on the protocol engine: one session, its objects in an ObjectStore, versions tracked. */
class EngineClient {
  readonly store = new ObjectStore();
  readonly downloaded: Instruction[][] = [];
  serverVersion = 0;
  clientVersion = 0;
  fileIdent = 0;
  private readonly session = 1;
  /** Server messages handled so far (this client reads `socket.received` itself, in order). */
  private seen = 0;

  private constructor(readonly socket: SyncTestClient) {}

  static async open(host: SyncHost, clientAppId: string, partition: string): Promise<EngineClient> {
    const client = new EngineClient(await connect(syncUrl(host.url, clientAppId, (await host.login(clientAppId)).access)));
    client.socket.send({ type: 'bind', sessionIdent: client.session, path: partition, token: '', needClientFileIdent: true, isSubserver: false });
    const ident = await client.nextMessage();
    if (ident.type !== 'ident') throw new Error(`expected IDENT, got ${ident.type}`);
    client.fileIdent = ident.clientFileIdent;
    client.socket.send({ type: 'ident', sessionIdent: client.session, clientFileIdent: ident.clientFileIdent, clientFileIdentSalt: ident.clientFileIdentSalt, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n });
    client.absorb(await client.nextMessage());
    return client;
  }

  private nextMessage(): Promise<ServerMessage> {
    return eventually(() => {
      for (;;) {
        const message = this.socket.received[this.seen];
        if (!message) throw new Error('no server message yet');
        this.seen++;
        if (message.type !== 'log_message') return message;
      }
    });
  }

  private absorb(message: ServerMessage): void {
    if (message.type !== 'download') throw new Error(`unexpected ${message.type}: ${JSON.stringify(message, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
    for (const changeset of message.changesets) {
      const { instructions } = parseChangeset(changeset.changeset);
      this.store.applyChangeset(instructions);
      this.downloaded.push(instructions);
    }
    this.serverVersion = message.downloadServerVersion;
  }

  /** Reads every server message that arrived; session errors come back instead of being applied. */
  pump(): ServerMessage[] {
    const others: ServerMessage[] = [];
    // A download that does not apply (as realm-core's applier would refuse it) fails the test, every time.
    for (let message = this.socket.received[this.seen]; message; message = this.socket.received[this.seen]) {
      if (message.type === 'download') this.absorb(message);
      else if (message.type !== 'log_message') others.push(message);
      this.seen++;
    }
    return others;
  }

  /** Commits a local changeset (applied here first, as a client does) and uploads it. */
  upload(instructions: Instruction[]): void {
    this.store.applyChangeset(instructions);
    this.clientVersion++;
    this.socket.send({
      type: 'upload',
      sessionIdent: this.session,
      progressClientVersion: this.clientVersion,
      progressServerVersion: this.serverVersion,
      lockedServerVersion: this.serverVersion,
      changesets: [{ clientVersion: this.clientVersion, lastIntegratedServerVersion: this.serverVersion, originTimestamp: Date.now() - Date.UTC(2015, 0, 1), originFileIdent: 0, changeset: encodeChangeset({ instructions }) }],
    });
  }

  /** Waits until `probe` holds of the client's state (downloads applied as they come). */
  until<T>(probe: (store: ObjectStore) => T): Promise<T> {
    return eventually(() => {
      this.pump();
      return probe(this.store);
    });
  }

  close(): void {
    this.socket.close();
  }
}

/** A collection of the app's linked cluster, through realm-web's remote data access. */
async function collection(url: string, clientAppId: string, db: string, name: string) {
  const user = await realmApp(url, clientAppId).logIn(Realm.Credentials.anonymous(false));
  return user.mongoClient('mongodb-atlas').db(db).collection<Record<string, unknown> & { _id: unknown }>(name);
}
type Collection = Awaited<ReturnType<typeof collection>>;

/**
 * The function runtime follows a new app's cluster within its reconcile interval (15 s): writes until the
 * feed is live, that is until an outside write reaches `client` (bound to partition "schema").
 */
async function untilFeedIsLive(client: EngineClient, dogs: Collection): Promise<void> {
  await eventually(
    async () => {
      const probe = new ObjectId();
      await dogs.insertOne({ _id: probe, _partition: 'schema', name: 'probe' });
      await eventually(() => {
        client.pump();
        return client.store.hasObject('Dog', oid(probe.toHexString()));
      }, { timeoutMs: 1_000 });
    },
    { timeoutMs: 30_000 },
  );
}

describe('sync translation between changesets and documents', () => {
  let host: SyncHost;
  let devApp = '';
  let strictApp = '';
  let dogs: Collection;

  beforeAll(async () => {
    host = await startSyncHost({ settings: { TESSERA_ADMIN_PASSWORD: adminPassword, TESSERA_ALLOW_NEW_PARTITION_SYNC: 'true' } });
    const linked = (app: AppConfig, extra: Partial<AppConfig['services'][number]> = {}): void => {
      app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'sync-cluster' } }, defaultRule: everyone, collectionRules: [], rules: [], webhooks: [], ...extra });
    };
    devApp = await host.createApp('translation-dev', (app) => {
      linked(app);
      partitionSync(app, { read: true, write: true });
    });
    strictApp = await host.createApp('translation-strict', (app) => {
      linked(app, {
        collectionRules: [
          {
            database: 'pets',
            collection: 'cats',
            schema: { title: 'Cat', bsonType: 'object', required: ['_id', 'name'], properties: { _id: { bsonType: 'objectId' }, _partition: { bsonType: 'string' }, name: { bsonType: 'string' } } },
          },
        ],
      });
      partitionSync(app, { read: true, write: true });
      if (app.sync) app.sync.development_mode_enabled = false;
    });
    dogs = await collection(host.url, devApp, 'app', 'Dog');
    // Development mode: the first client's schema creates the Dog type (and its collection app.Dog).
    const first = await EngineClient.open(host, devApp, '"schema"');
    first.upload(dogSchema);
    await first.until(() => first.serverVersion >= 1);
    await untilFeedIsLive(first, dogs);
    first.close();
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it("writes a client's object to its type's collection: _id, partition key, list, set, dictionary, embedded object", async () => {
    const client = await EngineClient.open(host, devApp, '"p1"');
    const id = new ObjectId().toHexString();
    client.upload([
      ...dogSchema,
      { type: 'CreateObject', table: 'Dog', object: oid(id) },
      set(oid(id), 'name', { type: 'String', value: 'Rex' }),
      set(oid(id), 'age', { type: 'Int', value: 3 }),
      { type: 'ArrayInsert', table: 'Dog', object: oid(id), field: 'toys', path: [0], value: { type: 'String', value: 'ball' }, priorSize: 0 },
      { type: 'ArrayInsert', table: 'Dog', object: oid(id), field: 'toys', path: [1], value: { type: 'String', value: 'rope' }, priorSize: 1 },
      { type: 'SetInsert', table: 'Dog', object: oid(id), field: 'tags', path: [], value: { type: 'String', value: 'good' } },
      set(oid(id), 'marks', { type: 'Int', value: 9 }, ['speed']),
      set(oid(id), 'address', { type: 'ObjectValue' }),
      set(oid(id), 'address', { type: 'String', value: 'Main St' }, ['street']),
    ]);
    const doc = await eventually(async () => (await dogs.findOne({ _id: new ObjectId(id) })) ?? Promise.reject(new Error('not in the collection yet')));
    expect(doc).toMatchObject({ _partition: 'p1', name: 'Rex', toys: ['ball', 'rope'], tags: ['good'], address: { street: 'Main St' } });
    expect(Number(doc['age'])).toBe(3);
    expect(Number((doc['marks'] as Record<string, unknown>)['speed'])).toBe(9);

    // Later edits follow: a list element erased, a field changed; then the object deleted.
    client.upload([
      { type: 'ArrayErase', table: 'Dog', object: oid(id), field: 'toys', path: [0], priorSize: 2 },
      set(oid(id), 'name', { type: 'String', value: 'Rex II' }),
    ]);
    await eventually(async () => expect(await dogs.findOne({ _id: new ObjectId(id) })).toMatchObject({ name: 'Rex II', toys: ['rope'] }));
    client.upload([{ type: 'EraseObject', table: 'Dog', object: oid(id) }]);
    await eventually(async () => expect(await dogs.findOne({ _id: new ObjectId(id) })).toBeNull());
    client.close();
  });

  it('sends an insert made through remote data access to every client of its partition, and no echo of client writes', async () => {
    const a = await EngineClient.open(host, devApp, '"p2"');
    const b = await EngineClient.open(host, devApp, '"p2"');
    const inserted = new ObjectId();
    await dogs.insertOne({ _id: inserted, _partition: 'p2', name: 'Fido', age: 4, toys: ['stick'], address: { street: 'Elm' } });
    for (const client of [a, b]) {
      await client.until((store) => expect(store.read('Dog', oid(inserted.toHexString()), 'name')).toBe('"Fido"'));
      expect(client.store.read('Dog', oid(inserted.toHexString()), 'toys')).toEqual(['"stick"']);
      expect(client.store.read('Dog', oid(inserted.toHexString()), 'address', ['street'])).toBe('"Elm"');
    }

    // A's write reaches the collection; its change event must not come back to A as a server changeset.
    const written = new ObjectId().toHexString();
    a.upload([{ type: 'CreateObject', table: 'Dog', object: oid(written) }, set(oid(written), 'name', { type: 'String', value: 'Own' })]);
    await eventually(async () => expect(await dogs.findOne({ _id: new ObjectId(written) })).toMatchObject({ name: 'Own' }));
    // Change events are handled in order: once a later outside write reached A, an echo would have too.
    const sentinel = new ObjectId();
    await dogs.insertOne({ _id: sentinel, _partition: 'p2', name: 'Sentinel' });
    await a.until((store) => store.hasObject('Dog', oid(sentinel.toHexString())));
    const touching = a.downloaded.filter((instructions) => instructions.some((i) => 'object' in i && i.object.type === 'ObjectId' && i.object.value === written));
    expect(touching).toEqual([]);
    await b.until((store) => expect(store.read('Dog', oid(written), 'name')).toBe('"Own"'));
    a.close();
    b.close();
  });

  it("moves an object between partitions when its partition value changes: it leaves the old partition's clients", async () => {
    const oldSide = await EngineClient.open(host, devApp, '"p3"');
    const newSide = await EngineClient.open(host, devApp, '"p4"');
    const id = new ObjectId();
    await dogs.insertOne({ _id: id, _partition: 'p3', name: 'Mover' });
    await oldSide.until((store) => store.hasObject('Dog', oid(id.toHexString())));
    await dogs.updateOne({ _id: id }, { $set: { _partition: 'p4', age: 7 } });
    await oldSide.until((store) => !store.hasObject('Dog', oid(id.toHexString())));
    await newSide.until((store) => expect(store.read('Dog', oid(id.toHexString()), 'name')).toBe('"Mover"'));
    expect(newSide.store.read('Dog', oid(id.toHexString()), 'age')).toBe('Int(7)');
    // A delete reaches the partition the object is in now.
    await dogs.deleteOne({ _id: id });
    await newSide.until((store) => !store.hasObject('Dog', oid(id.toHexString())));
    oldSide.close();
    newSide.close();
  });

  it('puts a document without a valid partition value (missing, or of another type) in the null partition of an optional key', async () => {
    // One there before the partition is first opened (seeded), the others written while a client has it open.
    const seeded = new ObjectId();
    await dogs.insertOne({ _id: seeded, _partition: true, name: 'Flag' });
    const nullSide = await EngineClient.open(host, devApp, 'null');
    expect(nullSide.store.hasObject('Dog', oid(seeded.toHexString()))).toBe(true);
    const missing = new ObjectId();
    const wrongType = new ObjectId();
    await dogs.insertOne({ _id: missing, name: 'Nobody' });
    await dogs.insertOne({ _id: wrongType, _partition: 12, name: 'Numbered' });
    await nullSide.until((store) => store.hasObject('Dog', oid(missing.toHexString())) && store.hasObject('Dog', oid(wrongType.toHexString())));
    nullSide.close();
  });

  it('seeds a partition opened for the first time from the documents already there, in batches, skipping what does not fit', async () => {
    const docs = Array.from({ length: 1_100 }, (_, i) => ({ _id: new ObjectId(), _partition: 'p5', name: `dog ${i}`, toys: [`toy ${i}`] }));
    await dogs.insertMany(docs);
    const misfit = new ObjectId();
    await dogs.insertOne({ _id: misfit, _partition: 'p5', name: 42 });
    const client = await EngineClient.open(host, devApp, '"p5"');
    await client.until((store) => expect(store.objectCount('Dog')).toBe(1_100));
    expect(client.store.read('Dog', oid(docs[1_099]?._id.toHexString() ?? ''), 'toys')).toEqual(['"toy 1099"']);
    expect(client.store.hasObject('Dog', oid(misfit.toHexString()))).toBe(false);
    // Seeded in pages of 500 documents: three server changesets, not one holding the whole partition. (The
    // inserts' own change events may follow them: they set the same objects again.)
    const creates = client.downloaded.map((instructions) => instructions.filter((i) => i.type === 'CreateObject').length).filter((n) => n > 0);
    expect(creates.slice(0, 3)).toEqual([500, 500, 100]);
    client.close();
  });

  it('refuses an upload that writes another partition value with bad changeset (212), and nothing reaches the collection', async () => {
    const client = await EngineClient.open(host, devApp, '"p6"');
    const id = new ObjectId().toHexString();
    client.upload([...dogSchema, { type: 'CreateObject', table: 'Dog', object: oid(id) }, set(oid(id), '_partition', { type: 'String', value: 'p7' }), set(oid(id), 'name', { type: 'String', value: 'Stray' })]);
    const [error] = await eventually(() => {
      const others = client.pump();
      if (others.length === 0) throw new Error('no answer yet');
      return others;
    });
    expect(error).toMatchObject({ type: 'json_error', code: 212, body: { message: expect.stringContaining('incorrect partition value for key "_partition"') } });
    expect(await dogs.findOne({ _id: new ObjectId(id) })).toBeNull();
    client.close();
  });

  it('without development mode, accepts a client schema that matches the app schema and refuses one that adds a type (225)', async () => {
    const catSchema: Instruction[] = [
      { type: 'AddTable', table: 'Cat', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'ObjectId', pkNullable: false } },
      columnOf('Cat', '_partition', 'String', { nullable: true }),
      columnOf('Cat', 'name', 'String'),
    ];
    const client = await EngineClient.open(host, strictApp, '"c1"');
    const id = new ObjectId().toHexString();
    client.upload([...catSchema, { type: 'CreateObject', table: 'Cat', object: oid(id) }, { ...(set(oid(id), 'name', { type: 'String', value: 'Tom' }) as Extract<Instruction, { type: 'Update' }>), table: 'Cat' }]);
    const cats = await collection(host.url, strictApp, 'pets', 'cats');
    await eventually(async () => expect(await cats.findOne({ _id: new ObjectId(id) })).toMatchObject({ name: 'Tom', _partition: 'c1' }));

    client.upload(dogSchema);
    const [error] = await eventually(() => {
      const others = client.pump();
      if (others.length === 0) throw new Error('no answer yet');
      return others;
    });
    expect(error).toMatchObject({ type: 'json_error', code: 225, body: { message: expect.stringContaining('schema changes from clients are restricted when developer mode is disabled') } });
    client.close();
  });

  it('after a terminate and re-enable, sends writes made elsewhere to the clients of the history begun anew', async () => {
    // Through the admin API, as an operator terminates and re-enables sync.
    const admin = await AdminSession.login(host, 'admin', adminPassword);
    const app = await admin.createApp('translation-reset');
    const config = emptyApp('translation-reset');
    config.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'sync-cluster' } }, defaultRule: everyone, collectionRules: [], rules: [], webhooks: [] });
    partitionSync(config, { read: true, write: true });
    Object.assign(config.sync ?? {}, { service_name: 'mongodb-atlas' });
    let files = new Map([...writeAppFiles(config)].map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]));
    const created = await admin.push(app._id, files);
    expect(created.status, JSON.stringify(created.body)).toBe(204);
    const resetDogs = await collection(host.url, app.client_app_id, 'app', 'Dog');
    const first = await EngineClient.open(host, app.client_app_id, '"schema"');
    first.upload(dogSchema);
    await first.until(() => first.serverVersion >= 1);
    await untilFeedIsLive(first, resetDogs);
    first.close();

    for (const state of ['disabled', 'enabled']) {
      files = await admin.pull(app._id);
      files.set('sync/config.json', JSON.stringify({ ...(JSON.parse(files.get('sync/config.json') ?? '{}') as Record<string, unknown>), state }));
      const pushed = await admin.push(app._id, files);
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    }
    // The partition's history of the new epoch is seeded from the collection, then follows its changes.
    const seeded = new ObjectId();
    await resetDogs.insertOne({ _id: seeded, _partition: 'e1', name: 'Kept' });
    const client = await EngineClient.open(host, app.client_app_id, '"e1"');
    expect(client.store.read('Dog', oid(seeded.toHexString()), 'name')).toBe('"Kept"');
    const inserted = new ObjectId();
    await resetDogs.insertOne({ _id: inserted, _partition: 'e1', name: 'Anew' });
    await client.until((store) => expect(store.read('Dog', oid(inserted.toHexString()), 'name')).toBe('"Anew"'));
    client.close();
  }, 60_000);
});
