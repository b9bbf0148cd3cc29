// One real Realm JS SDK client in its own process, driven by the real-client sync tests over stdin and
// stdout, one JSON line each way. Its own process because the SDK's native module keeps process-wide state
// (its sync client, its metadata realm) and because a test stops and resumes a client as a device does.
//
// Requests: {"id": n, "op": "...", ...}; answers: {"id": n, "ok": true, "result": ...} or
// {"id": n, "ok": false, "error": "..."}. Unasked notices (a sync error, a client reset) come as
// {"event": "...", ...}. The Task operations carry strings, numbers and booleans; the generic object
// operations (`put`, `objects`) carry canonical EJSON text, so every property type crosses unchanged.
'use strict';

const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const readline = require('node:readline');

const sdkPath = process.env.TESSERA_REALM_SDK;
if (!sdkPath) {
  process.stderr.write('TESSERA_REALM_SDK is not set\n');
  process.exit(2);
}
const Realm = require(sdkPath);
if (process.env.REALM_CLIENT_LOG_LEVEL) {
  Realm.setLogger((level, message) => require('node:fs').appendFileSync(process.env.REALM_CLIENT_LOG_FILE ?? '/dev/stderr', `[${level}] ${message}\n`));
  Realm.setLogLevel(process.env.REALM_CLIENT_LOG_LEVEL);
}

// Every client keeps its files in its own directory, as each device has its own.
const baseFilePath = process.env.REALM_CLIENT_DIR || mkdtempSync(join(tmpdir(), 'tessera-realm-client-'));
process.chdir(baseFilePath);

let app;
let user;
let realm;

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const plain = (object) => (object ? JSON.parse(JSON.stringify(object.toJSON())) : null);

/** The schema the tests sync: a task with a string primary key and the partition key. */
function schemaOf(partitionType) {
  return [
    {
      name: 'Task',
      primaryKey: '_id',
      properties: { _id: 'string', _partition: partitionType === 'int' ? 'int?' : 'string?', name: 'string', done: { type: 'bool', default: false } },
    },
  ];
}

/** The SDK's client reset handling in `mode` (recovery by default, as the SDK's own default), each phase reported as an event. */
function clientResetConfig(mode) {
  return {
    mode: mode ?? 'recoverUnsyncedChanges',
    onBefore: () => send({ event: 'client-reset', phase: 'before' }),
    onAfter: () => send({ event: 'client-reset', phase: 'after' }),
    onFallback: () => send({ event: 'client-reset', phase: 'fallback' }),
  };
}

