import { type DataSourceClient } from '@tessera/datastore';
import { parseChangeset } from '@tessera/sync-protocol';
import { AppDeletion, FlexibleHeldNamespace } from '@tessera/sync-service';
import { eventually } from '@tessera/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/test-host';
import { FLEXIBLE_CLUSTER, flexibleApp, FlexibleTestClient, taskSchema, writeTask } from './flexible-test-client';
import { syncUrl } from './sync-test-client';

// Issue 17, a client file across connections: a flexible-sync client that comes back (same file, IDENT with
// its download cursor) has the objects that left its view while it was away erased, gets what changed, and
// its re-sent uploads that were integrated before are not applied again. The server keeps per client file
// its upload cursor and what the client holds; a cursor past anything it kept makes the client reset.

describe('flexible sync: a client file that reconnects (protocol level)', () => {
  let host: TestHost;
  let clientAppId: string;
  let cluster: DataSourceClient;

  beforeAll(async () => {
    host = await startTestHost();
    clientAppId = (await host.createApp('flexible-reconnect', flexibleApp)).clientAppId;
    cluster = host.dataSources.forCluster(FLEXIBLE_CLUSTER);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const tasks = () => cluster.db('app').collection('Task');

  async function login(): Promise<{ url: string; userId: string }> {
    const login = await host.anonymousLogin(clientAppId);
    return { url: syncUrl(host.url, clientAppId, login.accessToken), userId: login.userId };
  }

  /** The objects a list of DOWNLOADs creates and erases, as ids. */
  function changes(client: FlexibleTestClient, from: number): { created: string[]; erased: string[] } {
    const created: string[] = [];
    const erased: string[] = [];
    for (const message of client.received.slice(from)) {
      if (message.type !== 'download') continue;
      for (const changeset of message.changesets) {
        for (const instruction of parseChangeset(changeset.changeset).instructions) {
          if (instruction.type === 'CreateObject' && 'value' in instruction.object) created.push(String(instruction.object.value));
          if (instruction.type === 'EraseObject' && 'value' in instruction.object) erased.push(String(instruction.object.value));
        }
      }
    }
    return { created: created.sort(), erased: erased.sort() };
  }

  it('erases what left the view while the client was away and sends what changed or entered', async () => {
    await tasks().insertMany([
      { _id: 'away-1', owner_id: 'someone', status: 'away', name: 'one' },
      { _id: 'away-2', owner_id: 'someone', status: 'away', name: 'two' },
      { _id: 'away-3', owner_id: 'someone', status: 'away', name: 'three' },
    ]);
    const { url } = await login();
    const first = await FlexibleTestClient.open(url);
    await first.openSession(1, 1, { Task: 'status == "away"' });
    expect(first.ids('Task')).toEqual(['away-1', 'away-2', 'away-3']);
    first.close();

    // While it is away: one task leaves the query, one is hidden by the role's read filter, one is renamed,
    // one is deleted and a new one enters.
    await tasks().updateOne({ _id: 'away-1' }, { $set: { status: 'elsewhere' } });
    await tasks().updateOne({ _id: 'away-2' }, { $set: { name: 'two, renamed' } });
    await tasks().deleteOne({ _id: 'away-3' });
    await tasks().insertMany([
      { _id: 'away-4', owner_id: 'someone', status: 'away', name: 'four' },
      { _id: 'away-5', owner_id: 'someone', status: 'elsewhere', name: 'five' },
    ]);

    const second = await FlexibleTestClient.resume(url, first, 1, 1, { Task: 'status == "away"' });
    const answer = await second.bootstrap();
    expect(answer.every((download) => download.queryVersion === 1)).toBe(true);
    expect(changes(second, 0)).toEqual({ created: ['away-2', 'away-4'], erased: ['away-1', 'away-3'] });
    expect(second.ids('Task')).toEqual(['away-2', 'away-4']);
    expect(second.objects.get('Task')?.get('away-2')).toMatchObject({ name: 'two, renamed' });
    // Every version the client is sent comes after the cursor it came back with.
    expect(answer.flatMap((download) => download.changesets.map((changeset) => changeset.serverVersion)).every((version) => version > first.serverVersion)).toBe(true);
    second.close();
  });

  it('erases an object whose erasure the client had not integrated when the connection dropped', async () => {
    await tasks().insertOne({ _id: 'dropped-1', owner_id: 'someone', status: 'dropped', name: 'one' });
    const { url } = await login();
    const first = await FlexibleTestClient.open(url);
    await first.openSession(1, 1, { Task: 'status == "dropped"' });
    const cursor = { serverVersion: first.serverVersion, clientVersion: first.downloadClientVersion };
    // The query change erases the task; the client goes away before it integrates that (its cursor stays).
    first.send({ type: 'query', sessionIdent: 1, queryVersion: 2, queries: { Task: 'status == "nothing"' } });
    await first.bootstrap();
    first.close();

    const second = await FlexibleTestClient.resume(url, first, 1, 1, { Task: 'status == "dropped"' }, cursor);
    second.objects.set('Task', new Map([['dropped-1', { name: 'one' }]]));
    await tasks().updateOne({ _id: 'dropped-1' }, { $set: { status: 'gone' } });
    await second.bootstrap();
    expect(second.ids('Task')).toEqual([]);
    second.close();
  });

  it('does not apply again an upload re-sent after a reconnect, and applies the next one', async () => {
    const { url, userId } = await login();
    const first = await FlexibleTestClient.open(url);
    await first.openSession(1, 1, { Task: `owner_id == "${userId}"` });
    const upload = first.upload(1, [...taskSchema(), ...writeTask('resent', { owner_id: userId, status: 'open', name: 'first' })]);
    expect(await first.next()).toMatchObject({ type: 'download', uploadClientVersion: upload.progressClientVersion });
    first.close();
    // Someone else renames the task meanwhile; the client never learnt that its upload was acknowledged.
    await tasks().updateOne({ _id: 'resent' }, { $set: { name: 'renamed elsewhere' } });

    const second = await FlexibleTestClient.resume(url, first, 1, 1, { Task: `owner_id == "${userId}"` }, { clientVersion: 0 });
    second.send({ ...upload, progressServerVersion: first.serverVersion, lockedServerVersion: first.serverVersion });
    const answer = await second.bootstrap();
    // The bootstrap tells the client its upload was integrated, and carries the task as it is now.
    expect(answer.at(-1)?.uploadClientVersion).toBe(upload.progressClientVersion);
    expect(second.objects.get('Task')?.get('resent')).toMatchObject({ name: 'renamed elsewhere' });
    expect(await tasks().findOne({ _id: 'resent' })).toMatchObject({ name: 'renamed elsewhere' });
    expect(second.unread()).toEqual([]);

    const next = second.upload(1, writeTask('resent', { name: 'second' }, false));
    expect(await second.next()).toMatchObject({ type: 'download', uploadClientVersion: next.progressClientVersion });
    await eventually(async () => expect(await tasks().findOne({ _id: 'resent' })).toMatchObject({ name: 'second' }));
    second.close();
  });

  it('resets a file whose cursor is past anything the server kept, and a file or salt it never issued', async () => {
    const { url } = await login();
    const first = await FlexibleTestClient.open(url);
    await first.openSession(1, 1, { Task: 'status == "open"' });
    first.close();
    const ahead = await FlexibleTestClient.resume(url, first, 1, 1, { Task: 'status == "open"' }, { serverVersion: first.serverVersion + 1_000_000 });
    expect(await ahead.next(10_000)).toMatchObject({ type: 'json_error', code: 222, sessionIdent: 1, body: { action: 'ClientReset', shouldClientReset: true, isRecoveryModeDisabled: false } });
    ahead.close();

    const forged = Object.assign(Object.create(FlexibleTestClient.prototype) as FlexibleTestClient, { file: { ident: 987_654, salt: 1n }, objects: new Map(), pending: [], serverVersion: 0, downloadClientVersion: 0, clientVersion: 1 });
    const unknown = await FlexibleTestClient.resume(url, forged, 1, 1, { Task: 'status == "open"' });
    expect(await unknown.next()).toMatchObject({ type: 'json_error', code: 208, sessionIdent: 1, body: { action: 'ClientReset' } });
    unknown.close();
    const salted = Object.assign(Object.create(FlexibleTestClient.prototype) as FlexibleTestClient, { file: { ...first.file!, salt: first.file!.salt + 1n }, objects: new Map(), pending: [], serverVersion: 0, downloadClientVersion: 0, clientVersion: 1 });
    const wrongSalt = await FlexibleTestClient.resume(url, salted, 1, 1, { Task: 'status == "open"' });
    expect(await wrongSalt.next()).toMatchObject({ type: 'json_error', code: 211, sessionIdent: 1, body: { action: 'ClientReset' } });
    // The refused session's client unbinds; the connection stays usable.
    wrongSalt.send({ type: 'unbind', sessionIdent: 1 });
    wrongSalt.send({ type: 'ping', timestamp: 5, rtt: 0 });
    expect(await wrongSalt.next()).toMatchObject({ type: 'pong', timestamp: 5 });
    wrongSalt.close();
  }, 30_000);

  it("keeps what a client holds in the platform cluster, off the app's change feed, and drops it with the app", async () => {
    const doomed = await host.createApp('flexible-held', flexibleApp);
    await tasks().insertOne({ _id: 'held-1', owner_id: 'someone', status: 'held', name: 'one' });
    const feed = cluster.watch();
    try {
      const login = await host.anonymousLogin(doomed.clientAppId);
      const url = syncUrl(host.url, doomed.clientAppId, login.accessToken);
      const first = await FlexibleTestClient.open(url);
      await first.openSession(1, 1, { Task: 'status == "held"' });
      expect(first.ids('Task')).toEqual(['held-1']);
      first.close();
      const snapshots = host.dataSources.platform().db(FlexibleHeldNamespace.db).collection(FlexibleHeldNamespace.coll);
      const ofApp = { _id: { $gte: `${doomed.appId}/`, $lt: `${doomed.appId}/\uffff` } };
      await eventually(async () => expect((await snapshots.find(ofApp).toArray()).map((doc) => doc['held'])).toEqual([expect.objectContaining({ objects: [{ t: 'Task', id: 'held-1' }] })]));
      // The reconnect uses it: the task left the view meanwhile and is erased.
      await tasks().updateOne({ _id: 'held-1' }, { $set: { status: 'let go' } });
      const second = await FlexibleTestClient.resume(url, first, 1, 1, { Task: 'status == "held"' });
      await second.bootstrap();
      expect(changes(second, 0).erased).toEqual(['held-1']);
      second.close();
      // Only the task's own changes reached the app's change feed: no snapshot, no upload cursor.
      const seen: string[] = [];
      for (let event = await feed.tryNext(); event; event = await feed.tryNext()) seen.push(`${event.ns.db}.${event.ns.coll ?? ''}`);
      expect(seen.filter((ns) => ns !== 'app.Task')).toEqual([]);

      await host.nest.get(AppDeletion).appDeleted(doomed.appId);
      expect(await snapshots.countDocuments(ofApp)).toBe(0);
    } finally {
      await feed.close();
    }
  });
});
