import { emptyApp } from '@tessera/app-config';
import { type DataSourceClient } from '@tessera/datastore';
import { decodePrimaryKey, type FlexibleDownloadMessage, parseChangeset, SERVER_FILE_IDENT } from '@tessera/sync-protocol';
import { eventually } from '@tessera/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/test-host';
import { FLEXIBLE_CLUSTER, flexibleApp, FlexibleTestClient, taskSchema, writeTask } from './flexible-test-client';
import { partitionSync } from './sync-host';
import { connect, syncUrl } from './sync-test-client';

// Issue 17 item 4 at the protocol level: flexible-sync sessions over real WebSockets against the real host.
// The app syncs Task (queryable: owner_id, status) whose role reads every task but the hidden ones and
// writes only the user's own, and Log, an asymmetric (data ingest) type.

const CLUSTER = FLEXIBLE_CLUSTER;

/** The objects a bootstrap or download creates and erases, as `table/id`. */
function objectsOf(downloads: readonly FlexibleDownloadMessage[]): { created: string[]; erased: string[] } {
  const created: string[] = [];
  const erased: string[] = [];
  for (const download of downloads) {
    for (const changeset of download.changesets) {
      for (const instruction of parseChangeset(changeset.changeset).instructions) {
        if (instruction.type !== 'CreateObject' && instruction.type !== 'EraseObject') continue;
        const name = `${instruction.table}/${'value' in instruction.object ? String(instruction.object.value) : 'null'}`;
        (instruction.type === 'CreateObject' ? created : erased).push(name);
      }
    }
  }
  return { created: created.sort(), erased: erased.sort() };
}

