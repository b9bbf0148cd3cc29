import { emptyApp, writeAppFiles } from '@tessera/app-config';
import { createDataSourceClient, type DataSourceClient } from '@tessera/datastore';
import { eventually, makeTempDir } from '@tessera/testing';
import { AdminApiKeyStore } from './admin-api-keys';
import { AdminUserStore } from './admin-users';
import { AppRegistryError, DatastoreAppRegistry } from './app-registry';
import { DeployedApps } from './deployed-apps';
import { DeploymentStore } from './deployment-store';
import { DraftStore } from './draft-store';
import { DatastoreLogStore } from './log-store';
import { Binary } from 'bson';
import { bytesOf, PlatformDatabase } from './platform-database';
import { DeploymentReconciler } from './platform.module';
import { SecretStore } from './secret-store';
import { SecretsCipher } from './secrets-cipher';
import { SigningKeyStore } from './signing-keys';
import { SyncStateStore } from './sync-state-store';

const cipher = new SecretsCipher([Buffer.alloc(32, 3)], 'a test key');

// Each store over the embedded engine, as standalone mode runs it. Two PlatformDatabase instances over one
// client stand for two replicas: they share nothing but the database.
describe('platform stores in the platform database', () => {
  const dir = makeTempDir('tessera-platform-');
  let client: DataSourceClient;
  let db: PlatformDatabase;
  let replica: PlatformDatabase;

  beforeAll(() => {
    client = createDataSourceClient({ clusterName: 'tessera-platform', dataDir: dir.path });
    db = new PlatformDatabase(client);
    replica = new PlatformDatabase(client);
  });

  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  describe('DatastoreAppRegistry', () => {
    it('creates, finds by either id, lists and removes apps across instances', async () => {
      const registry = new DatastoreAppRegistry(db);
      const created = await registry.create({ name: 'todo', groupId: 'g1' });
      expect(created.client_app_id).toMatch(/^todo-[a-z]{5}$/);
      expect(created._id).toMatch(/^[0-9a-f]{24}$/);
      const other = new DatastoreAppRegistry(replica);
      expect(await other.getByClientAppId(created.client_app_id)).toEqual(created);
      expect(await other.get(created._id)).toEqual(created);
      expect(await other.list('g1')).toEqual([created]);
      expect(await other.list('g2')).toEqual([]);
      await new DeploymentStore(db).deploy(created._id, new Map([['config.json', Buffer.from('{}')]]), { origin: 'test' });
      await other.remove(created._id);
      await expect(registry.getByClientAppId(created.client_app_id)).rejects.toMatchObject({ errorCode: 'AppNotFound', httpStatus: 404 });
      await expect(registry.get('not-an-id')).rejects.toMatchObject({ errorCode: 'AppNotFound' });
      // Removing an app removes what the platform kept for it.
      expect(await new DeploymentStore(db).current(created._id)).toBeUndefined();
    });

    it('refuses a second app with the same imported client app id', async () => {
      const registry = new DatastoreAppRegistry(db);
      await registry.create({ name: 'imported', groupId: 'g', clientAppId: 'todo-abcde' });
      await expect(registry.create({ name: 'other', groupId: 'g', clientAppId: 'todo-abcde' })).rejects.toBeInstanceOf(AppRegistryError);
    });

    it('lets exactly one of several concurrent creates of one name in a group win', async () => {
      const registries = [new DatastoreAppRegistry(db), new DatastoreAppRegistry(replica)];
      const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, n) => registries[n % 2].create({ name: 'race', groupId: 'g-race' })));
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ errorCode: 'AppExists', httpStatus: 409 });
      // The same name in another group is another app.
      expect((await registries[0].create({ name: 'race', groupId: 'g-other' })).name).toBe('race');
    });
  });

  describe('DeploymentStore', () => {
    it('keeps every deployment and serves the latest one, byte for byte', async () => {
      const store = new DeploymentStore(db);
      expect(await store.current('a1')).toBeUndefined();
      expect(await store.list('a1')).toEqual([]);
      const first = await store.deploy('a1', new Map([['config.json', Buffer.from('{"name":"x"}\n')]]), { origin: 'test' });
      const second = await store.deploy('a1', new Map([['config.json', Buffer.from('{"name":"y"}\n')], ['values/v.json', new Uint8Array([0, 255, 10])]]), { origin: 'test', userId: 'u1' });
      expect([first.version, second.version]).toEqual([1, 2]);
      const current = await new DeploymentStore(replica).current('a1');
      expect(current?.record).toEqual(second);
      expect(Buffer.from(current!.files.get('config.json')!).toString()).toBe('{"name":"y"}\n');
      expect([...current!.files.get('values/v.json')!]).toEqual([0, 255, 10]);
      expect((await store.list('a1')).map((record) => record.version)).toEqual([2, 1]);
      expect(await store.liveStamps(['a1', 'never'])).toEqual(new Map([['a1', { deploymentId: second._id, version: 2 }]]));
    });

    it('gives concurrent deploys from two replicas distinct versions; the highest is live', async () => {
      const stores = [new DeploymentStore(db), new DeploymentStore(replica)];
      const records = await Promise.all(Array.from({ length: 8 }, (_, n) => stores[n % 2].deploy('a-race', new Map([['n', Buffer.from(String(n))]]), { origin: 'test' })));
      expect(records.map((record) => record.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const highest = records.find((record) => record.version === 8)!;
      expect((await stores[1].current('a-race'))?.record).toEqual(highest);
    });
  });

  describe('DeployedApps', () => {
    it('reloads an app whose live deployment changed behind its back when reconciled', async () => {
      const registry = new DatastoreAppRegistry(db);
      const app = await registry.create({ name: 'cached', groupId: 'g-cache' });
      const config = (name: string) => writeAppFiles({ ...emptyApp('cached'), values: [{ name, value: 1 }] });
      await new DeploymentStore(db).deploy(app._id, config('one'), { origin: 'test' });
      const deployed = new DeployedApps(registry, new DeploymentStore(db));
      expect((await deployed.byId(app._id)).config.values.map((value) => value.name)).toEqual(['one']);
      expect(await deployed.reconcile()).toEqual([]);
      // Another replica deploys; this one never hears of it.
      await new DeploymentStore(replica).deploy(app._id, config('two'), { origin: 'test' });
      expect((await deployed.byId(app._id)).config.values.map((value) => value.name)).toEqual(['one']);
      expect(await deployed.reconcile()).toEqual([app._id]);
      expect((await deployed.byId(app._id)).config.values.map((value) => value.name)).toEqual(['two']);
      // A removed app goes too.
      await new DatastoreAppRegistry(replica).remove(app._id);
      expect(await deployed.reconcile()).toEqual([app._id]);
      await expect(deployed.byId(app._id)).rejects.toMatchObject({ errorCode: 'AppNotFound' });
    });
  });

  describe('DeploymentReconciler', () => {
    it('reloads, on its periodic check, an app deployed by another replica', async () => {
      const registry = new DatastoreAppRegistry(db);
      const app = await registry.create({ name: 'polled', groupId: 'g-poll' });
      const config = (name: string) => writeAppFiles({ ...emptyApp('polled'), values: [{ name, value: 1 }] });
      await new DeploymentStore(db).deploy(app._id, config('before'), { origin: 'test' });
      const deployed = new DeployedApps(registry, new DeploymentStore(db));
      const reconciler = new DeploymentReconciler(deployed, 50);
      expect((await deployed.byId(app._id)).config.values.map((value) => value.name)).toEqual(['before']);
      reconciler.onApplicationBootstrap();
      try {
        await new DeploymentStore(replica).deploy(app._id, config('after'), { origin: 'test' });
        await eventually(async () => expect((await deployed.byId(app._id)).config.values.map((value) => value.name)).toEqual(['after']), { timeoutMs: 5_000 });
      } finally {
        reconciler.onApplicationShutdown();
      }
    });
  });

  describe('DraftStore', () => {
    it('keeps one draft per app, stages files and forgets the draft when removed', async () => {
      const drafts = new DraftStore(db);
      const draft = await drafts.create('d-app', 'u1');
      expect(draft).toMatchObject({ user_id: 'u1', app: { _id: 'd-app' } });
      await expect(new DraftStore(replica).create('d-app', 'u2')).rejects.toMatchObject({ errorCode: 'DraftAlreadyExists', httpStatus: 409 });
      expect(await drafts.get('d-app')).toEqual(draft);
      expect(await drafts.files('d-app', draft._id)).toBeUndefined();
      await drafts.stage('d-app', draft._id, new Map([['config.json', Buffer.from('{}')]]));
      expect(Buffer.from((await drafts.files('d-app', draft._id))!.get('config.json')!).toString()).toBe('{}');
      await expect(drafts.stage('d-app', 'other', new Map())).rejects.toMatchObject({ errorCode: 'DraftNotFound', httpStatus: 404 });
      await drafts.remove('d-app', draft._id);
      expect(await drafts.get('d-app')).toBeUndefined();
      await expect(drafts.remove('d-app', draft._id)).rejects.toMatchObject({ errorCode: 'DraftNotFound' });
    });
  });

  describe('SecretStore', () => {
    it('lists names only, refuses duplicates and bad names, updates and upserts values', async () => {
      const secrets = new SecretStore(db, cipher);
      const created = await secrets.create('s-app', 'apiKey', 'v1');
      await expect(secrets.create('s-app', 'apiKey', 'x')).rejects.toMatchObject({ errorCode: 'SecretAlreadyExists', httpStatus: 409 });
      await expect(secrets.create('s-app', 'bad name', 'x')).rejects.toMatchObject({ errorCode: 'InvalidParameter', httpStatus: 400 });
      await secrets.create('s-app', 'other', 'o');
      await secrets.create('s-other-app', 'apiKey', 'elsewhere');
      expect(await secrets.list('s-app')).toEqual([created, { _id: expect.any(String) as string, name: 'other' }]);
      await secrets.update('s-app', created._id, { value: 'rotated' });
      await secrets.update('s-app', 'apiKey', {});
      await expect(secrets.update('s-app', 'missing', {})).rejects.toMatchObject({ errorCode: 'SecretNotFound' });
      await expect(secrets.update('s-app', created._id, { name: 'other' })).rejects.toMatchObject({ errorCode: 'SecretAlreadyExists' });
      await new SecretStore(replica, cipher).upsert('s-app', { other: 'o2', added: 'new' });
      expect(await secrets.values('s-app')).toEqual({ apiKey: 'rotated', other: 'o2', added: 'new' });
      await secrets.remove('s-app', 'added');
      await expect(secrets.remove('s-app', 'added')).rejects.toMatchObject({ errorCode: 'SecretNotFound', httpStatus: 404 });
      expect(await secrets.values('s-other-app')).toEqual({ apiKey: 'elsewhere' });
    });
  });

  describe('SyncStateStore', () => {
    it('starts from the initial state and keeps what was saved, without undefined fields', async () => {
      const states = new SyncStateStore(db);
      expect(await states.get('y-app')).toEqual({ everEnabled: false, enabled: false, resetEpoch: 0 });
      await states.save('y-app', { everEnabled: true, enabled: true, resetEpoch: 1, enabledAt: 5, clientResetRequiredSince: undefined, partition: { key: 'owner_id', type: 'string' } });
      expect(await new SyncStateStore(replica).get('y-app')).toEqual({ everEnabled: true, enabled: true, resetEpoch: 1, enabledAt: 5, partition: { key: 'owner_id', type: 'string' } });
    });
  });

  describe('DatastoreLogStore', () => {
    it('reads newest first with type, error, date and limit filters', async () => {
      const logs = new DatastoreLogStore(db);
      await logs.append('l-app', { type: 'FUNCTION', messages: ['one'], started: '2026-01-01T00:00:00.000Z', function_name: 'f' });
      await logs.append('l-app', { type: 'AUTH', messages: ['two'], started: '2026-01-02T00:00:00.000Z' });
      await logs.append('l-app', { type: 'FUNCTION', messages: [], started: '2026-01-03T00:00:00.000Z', error: 'boom', error_code: 'FunctionExecutionError', run_as: 'system' });
      await logs.append('l-other', { type: 'FUNCTION', messages: ['elsewhere'] });
      const all = await new DatastoreLogStore(replica).list('l-app');
      expect(all.map((entry) => entry.messages[0] ?? entry.error)).toEqual(['boom', 'two', 'one']);
      expect(all[0]).toMatchObject({ _id: expect.stringMatching(/^[0-9a-f]{24}$/) as string, type: 'FUNCTION', completed: '2026-01-03T00:00:00.000Z', run_as: 'system' });
      expect((await logs.list('l-app', { types: ['FUNCTION'] })).map((entry) => entry.started)).toEqual(['2026-01-03T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
      expect((await logs.list('l-app', { errorsOnly: true })).map((entry) => entry.error)).toEqual(['boom']);
      expect((await logs.list('l-app', { start: new Date('2026-01-02T00:00:00Z'), end: new Date('2026-01-02T12:00:00Z') })).map((entry) => entry.type)).toEqual(['AUTH']);
      expect(await logs.list('l-app', { limit: 1 })).toEqual([all[0]]);
    });

    it('stores concurrent appends together, each resolved once stored', async () => {
      const logs = new DatastoreLogStore(db);
      const appended = await Promise.all(Array.from({ length: 40 }, (_, n) => logs.append('c-app', { type: 'FUNCTION', messages: [`m${n}`] })));
      const listed = await new DatastoreLogStore(replica).list('c-app');
      expect(listed.map((entry) => entry._id)).toEqual(appended.map((entry) => entry._id).reverse());
      expect(listed[0].messages).toEqual(['m39']);
    });

    it('stores a batch of several apps in one hand-over, in order, with ids and times filled in', async () => {
      const logs = new DatastoreLogStore(db);
      await logs.appendMany([
        { appId: 'b-app', entry: { type: 'FUNCTION', messages: ['b1'], started: '2026-02-01T00:00:00.000Z', error: undefined } },
        { appId: 'b-other', entry: { type: 'ENDPOINT', messages: ['o1'] } },
        { appId: 'b-app', entry: { type: 'FUNCTION', messages: ['b2'] } },
      ]);
      const listed = await new DatastoreLogStore(replica).list('b-app');
      expect(listed.map((entry) => entry.messages[0])).toEqual(['b2', 'b1']);
      expect(listed[1]).toEqual({ _id: expect.stringMatching(/^[0-9a-f]{24}$/) as string, type: 'FUNCTION', messages: ['b1'], started: '2026-02-01T00:00:00.000Z', completed: '2026-02-01T00:00:00.000Z' });
      expect(listed[0].completed).toBe(listed[0].started);
      expect((await logs.list('b-other')).map((entry) => entry.type)).toEqual(['ENDPOINT']);
      await expect(logs.appendMany([])).resolves.toBeUndefined();
    });

    it('trims an app that passes its number of appends by a batch', async () => {
      const logs = new DatastoreLogStore(db, 3, 500);
      await logs.appendMany(Array.from({ length: 500 }, (_, n) => ({ appId: 'bt-app', entry: { type: 'FUNCTION', messages: [`m${n}`] } })));
      expect((await logs.list('bt-app')).map((entry) => entry.messages[0])).toEqual(['m499', 'm498', 'm497']);
    });

    it('keeps exactly the newest entries over many trims, also when another process appends', async () => {
      const logs = new DatastoreLogStore(db, 700, 500);
      const messages = async () => (await logs.list('step-app', { limit: 2000 })).map((entry) => entry.messages[0]);
      const expected = (last: number) => Array.from({ length: 700 }, (_, i) => `m${last - i}`);
      let n = 0;
      for (let batch = 0; batch < 25; batch++) {
        await logs.appendMany(Array.from({ length: 500 }, () => ({ appId: 'step-app', entry: { type: 'FUNCTION', messages: [`m${n++}`] } })));
        if (batch > 0) expect(await messages()).toEqual(expected(n - 1));
      }
      // Entries another process writes in between are its to count: this one's trims still keep the newest.
      const other = new DatastoreLogStore(replica, 700, 500);
      await other.appendMany(Array.from({ length: 300 }, () => ({ appId: 'step-app', entry: { type: 'FUNCTION', messages: [`m${n++}`] } })));
      for (let batch = 0; batch < 20; batch++) await logs.appendMany(Array.from({ length: 500 }, () => ({ appId: 'step-app', entry: { type: 'FUNCTION', messages: [`m${n++}`] } })));
      expect(await messages()).toEqual(expected(n - 1));
    }, 60_000);

    it('keeps the newest entries of an app when it trims', async () => {
      const logs = new DatastoreLogStore(db, 3);
      for (let n = 1; n <= 5; n++) await logs.append('t-app', { type: 'FUNCTION', messages: [`m${n}`] });
      await logs.trim('t-app');
      expect((await logs.list('t-app')).map((entry) => entry.messages[0])).toEqual(['m5', 'm4', 'm3']);
    });
  });

  describe('AdminUserStore', () => {
    it('generates a password once and authenticates with it', async () => {
      const store = new AdminUserStore(db);
      const first = await store.bootstrap('admin', undefined);
      expect(first.generatedPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
      const second = await new AdminUserStore(replica).bootstrap('admin', undefined);
      expect(second).toEqual({ groupId: first.groupId, username: 'admin' });
      expect(await store.groupId()).toBe(first.groupId);
      expect(await store.authenticate('admin', first.generatedPassword!)).toMatchObject({ username: 'admin', groupIds: [first.groupId] });
      expect(await store.authenticate('admin', 'wrong password')).toBeUndefined();
      expect(await store.authenticate('nobody', first.generatedPassword!)).toBeUndefined();
    });

    it('replaces the stored password with a configured one', async () => {
      await new AdminUserStore(db).bootstrap('operator', 'first password');
      const store = new AdminUserStore(replica);
      await store.bootstrap('operator', 'second password');
      expect(await store.authenticate('operator', 'first password')).toBeUndefined();
      expect(await store.authenticate('operator', 'second password')).toBeDefined();
    });

    it('reports a generated password to one of two replicas bootstrapping at once', async () => {
      const results = await Promise.all([new AdminUserStore(db).bootstrap('twin', undefined), new AdminUserStore(replica).bootstrap('twin', undefined)]);
      const generated = results.filter((result) => result.generatedPassword);
      expect(generated).toHaveLength(1);
      expect(await new AdminUserStore(db).authenticate('twin', generated[0].generatedPassword!)).toBeDefined();
    });

    it('opens, resolves and closes refresh sessions on any replica', async () => {
      const store = new AdminUserStore(db);
      const user = (await store.authenticate('operator', 'second password'))!;
      const session = await store.openSession(user._id, 3600);
      expect((await new AdminUserStore(replica).sessionUser(session))?._id).toBe(user._id);
      expect(await new AdminUserStore(replica).closeSession(session)).toBe(true);
      expect(await store.sessionUser(session)).toBeUndefined();
      expect(await store.closeSession(session)).toBe(false);
    });

    it('ends a session at its expiry and sweeps ended sessions at the next login', async () => {
      const store = new AdminUserStore(db);
      const user = { _id: String((await (await db.collection('admin_users')).findOne({ username: 'operator' }))?.['_id']) };
      const ended = await store.openSession(user._id, -1);
      expect(await store.sessionUser(ended)).toBeUndefined();
      expect(await (await db.collection('admin_sessions')).findOne({ _id: ended })).toMatchObject({ expires_at: expect.any(Date) as Date });
      const live = await store.openSession(user._id, 3600);
      expect(await (await db.collection('admin_sessions')).findOne({ _id: ended })).toBeNull();
      expect((await store.sessionUser(live))?._id).toBe(user._id);
    });
  });

  describe('AdminApiKeyStore', () => {
    it('creates key pairs unique by name per admin, authenticates them and removes them', async () => {
      const keys = new AdminApiKeyStore(db);
      const created = await keys.create('admin-1', 'ci');
      await expect(keys.create('admin-1', 'ci')).rejects.toMatchObject({ errorCode: 'APIKeyAlreadyExists', httpStatus: 409 });
      await expect(keys.create('admin-1', '')).rejects.toMatchObject({ errorCode: 'InvalidParameter' });
      expect((await keys.create('admin-2', 'ci')).name).toBe('ci');
      expect(await new AdminApiKeyStore(replica).list('admin-1')).toEqual([{ _id: created._id, name: 'ci', public_key: created.public_key, user_id: 'admin-1', disabled: false, created: created.created }]);
      expect(await keys.authenticate(created.public_key, created.private_key)).toBe('admin-1');
      expect(await keys.authenticate(created.public_key, 'wrong')).toBeUndefined();
      await keys.remove('admin-1', created._id);
      await expect(keys.remove('admin-1', created._id)).rejects.toMatchObject({ errorCode: 'APIKeyNotFound', httpStatus: 404 });
      expect(await keys.authenticate(created.public_key, created.private_key)).toBeUndefined();
    });
  });

  describe('SigningKeyStore', () => {
    it('creates a key once: every replica, also racing on first use, gets the same one', async () => {
      const [one, two] = await Promise.all([new SigningKeyStore(db, cipher).get('admin'), new SigningKeyStore(replica, cipher).get('admin')]);
      expect(one).toHaveLength(32);
      expect(two).toEqual(one);
      expect(await new SigningKeyStore(replica, cipher).get('admin')).toEqual(one);
      expect(await new SigningKeyStore(db, cipher).get('app-x')).not.toEqual(one);
    });

    it('derives the same per-purpose keys from a shared master key in every replica, storing nothing', async () => {
      const master = Buffer.alloc(32, 9);
      const key = await new SigningKeyStore(db, cipher, master).get('app-derived');
      expect(key).toHaveLength(32);
      expect(await new SigningKeyStore(replica, cipher, master).get('app-derived')).toEqual(key);
      expect(await new SigningKeyStore(replica, cipher, master).get('admin')).not.toEqual(key);
      expect(await new SigningKeyStore(replica, cipher, Buffer.alloc(32, 8)).get('app-derived')).not.toEqual(key);
      expect(await (await db.collection('signing_keys')).findOne({ _id: 'app-derived' })).toBeNull();
    });
  });
});

describe('secrets at rest', () => {
  const dir = makeTempDir('tessera-secrets-at-rest-');
  let client: DataSourceClient;
  let db: PlatformDatabase;

  beforeAll(() => {
    client = createDataSourceClient({ clusterName: 'tessera-platform', dataDir: dir.path });
    db = new PlatformDatabase(client);
  });

  afterAll(async () => {
    await client.close();
    dir.remove();
  });

  it('stores secret values and generated signing keys sealed, each with its own nonce, and reads them back', async () => {
    const cipher = new SecretsCipher([Buffer.alloc(32, 1)], 'a test key');
    const secrets = new SecretStore(db, cipher);
    await secrets.create('enc-app', 'one', 'same value');
    await secrets.create('enc-app', 'two', 'same value');
    const stored = await (await db.collection('secrets')).find({ app_id: 'enc-app' }).toArray();
    expect(stored.map((record) => record['value'])).toEqual([undefined, undefined]);
    const [a, b] = stored.map((record) => record['sealed'] as { kid: string; iv: unknown; data: unknown });
    expect(a.kid).toBe(cipher.currentKeyId);
    expect(Buffer.from(bytesOf(a.iv)).equals(Buffer.from(bytesOf(b.iv)))).toBe(false);
    expect(JSON.stringify(stored)).not.toContain('same value');
    expect(await secrets.values('enc-app')).toEqual({ one: 'same value', two: 'same value' });

    const key = await new SigningKeyStore(db, cipher).get('app-sealed');
    const record = await (await db.collection('signing_keys')).findOne({ _id: 'app-sealed' });
    expect(record?.['key']).toBeUndefined();
    expect(Buffer.from(bytesOf((record?.['sealed'] as { data: unknown }).data)).includes(key)).toBe(false);
  });

  it('seals what an earlier release stored in clear, and reseals with the new key on rotation', async () => {
    const oldCipher = new SecretsCipher([Buffer.alloc(32, 1)], 'the old key');
    await (await db.collection('secrets')).insertOne({ _id: 'clear-secret', app_id: 'old-app', name: 'legacy', value: 'in clear' });
    await (await db.collection('signing_keys')).insertOne({ _id: 'app-clear', key: new Binary(Buffer.alloc(32, 7)), created: new Date() });
    expect(await new SecretStore(db, oldCipher).sealStored()).toBe(1);
    expect(await new SigningKeyStore(db, oldCipher).sealStored()).toBe(1);
    expect((await (await db.collection('secrets')).findOne({ _id: 'clear-secret' }))?.['value']).toBeUndefined();
    expect((await (await db.collection('signing_keys')).findOne({ _id: 'app-clear' }))?.['key']).toBeUndefined();

    const rotated = new SecretsCipher([Buffer.alloc(32, 2), Buffer.alloc(32, 1)], 'the new and old keys');
    expect(await new SecretStore(db, rotated).values('old-app')).toEqual({ legacy: 'in clear' });
    expect(await new SecretStore(db, rotated).sealStored()).toBeGreaterThanOrEqual(1);
    expect(await new SigningKeyStore(db, rotated).get('app-clear')).toEqual(Buffer.alloc(32, 7));
    const onlyNew = new SecretsCipher([Buffer.alloc(32, 2)], 'the new key');
    expect(await new SecretStore(db, onlyNew).values('old-app')).toEqual({ legacy: 'in clear' });
    await expect(new SecretStore(db, oldCipher).values('old-app')).rejects.toThrow(/encrypted with key id [0-9a-f]{16}, which the old key .* does not hold/);
  });

  it('refuses a sealed value moved to another app', async () => {
    const cipher = new SecretsCipher([Buffer.alloc(32, 1)], 'a test key');
    const sealed = cipher.sealText('mine', 'secrets:app-a');
    expect(() => cipher.openText(sealed, 'secrets:app-b')).toThrow(/does not decrypt/);
  });
});
