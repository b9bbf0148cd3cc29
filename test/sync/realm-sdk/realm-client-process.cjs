// One real Realm JS SDK client in its own process, driven by the real-client sync tests over stdin and
// stdout, one JSON line each way. Its own process because the SDK's native module keeps process-wide state
// (its sync client, its metadata realm) and because a test stops and resumes a client as a device does.
//
// Requests: {"id": n, "op": "...", ...}; answers: {"id": n, "ok": true, "result": ...} or
// {"id": n, "ok": false, "error": "..."}. Unasked notices (a sync error, a client reset) come as
// {"event": "...", ...}. EJSON is not needed: values are strings, numbers and booleans.
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

  async open({ partition, partitionType, clientReset, timeoutMs }) {
    const config = {
      schema: schemaOf(partitionType),
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
    return { path: realm.path };
  },

  /**
   * Opens a flexible-sync realm subscribed to `query` on Task. The schema is the protocol tests' app's (Task,
   * and Log as asymmetric) unless the test gives its own (an imported app's).
   */
  async openFlexible({ query, schema, clientReset, timeoutMs }) {
    const config = {
      schema: schema ?? [
        { name: 'Task', primaryKey: '_id', properties: { _id: 'string', owner_id: 'string?', status: 'string?', name: 'string?' } },
        { name: 'Log', asymmetric: true, primaryKey: '_id', properties: { _id: 'string', message: 'string?' } },
      ],
      path: join(baseFilePath, `flx-${Date.now()}.realm`),
      sync: {
        user,
        flexible: true,
        initialSubscriptions: { update: (subs, r) => subs.add(r.objects('Task').filtered(query), { name: 'tasks' }) },
        newRealmFileBehavior: { type: 'downloadBeforeOpen', timeOut: timeoutMs ?? 20_000, timeOutBehavior: 'throwException' },
        existingRealmFileBehavior: { type: 'openImmediately' },
        onError: (_session, error) => send({ event: 'sync-error', code: error.code, name: error.name, message: error.message, isFatal: error.isFatal, reason: error.reason, writes: error.writes }),
        clientReset: clientResetConfig(clientReset),
      },
    };
    realm = await Realm.open(config);
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

  close() {
    realm?.close();
    realm = undefined;
    return null;
  },
};

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
    send({ id: request.id, ok: false, error: String(error?.message ?? error), code: error?.code });
  }
});
process.stdin.on('end', () => {
  realm?.close();
  process.exit(0);
});