const operations = {
  async login({ appId, baseUrl, email, password, register }) {
    app = new Realm.App({ id: appId, baseUrl, baseFilePath });
    if (register) await app.emailPasswordAuth.registerUser({ email, password });
    user = await app.logIn(email ? Realm.Credentials.emailPassword(email, password) : Realm.Credentials.anonymous());
    return { userId: user.id };
  },

  async callFunction({ name, args }) {
    return await user.callFunction(name, ...args);
  },

  async refreshCustomData() {
    return await user.refreshCustomData();
  },

  async open({ partition, partitionType, schema, clientReset, timeoutMs }) {
    const config = {
      schema: schema ?? schemaOf(partitionType),
      path: join(baseFilePath, `p-${String(partition)}-${Date.now()}.realm`),
      sync: {
        user,
        partitionValue: partition,
        newRealmFileBehavior: { type: 'downloadBeforeOpen', timeOut: timeoutMs ?? 20_000, timeOutBehavior: 'throwException' },
        existingRealmFileBehavior: { type: 'openImmediately' },
        onError: (_session, error) => send({ event: 'sync-error', code: error.code, name: error.name, message: error.message, isFatal: error.isFatal }),
        clientReset: clientResetConfig(clientReset),
      },
    };
    realm = await Realm.open(config);
    watchConnection();
    return { path: realm.path };
  },

  /**
   * Opens a flexible-sync realm subscribed to `query` on Task. The schema is the protocol tests' app's (Task,
   * and Log as asymmetric) unless the test gives its own (an imported app's).
   */
  async openFlexible({ query, subscriptions, schema, clientReset, timeoutMs }) {
    const config = {
      schema: schema ?? [
        { name: 'Task', primaryKey: '_id', properties: { _id: 'string', owner_id: 'string?', status: 'string?', name: 'string?' } },
        { name: 'Log', asymmetric: true, primaryKey: '_id', properties: { _id: 'string', message: 'string?' } },
      ],
      path: join(baseFilePath, `flx-${Date.now()}.realm`),
      sync: {
        user,
        flexible: true,
        initialSubscriptions: {
          update: (subs, r) => {
            for (const sub of subscriptions ?? [{ name: 'tasks', type: 'Task', query }]) subs.add(r.objects(sub.type).filtered(sub.query), { name: sub.name });
          },
        },
        newRealmFileBehavior: { type: 'downloadBeforeOpen', timeOut: timeoutMs ?? 20_000, timeOutBehavior: 'throwException' },
        existingRealmFileBehavior: { type: 'openImmediately' },
        onError: (_session, error) => send({ event: 'sync-error', code: error.code, name: error.name, message: error.message, isFatal: error.isFatal, reason: error.reason, writes: error.writes }),
        clientReset: clientResetConfig(clientReset),
      },
    };
    realm = await Realm.open(config);
    watchConnection();
    return { path: realm.path };
  },

  /** Replaces the flexible realm's subscription with `query` on Task; waits until the server bootstrapped it. */
  async subscribe({ query, timeoutMs = 15_000 }) {
    // A refused set rejects with what the server said, as realm.subscriptions.error holds it.
    const refused = (error) => {
      throw new Error(realm.subscriptions.error ?? String(error?.message ?? error));
    };
    await withTimeout(
      realm.subscriptions.update((mutable) => {
        mutable.removeAll();
        mutable.add(realm.objects('Task').filtered(query), { name: 'tasks' });
      }),
      timeoutMs,
      'subscribe',
    ).catch(refused);
    return { state: realm.subscriptions.state, version: realm.subscriptions.version };
  },

  /** Creates an asymmetric (data ingest) object: a Log unless `type` names another asymmetric table. */
  createLog({ log, type = 'Log' }) {
    realm.write(() => realm.create(type, log));
    return null;
  },

  create({ task }) {
    realm.write(() => realm.create('Task', task, Realm.UpdateMode.Modified));
    return null;
  },

  update({ taskId, changes }) {
    realm.write(() => Object.assign(realm.objectForPrimaryKey('Task', taskId), changes));
    return null;
  },

  remove({ taskId }) {
    realm.write(() => realm.delete(realm.objectForPrimaryKey('Task', taskId)));
    return null;
  },

  tasks() {
    return realm
      .objects('Task')
      .sorted('_id')
      .map((task) => plain(task));
  },

  /** Waits until the local objects satisfy `{ ids, absent, fields }`, as a user would watch the list. */
  async waitFor({ ids = [], absent = [], fields = {}, timeoutMs = 15_000 }) {
    const satisfied = () =>
      ids.every((id) => realm.objectForPrimaryKey('Task', id)) &&
      absent.every((id) => !realm.objectForPrimaryKey('Task', id)) &&
      Object.entries(fields).every(([id, values]) => {
        const task = realm.objectForPrimaryKey('Task', id);
        return task && Object.entries(values).every(([key, value]) => task[key] === value);
      });
    const deadline = Date.now() + timeoutMs;
    while (!satisfied()) {
      if (Date.now() > deadline) throw new Error(`timed out; the client holds ${JSON.stringify(operations.tasks())}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return operations.tasks();
  },

  async upload({ timeoutMs = 15_000 }) {
    await withTimeout(realm.syncSession.uploadAllLocalChanges(), timeoutMs, 'upload');
    return null;
  },

  async download({ timeoutMs = 15_000 }) {
    await withTimeout(realm.syncSession.downloadAllServerChanges(), timeoutMs, 'download');
    catchUp();
    return null;
  },

  pause() {
    realm.syncSession.pause();
    return null;
  },

  resume() {
    realm.syncSession.resume();
    return null;
  },

  state() {
    return { session: realm.syncSession.state, connection: realm.syncSession.connectionState };
  },

  /** Creates an object of `type` from canonical EJSON text. */
  put({ type, value }) {
    // `put` only creates (UpdateMode.Never); `change` updates.
    realm.write(() => realm.create(type, fromWire(Realm.BSON.EJSON.parse(value, { relaxed: false })), Realm.UpdateMode.Never));
    return null;
  },

  /** Changes fields of the object of `type` whose primary key is `key` (EJSON text of both). */
  change({ type, key, changes }) {
    realm.write(() => {
      const object = realm.objectForPrimaryKey(type, fromWire(Realm.BSON.EJSON.parse(key, { relaxed: false })));
      if (!object) throw new Error(`no ${type} ${key}`);
      Object.assign(object, fromWire(Realm.BSON.EJSON.parse(changes, { relaxed: false })));
    });
    return null;
  },

  /** Every object of `type` (matching `query` when given) as canonical EJSON text, in primary key order. */
  objects({ type, query }) {
    const all = query ? realm.objects(type).filtered(query) : realm.objects(type);
    return Realm.BSON.EJSON.stringify(all.sorted('_id').map((object) => toWire(object)), { relaxed: false });
  },

  /** Waits until `query` on `type` matches `count` objects; rejects with how many it matched after the timeout. */
  async waitForCount({ type, query = 'TRUEPREDICATE', count, timeoutMs = 15_000 }) {
    const deadline = Date.now() + timeoutMs;
    while (realm.objects(type).filtered(query).length !== count) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} ${type} matching ${query}; the client holds ${realm.objects(type).filtered(query).length} of ${realm.objects(type).length}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return realm.objects(type).length;
  },

  /**
   * Sets the flexible realm's subscriptions to `subscriptions` ([{ name, type, query }]): they replace every
   * other one unless `keep`; `remove` names ones to drop. Waits until the server bootstrapped them.
   */
  async setSubscriptions({ subscriptions = [], keep = false, remove = [], timeoutMs = 15_000 }) {
    // The queries are parsed before the update: a query the SDK itself refuses throws here, as a throw inside
    // the update's callback leaves the subscription store's write open and the next update waits for ever.
    const queries = subscriptions.map((sub) => ({ results: realm.objects(sub.type).filtered(sub.query), name: sub.name }));
    await withTimeout(
      realm.subscriptions.update((mutable) => {
        if (!keep) mutable.removeAll();
        for (const name of remove) mutable.removeByName(name);
        for (const { results, name } of queries) mutable.add(results, { name });
      }),
      timeoutMs,
      'subscriptions',
    ).catch((error) => {
      throw new Error(realm.subscriptions.error ?? String(error?.message ?? error));
    });
    catchUp();
    return { state: realm.subscriptions.state, names: [...realm.subscriptions].map((sub) => sub.name ?? null) };
  },

  /** SDK 12's `results.subscribe()`: returns the number of matching objects once it resolves. */
  async subscribeResults({ type, query, name, behavior = 'FirstTime', timeoutMs = 15_000 }) {
    const results = realm.objects(type).filtered(query);
    const options = { behavior: Realm.WaitForSync[behavior], ...(name ? { name } : {}) };
    const subscribed = await withTimeout(results.subscribe(options), timeoutMs, 'subscribe');
    catchUp();
    return { count: subscribed.length, subscriptions: realm.subscriptions.length };
  },

  /** SDK 12's `results.unsubscribe()`: then waits for the server to acknowledge the new set. */
  async unsubscribeResults({ type, query, timeoutMs = 15_000 }) {
    realm.objects(type).filtered(query).unsubscribe();
    await withTimeout(realm.subscriptions.waitForSynchronization(), timeoutMs, 'unsubscribe');
    catchUp();
    return { subscriptions: realm.subscriptions.length };
  },

  /**
   * Starts recording the session's progress notifications in `direction` and `mode`: SDK 12's estimate (a
   * callback of one parameter) when `estimate`, else the transferred and transferable bytes. The SDK tells the
   * two by the callback's arity, so each has its own function.
   */
  watchProgress({ direction = 'download', mode = 'reportIndefinitely', estimate = false }) {
    progress.length = 0;
    const callback = estimate ? (value) => progress.push({ estimate: value }) : (transferred, transferable) => progress.push({ transferred, transferable });
    realm.syncSession.addProgressNotification(direction, mode, callback);
    return null;
  },

  /** The progress notifications recorded since `watchProgress`. */
  progress() {
    return progress;
  },

  /** The connection states the session went through since the realm opened. */
  connectionStates() {
    return connectionStates;
  },

  /** The user's current access token (to tell a refreshed one from the first). */
  accessToken() {
    return user.accessToken;
  },

  userState() {
    return user.state;
  },

  async logOut() {
    await user.logOut();
    return null;
  },

  close() {
    realm?.close();
    realm = undefined;
    return null;
  },
};

/**
 * Moves the realm's read version to the newest commit. A subscription set completes (and a download does) on
 * the sync client's thread, in the commit that integrated what the server sent, and the SDK resolves its promise
 * then; this process's realm reads an older version until its event loop delivers the change notification. A write begun and cancelled catches
 * up at once (the SDK has no public refresh), so what the next operation reads is what the set synchronized.
 */
function catchUp() {
  realm.beginTransaction();
  realm.cancelTransaction();
}

const progress = [];
const connectionStates = [];

function watchConnection() {
  connectionStates.length = 0;
  realm.syncSession.addConnectionNotification((state) => connectionStates.push(state));
}

/**
 * A value parsed from EJSON as the SDK takes it: binary subtype 4 as a UUID, other binary as an ArrayBuffer,
 * `{ __link: [type, primaryKey] }` as the stored object of that type, arrays and documents element by element
 * (a document for an object, an embedded object, a dictionary or a mixed dictionary, as the schema says).
 */
function fromWire(value) {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(fromWire);
  // EJSON parses binary subtype 4 as a UUID already.
  if (value instanceof Date || value instanceof Realm.BSON.ObjectId || value instanceof Realm.BSON.Decimal128 || value instanceof Realm.BSON.UUID) return value;
  if (value instanceof Realm.BSON.Binary) {
    const bytes = Buffer.from(value.buffer).subarray(0, value.position);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  }
  // Realm.BSON exports no number classes: EJSON's Int32, Long and Double are told by their tag.
  if (['Int32', 'Long', 'Double'].includes(value._bsontype)) return Number(value.toString());
  if (Array.isArray(value.__link)) {
    const [type, key] = value.__link;
    const target = realm.objectForPrimaryKey(type, fromWire(key));
    if (!target) throw new Error(`no ${type} ${JSON.stringify(key)} to link to`);
    return target;
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fromWire(item)]));
}

/** What the device holds, for EJSON: links as `{ __link: [type, primaryKey] }`, collections as arrays and documents. */
function toWire(value) {
  if (value === null || value === undefined) return null;
  if (value instanceof Realm.Object) {
    const schema = value.objectSchema();
    if (!schema.embedded && toWire.depth > 0) return { __link: [schema.name, value[schema.primaryKey]] };
    toWire.depth++;
    try {
      return Object.fromEntries(Object.keys(schema.properties).map((key) => [key, toWire(value[key])]));
    } finally {
      toWire.depth--;
    }
  }
  if (value instanceof Realm.Dictionary) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toWire(item)]));
  if (value instanceof Realm.Set) return [...value].map(toWire).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (value instanceof Realm.Collection || Array.isArray(value)) return [...value].map(toWire);
  if (value instanceof ArrayBuffer) return new Realm.BSON.Binary(Buffer.from(value));
  return value;
}
toWire.depth = 0;

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  const request = JSON.parse(line);
  if (process.env.REALM_CLIENT_TRACE) process.stderr.write(`> ${line}\n`);
  try {
    const operation = operations[request.op];
    if (!operation) throw new Error(`unknown op ${request.op}`);
    send({ id: request.id, ok: true, result: (await operation(request)) ?? null });
  } catch (error) {
    if (process.env.REALM_CLIENT_TRACE) process.stderr.write(`${error?.stack}\n`);
    send({ id: request.id, ok: false, error: String(error?.message ?? error), code: error?.code });
  }
});
process.stdin.on('end', () => {
  realm?.close();
  process.exit(0);
});