describe('flexible sync sessions (protocol level)', () => {
  let host: TestHost;
  let clientAppId: string;
  let appId: string;
  let cluster: DataSourceClient;

  beforeAll(async () => {
    host = await startTestHost();
    const created = await host.createApp('flexible-sync', flexibleApp);
    clientAppId = created.clientAppId;
    appId = created.appId;
    cluster = host.dataSources.forCluster(CLUSTER);
    const tasks = Array.from({ length: 1_200 }, (_, i) => ({ _id: `bulk-${String(i).padStart(4, '0')}`, owner_id: 'someone', status: 'bulk', name: `bulk ${i}` }));
    await cluster.db('app').collection('Task').insertMany([
      ...tasks,
      { _id: 'o1', owner_id: 'someone', status: 'open', name: 'open one' },
      { _id: 'o2', owner_id: 'someone', status: 'open', name: 'open two' },
      { _id: 'd1', owner_id: 'someone', status: 'done', name: 'done one' },
      { _id: 'h1', owner_id: 'someone', status: 'hidden', name: 'hidden one' },
    ]);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  async function client(): Promise<{ client: FlexibleTestClient; userId: string }> {
    const login = await host.anonymousLogin(clientAppId);
    return { client: await FlexibleTestClient.open(syncUrl(host.url, clientAppId, login.accessToken)), userId: login.userId };
  }

  it('negotiates realm-query-sync, answers BIND with a client file and bootstraps the view at the IDENT query version', async () => {
    const { client: c } = await client();
    expect(c.protocol).toBe('com.mongodb.realm-query-sync#14');
    const bootstrap = await c.openSession(1, 1, { Task: 'status == "open" OR status == "hidden"' });
    expect(bootstrap.map((download) => [download.queryVersion, download.batchState])).toEqual([[1, 'lastInBatch']]);
    // The role's read filter keeps the hidden task out although the query asks for it.
    expect(objectsOf(bootstrap)).toEqual({ created: ['Task/o1', 'Task/o2'], erased: [] });
    expect(c.objects.get('Task')?.get('o1')).toMatchObject({ name: 'open one', status: 'open' });
    c.close();
  });

  it('sends a large view in batches: more-to-come messages, then last-in-batch, every one at the query version', async () => {
    const { client: c } = await client();
    const bootstrap = await c.openSession(1, 3, { Task: 'status == "bulk"' });
    expect(bootstrap.length).toBeGreaterThanOrEqual(3);
    expect(bootstrap.slice(0, -1).every((download) => download.batchState === 'moreToCome' && download.changesets.length === 1)).toBe(true);
    expect(bootstrap.every((download) => download.queryVersion === 3)).toBe(true);
    expect(bootstrap.at(-1)?.progressEstimate).toBe(1);
    const versions = bootstrap.flatMap((download) => download.changesets.map((changeset) => changeset.serverVersion));
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    expect(new Set(versions).size).toBe(versions.length);
    expect(c.ids('Task')).toHaveLength(1_200);
    c.close();
  });

  it('answers a QUERY with what entered and erases what left', async () => {
    const { client: c } = await client();
    await c.openSession(1, 1, { Task: 'status == "open"' });
    c.send({ type: 'query', sessionIdent: 1, queryVersion: 2, queries: { Task: 'status == "done"' } });
    const change = await c.bootstrap();
    expect(change.every((download) => download.queryVersion === 2)).toBe(true);
    expect(objectsOf(change)).toEqual({ created: ['Task/d1'], erased: ['Task/o1', 'Task/o2'] });
    expect(c.ids('Task')).toEqual(['d1']);
    c.close();
  });

  it('refuses a query on a non-queryable field with QUERY_ERROR 226 and keeps the session and its view', async () => {
    const { client: c } = await client();
    await c.openSession(1, 1, { Task: 'status == "open"' });
    c.send({ type: 'query', sessionIdent: 1, queryVersion: 2, queries: { Task: 'name == "open one"' } });
    const error = await c.next();
    expect(error).toMatchObject({ type: 'query_error', code: 226, sessionIdent: 1, queryVersion: 2 });
    expect(error.type === 'query_error' && error.message).toMatch(/^Invalid query: .*name/);
    // A syntax error, and a type the app does not sync, are query errors too.
    c.send({ type: 'query', sessionIdent: 1, queryVersion: 3, queries: { Task: 'status ==' } });
    expect(await c.next()).toMatchObject({ type: 'query_error', code: 226, queryVersion: 3 });
    c.send({ type: 'query', sessionIdent: 1, queryVersion: 4, queries: { Nope: 'TRUEPREDICATE' } });
    expect(await c.next()).toMatchObject({ type: 'query_error', code: 226, queryVersion: 4 });
    c.send({ type: 'mark', sessionIdent: 1, requestIdent: 7 });
    expect(await c.next()).toMatchObject({ type: 'mark', requestIdent: 7 });
    expect(c.closed()).toBe(false);
    c.close();
  });

  it('applies an upload inside the view to the collection, and acknowledges it', async () => {
    const { client: c, userId } = await client();
    await c.openSession(1, 1, { Task: `owner_id == "${userId}"` });
    const upload = c.upload(1, [...taskSchema(), ...writeTask('mine-1', { owner_id: userId, status: 'open', name: 'mine' })]);
    const ack = await c.next();
    expect(ack).toMatchObject({ type: 'download', batchState: 'steadyState', downloadClientVersion: upload.progressClientVersion });
    // The client made the write on top of everything it had been sent: the acknowledgement carries nothing.
    expect(ack.type === 'download' && ack.changesets).toEqual([]);
    expect(await cluster.db('app').collection('Task').findOne({ _id: 'mine-1' })).toMatchObject({ owner_id: userId, status: 'open', name: 'mine' });
    c.close();
  });

  it('acknowledges an upload that crossed a bootstrap on the wire with the written object as the collection holds it', async () => {
    const { client: c, userId } = await client();
    await c.openSession(1, 1, { Task: `owner_id == "${userId}"` });
    c.upload(1, [...taskSchema(), ...writeTask('crossed', { owner_id: userId, status: 'open', name: 'first' })]);
    await c.next();
    // The client changes its query and, before the bootstrap reaches it, renames the task: its write is made
    // on top of a server version older than the bootstrap, which carries the task's earlier name.
    const before = c.serverVersion;
    c.send({ type: 'query', sessionIdent: 1, queryVersion: 2, queries: { Task: `owner_id == "${userId}" OR status == "open"` } });
    const upload = c.upload(1, writeTask('crossed', { name: 'second' }, false), before);
    const bootstrap = await c.bootstrap();
    expect(objectsOf(bootstrap).created).toContain('Task/crossed');
    const ack = await c.next();
    if (ack.type !== 'download') throw new Error(`expected the acknowledgement, got ${ack.type}`);
    expect(ack.downloadClientVersion).toBe(upload.progressClientVersion);
    expect(ack.changesets.map((changeset) => changeset.lastIntegratedClientVersion)).toEqual([upload.progressClientVersion]);
    const renamed = ack.changesets.flatMap((changeset) => parseChangeset(changeset.changeset).instructions).find((instruction) => instruction.type === 'Update' && instruction.field === 'name');
    expect(renamed).toMatchObject({ object: { value: 'crossed' }, value: { type: 'String', value: 'second' } });
    expect(c.objects.get('Task')?.get('crossed')).toMatchObject({ name: 'second' });
    expect(await cluster.db('app').collection('Task').findOne({ _id: 'crossed' })).toMatchObject({ name: 'second' });
    c.close();
  });

  it('refuses a write outside the subscriptions or the write filter with a compensating write, and does not apply it', async () => {
    const { client: c, userId } = await client();
    await c.openSession(1, 1, { Task: 'status == "open"' });
    // Outside the view: a task the subscription does not match. Outside the write filter: someone else's task.
    c.upload(1, [...taskSchema(), ...writeTask('stray', { owner_id: userId, status: 'done' }), ...writeTask('o1', { name: 'renamed' }, false)]);
    const error = await c.next();
    if (error.type !== 'json_error') throw new Error(`expected a compensating write, got ${error.type}`);
    const undo = await c.next();
    if (undo.type !== 'download') throw new Error(`expected a download, got ${undo.type}`);
    expect(error).toMatchObject({ code: 231, sessionIdent: 1, body: { action: 'Warning', compensatingWriteServerVersion: undo.downloadServerVersion } });
    const rejected = (error.body.rejectedUpdates as Array<{ table: string; pk: string; reason: string }>).map((update) => ({ ...update, pk: decodePrimaryKey(update.pk) }));
    expect(rejected).toEqual([
      { table: 'Task', pk: { type: 'String', value: 'stray' }, reason: expect.stringContaining('outside of the current query view') },
      { table: 'Task', pk: { type: 'String', value: 'o1' }, reason: 'write to "o1" in table "Task" not allowed' },
    ]);
    // The client is put back: the stray task erased, o1 as stored.
    expect(objectsOf([undo]).erased).toEqual(['Task/stray']);
    expect(c.objects.get('Task')?.get('o1')).toMatchObject({ name: 'open one' });
    expect(await cluster.db('app').collection('Task').findOne({ _id: 'stray' })).toBeNull();
    expect(await cluster.db('app').collection('Task').findOne({ _id: 'o1' })).toMatchObject({ name: 'open one' });
    c.close();
  });

  it('erases what a client wrote out of its view, also when its create met a document written elsewhere that it was never sent', async () => {
    const { client: c, userId } = await client();
    await c.openSession(1, 1, { Task: 'status == "open"' });
    // The session is busy with a large upload when the client's create of a task arrives; the collection gains
    // that task (the user's own, in the view) before the create's turn comes, and the session hears of it only
    // after. The create merges into the stored task and moves it out of the view: allowed by the write filter,
    // and the client must let go of it.
    const tasks = cluster.db('app').collection('Task');
    c.upload(1, [...taskSchema(), ...Array.from({ length: 400 }, (_, i) => writeTask(`busy-${i}`, { owner_id: userId, status: 'open', name: 'busy' })).flat()]);
    c.upload(1, writeTask('met', { owner_id: userId, status: 'done', name: 'created' }));
    await tasks.insertOne({ _id: 'met', owner_id: userId, status: 'open', name: 'stored' });
    await eventually(async () => expect(await tasks.findOne({ _id: 'met' })).toMatchObject({ status: 'done' }));
    // Everything the session sends up to a MARK has arrived: the task is not held, whichever came first.
    c.send({ type: 'mark', sessionIdent: 1, requestIdent: 3 });
    for (;;) if ((await c.next()).type === 'mark') break;
    expect(c.ids('Task')).not.toContain('met');
    c.close();
  });

  it('reaches a subscribed session with an external insert, and erases a document an external update moves out', async () => {
    const { client: c } = await client();
    await c.openSession(1, 1, { Task: 'status == "watched"' });
    const tasks = cluster.db('app').collection('Task');
    // The change feed follows a new app's cluster within its reconcile interval: write until one arrives.
    let n = 0;
    await eventually(
      async () => {
        await tasks.insertOne({ _id: `w${n++}`, owner_id: 'someone', status: 'watched', name: 'watched' });
        await eventually(() => expect(c.ids('Task').length).toBeGreaterThan(0), { timeoutMs: 500 });
      },
      { timeoutMs: 20_000 },
    );
    await tasks.insertOne({ _id: 'w-new', owner_id: 'someone', status: 'watched', name: 'new' });
    await tasks.insertOne({ _id: 'w-other', owner_id: 'someone', status: 'elsewhere', name: 'not watched' });
    await eventually(() => expect(c.objects.get('Task')?.get('w-new')).toMatchObject({ name: 'new' }));
    await tasks.updateOne({ _id: 'w-new' }, { $set: { status: 'elsewhere' } });
    await eventually(() => expect(c.ids('Task')).not.toContain('w-new'));
    // A document moved into the read filter's hidden status leaves too, and one moved in enters.
    await tasks.updateOne({ _id: 'w-other' }, { $set: { status: 'watched' } });
    await eventually(() => expect(c.ids('Task')).toContain('w-other'));
    await tasks.updateOne({ _id: 'w-other' }, { $set: { status: 'hidden' } });
    await eventually(() => expect(c.ids('Task')).not.toContain('w-other'));
    expect(c.ids('Task')).not.toContain('w-other');
    c.close();
  }, 30_000);

  it('answers a MARK after the bootstrap of a QUERY sent before it, with the progress fields realm-core checks', async () => {
    const { client: c, userId } = await client();
    await c.openSession(1, 1, { Task: 'status == "open"' });
    c.send({ type: 'query', sessionIdent: 1, queryVersion: 4, queries: { Task: `status == "bulk" OR owner_id == "${userId}"` } });
    c.send({ type: 'mark', sessionIdent: 1, requestIdent: 11 });
    const bootstrap = await c.bootstrap();
    expect(await c.next()).toEqual({ type: 'mark', sessionIdent: 1, requestIdent: 11 });
    // Every message of the bootstrap names the query version, grows its estimate up to exactly 1, and keeps the
    // download cursor at the latest server version; changesets come from the server's file, at versions > 0
    // that never decrease.
    expect(bootstrap.length).toBeGreaterThan(1);
    expect(bootstrap.map((download) => download.batchState)).toEqual([...bootstrap.slice(1).map(() => 'moreToCome'), 'lastInBatch']);
    const estimates = bootstrap.map((download) => download.progressEstimate);
    expect(estimates.every((estimate, i) => estimate > 0 && estimate <= 1 && (i === 0 || estimate >= (estimates[i - 1] ?? 0)))).toBe(true);
    expect(estimates.at(-1)).toBe(1);
    let previous = 0;
    for (const download of bootstrap) {
      expect(download).toMatchObject({ queryVersion: 4, latestServerVersion: download.downloadServerVersion, latestServerVersionSalt: 0n });
      for (const changeset of download.changesets) {
        expect(changeset.serverVersion).toBeGreaterThanOrEqual(Math.max(previous, 1));
        expect(changeset.serverVersion).toBeLessThanOrEqual(download.downloadServerVersion);
        expect(changeset.originFileIdent).toBe(SERVER_FILE_IDENT);
        expect(changeset.originFileIdent).not.toBe(c.file?.ident);
        previous = changeset.serverVersion;
      }
    }
    // Steady state: an acknowledgement carries the current query version, batch state 2 and estimate 1, and
    // moves the upload cursor to the uploaded version.
    const upload = c.upload(1, [...taskSchema(), ...writeTask('progress-1', { owner_id: userId, status: 'mine', name: 'mine' })]);
    const ack = await c.next();
    expect(ack).toMatchObject({ type: 'download', queryVersion: 4, batchState: 'steadyState', progressEstimate: 1, uploadClientVersion: upload.progressClientVersion, downloadClientVersion: upload.progressClientVersion });
    expect(ack.type === 'download' && ack.downloadServerVersion).toBeGreaterThanOrEqual(previous);
    c.close();
  });

  it('ends the connection with an ERROR at session 0 for a bad frame, a BIND of a used ident, an unknown session and a second IDENT', async () => {
    const cases: Array<{ code: number; run: (c: FlexibleTestClient) => Promise<void> }> = [
      { code: 102, run: async (c) => c.ws.send(Buffer.from('hello 1 2 3\n'), { binary: true }) },
      { code: 103, run: async (c) => c.ws.send(Buffer.from('query 1 x 2\n{}'), { binary: true }) },
      {
        code: 107,
        run: async (c) => {
          await c.openSession(1, 1, { Task: 'status == "open"' });
          c.send({ type: 'bind', sessionIdent: 1, data: {}, token: '', needClientFileIdent: true, isSubserver: false });
        },
      },
      { code: 106, run: async (c) => c.send({ type: 'mark', sessionIdent: 5, requestIdent: 1 }) },
      {
        code: 109,
        run: async (c) => {
          await c.openSession(1, 1, { Task: 'status == "open"' });
          c.send({ type: 'ident', sessionIdent: 1, clientFileIdent: c.file!.ident, clientFileIdentSalt: c.file!.salt, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n, queryVersion: 1, queries: {} });
        },
      },
    ];
    for (const { code, run } of cases) {
      const { client: c } = await client();
      await run(c);
      const error = c.unread().find((message) => message.type === 'error') ?? (await eventually(() => c.unread().find((message) => message.type === 'error') ?? Promise.reject(new Error('no error yet'))));
      expect(error, `code ${code}`).toMatchObject({ type: 'error', code, sessionIdent: 0, tryAgain: false });
      await eventually(() => expect(c.closed()).toBe(true));
    }
  });

  it('tells a partition-sync client of this app to switch (113), and a flexible client of a partition-sync app (114)', async () => {
    const login = await host.anonymousLogin(clientAppId);
    const partitionClient = await connect(syncUrl(host.url, clientAppId, login.accessToken));
    partitionClient.send({ type: 'bind', sessionIdent: 1, path: '"p"', token: '', needClientFileIdent: true, isSubserver: false });
    expect(await partitionClient.next()).toMatchObject({ type: 'error', code: 113, sessionIdent: 0 });
    const partitionApp = (await host.createApp('partition-app', (app) => partitionSync(app, { read: true, write: true }))).clientAppId;
    const other = await host.anonymousLogin(partitionApp);
    const flexibleClient = await FlexibleTestClient.open(syncUrl(host.url, partitionApp, other.accessToken));
    flexibleClient.send({ type: 'bind', sessionIdent: 1, data: {}, token: '', needClientFileIdent: true, isSubserver: false });
    expect(await flexibleClient.next()).toMatchObject({ type: 'error', code: 114, sessionIdent: 0 });
    partitionClient.close();
    flexibleClient.close();
  });

  it('refuses a client schema change outside development mode with 225 and ApplicationBug', async () => {
    const { client: c } = await client();
    await c.openSession(1, 1, { Task: 'status == "open"' });
    c.upload(1, [...taskSchema(), { type: 'AddColumn', table: 'Task', field: 'extra', valueType: 'Int', nullable: true, collectionType: 'Single', keyType: 'Null' }]);
    const error = await c.next();
    expect(error).toMatchObject({ type: 'json_error', code: 225, sessionIdent: 1, body: { action: 'ApplicationBug', shouldClientReset: false } });
    expect(error.type === 'json_error' && error.body.message).toMatch(/extra.*developer mode is disabled/);
    // The session ended; its client unbinds and gets no UNBOUND, and the connection stays.
    c.send({ type: 'unbind', sessionIdent: 1 });
    c.send({ type: 'ping', timestamp: 3, rtt: 0 });
    expect(await c.next()).toMatchObject({ type: 'pong', timestamp: 3 });
    c.close();
  });

  it('restarts live sessions with 200 (Transient) when a deploy changes the rules, and leaves them alone otherwise', async () => {
    const { client: c } = await client();
    await c.openSession(1, 1, { Task: 'status == "open"' });
    const config = emptyApp('flexible-sync');
    flexibleApp(config);
    // A deploy that adds a function changes nothing a session depends on.
    config.functions.push({ config: { name: 'unrelated', private: false }, source: 'exports = () => 1;' });
    await host.redeploy(appId, config);
    c.send({ type: 'mark', sessionIdent: 1, requestIdent: 21 });
    expect(await c.next()).toEqual({ type: 'mark', sessionIdent: 1, requestIdent: 21 });
    // One that changes the role's read filter restarts the session.
    const role = config.services[0]?.collectionRules[0]?.roles?.[0] as { document_filters: { read: unknown } };
    role.document_filters.read = { status: { $nin: ['hidden', 'done'] } };
    await host.redeploy(appId, config);
    expect(await c.next()).toMatchObject({ type: 'json_error', code: 200, sessionIdent: 1, body: { action: 'Transient', tryAgain: true, shouldClientReset: false } });
    // Rebinding with the same file and query version gets the view under the new rules.
    const again = await FlexibleTestClient.resume(syncUrl(host.url, clientAppId, (await host.anonymousLogin(clientAppId)).accessToken), c, 1, 1, { Task: 'status == "open"' });
    await again.bootstrap();
    expect(again.unread()).toEqual([]);
    c.close();
    again.close();
  });

  it('inserts asymmetric objects and never syncs them back; a subscription to them is a query error', async () => {
    const { client: c } = await client();
    await c.openSession(1, 1, { Task: 'status == "open"' });
    const log = { type: 'String', value: 'log-1' } as const;
    c.upload(1, [
      { type: 'AddTable', table: 'Log', spec: { kind: 'TopLevel', asymmetric: true, pkField: '_id', pkType: 'String', pkNullable: false } },
      { type: 'AddColumn', table: 'Log', field: 'message', valueType: 'String', nullable: true, collectionType: 'Single', keyType: 'Null' },
      { type: 'CreateObject', table: 'Log', object: log },
      { type: 'Update', table: 'Log', object: log, field: 'message', path: [], value: { type: 'String', value: 'hello' }, isDefault: false, priorSize: 0 },
    ]);
    const ack = await c.next();
    expect(ack.type === 'download' && objectsOf([ack])).toEqual({ created: [], erased: [] });
    expect(await cluster.db('app').collection('Log').findOne({ _id: 'log-1' })).toMatchObject({ message: 'hello' });
    c.send({ type: 'query', sessionIdent: 1, queryVersion: 2, queries: { Log: 'TRUEPREDICATE' } });
    expect(await c.next()).toMatchObject({ type: 'query_error', code: 226, queryVersion: 2 });
    c.close();
  });
});
