import { type AppConfig } from '@tessera/app-config';
import { decodeClientMessage, parseChangeset, type UploadMessage } from '@tessera/sync-protocol';
import { recordedFrames } from './recordings';
import { partitionSync, type SyncHost, startSyncHost } from './sync-host';
import { connect, openSync, realmJsProtocols, type SyncTestClient, syncUrl } from './sync-test-client';

// The sync service mounted by the real host (standalone, random port), spoken to over a real WebSocket
// with the protocol library's codec, as realm-core's client speaks it.

const permissions = {
  read: { '%%partition': { $in: ['p1', 'shared', 'readonly', 42] } },
  write: { '%%partition': { $in: ['p1', 'shared', 42] } },
};

const configure = (type: string) => (app: AppConfig) => partitionSync(app, permissions, type);

/**
 * A client upload of recording a: `schema` is the first (AddTable and AddColumn only), `data` the one that
 * creates three objects in partition "p1".
 */
function recordedUpload(which: 'schema' | 'data' = 'schema'): UploadMessage {
  const prefix = which === 'schema' ? 'upload 1 0 373 ' : 'upload 1 1 1793 ';
  const frame = recordedFrames('a-first-open-and-create.jsonl').find((candidate) => candidate.header.startsWith(prefix));
  const message = decodeClientMessage(frame!.bytes);
  if (message.type !== 'upload') throw new Error('expected an upload');
  delete message.wireBody;
  return message;
}

describe('sync service: partition-based sync over the realm-sync WebSocket', () => {
  let host: SyncHost;
  const apps = { string: '', long: '', none: '' };
  const login = async (clientAppId: string): Promise<string> => (await host.login(clientAppId)).access;

  const openSession = (client: SyncTestClient, sessionIdent: number, path: string) => client.openSession(sessionIdent, path);

  beforeAll(async () => {
    host = await startSyncHost();
    apps.string = await host.createApp('sync-string', configure('string'));
    apps.long = await host.createApp('sync-long', configure('long'));
    apps.none = await host.createApp('sync-none', (app) => app.authProviders.push({ name: 'anon-user', type: 'anon-user' }));
  });

  afterAll(async () => {
    await host?.close();
  });

  describe('upgrade', () => {
    it('answers 404 for an unknown app before upgrading', async () => {
      const outcome = await openSync(syncUrl(host.url, 'no-such-app-abcde', 'token'));
      expect(outcome).toMatchObject({ status: 404 });
      expect(JSON.parse((outcome as { body: string }).body)).toMatchObject({ error_code: 'AppNotFound' });
    });

    it('answers 401 without an access token, with a forged one and with a token of another app', async () => {
      expect(await openSync(syncUrl(host.url, apps.string, undefined))).toMatchObject({ status: 401 });
      const token = await login(apps.string);
      const [header, payload] = token.split('.');
      expect(await openSync(syncUrl(host.url, apps.string, `${header}.${payload}.AAAA`))).toMatchObject({ status: 401 });
      const otherAppToken = await login(apps.long);
      expect(await openSync(syncUrl(host.url, apps.string, otherAppToken))).toMatchObject({ status: 401 });
    });

    it('answers 401 for a refresh token in place of the access token', async () => {
      const { refresh } = await host.login(apps.string);
      expect(await openSync(syncUrl(host.url, apps.string, refresh))).toMatchObject({ status: 401 });
    });

    it('answers 401 once the user logged out, though the access token has not expired', async () => {
      const { access, refresh } = await host.login(apps.string);
      const client = await connect(syncUrl(host.url, apps.string, access));
      client.close();
      const logout = await fetch(`${host.url}/api/client/v2.0/auth/session`, { method: 'DELETE', headers: { authorization: `Bearer ${refresh}` } });
      expect(logout.status).toBeLessThan(300);
      expect(await openSync(syncUrl(host.url, apps.string, access))).toMatchObject({ status: 401 });
    });

    it('accepts the highest offered protocol version it speaks', async () => {
      const token = await login(apps.string);
      const client = await connect(syncUrl(host.url, apps.string, token));
      expect(client.protocol).toBe('com.mongodb.realm-sync#14');
      client.close();
      const older = await connect(syncUrl(host.url, apps.string, token), ['com.mongodb.realm-sync#15', 'com.mongodb.realm-sync#9', 'com.mongodb.realm-sync#3']);
      expect(older.protocol).toBe('com.mongodb.realm-sync#9');
      older.close();
    });

    it('refuses an upgrade that offers no version it speaks', async () => {
      const token = await login(apps.string);
      expect(await openSync(syncUrl(host.url, apps.string, token), ['com.mongodb.realm-query-sync#1', 'com.mongodb.realm-sync#1'])).toMatchObject({ status: 400 });
      expect(realmJsProtocols).toHaveLength(13);
    });
  });

  describe('sessions', () => {
    it('answers a BIND on an app without partition-based sync with a JSON_ERROR the client accepts', async () => {
      const client = await connect(syncUrl(host.url, apps.none, await login(apps.none)));
      client.send({ type: 'bind', sessionIdent: 1, path: '"p1"', token: '', needClientFileIdent: true, isSubserver: false });
      const error = await client.next();
      expect(error).toMatchObject({ type: 'json_error', code: 201, sessionIdent: 1, body: { action: 'ApplicationBug', tryAgain: false, message: expect.stringContaining('not enabled') } });
      client.close();
    });

    it('refuses a partition value of the wrong type with ErrorIllegalStorePath (spec 7)', async () => {
      const client = await connect(syncUrl(host.url, apps.long, await login(apps.long)));
      client.send({ type: 'bind', sessionIdent: 1, path: '"p1"', token: '', needClientFileIdent: true, isSubserver: false });
      expect(await client.next()).toMatchObject({
        type: 'json_error',
        code: 204,
        sessionIdent: 1,
        body: { message: 'attempted to bind on illegal partition, expected partition to have type long but found string', action: 'ApplicationBug' },
      });
      // The session ident is free again after UNBIND; a value of the right type binds.
      client.send({ type: 'unbind', sessionIdent: 1 });
      client.send({ type: 'bind', sessionIdent: 2, path: '42', token: '', needClientFileIdent: true, isSubserver: false });
      expect(await client.next()).toMatchObject({ type: 'ident', sessionIdent: 2, clientFileIdent: 2 });
      client.close();
    });

    it('refuses a partition the user may not read with permission denied', async () => {
      const client = await connect(syncUrl(host.url, apps.string, await login(apps.string)));
      client.send({ type: 'bind', sessionIdent: 1, path: '"secret"', token: '', needClientFileIdent: true, isSubserver: false });
      expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 1, body: { action: 'ApplicationBug' } });
      client.close();
    });

    it('lets a read-only user download but refuses its uploads of data', async () => {
      const client = await connect(syncUrl(host.url, apps.string, await login(apps.string)));
      const { download } = await openSession(client, 1, '"readonly"');
      expect(download).toMatchObject({ type: 'download', sessionIdent: 1, changesets: [] });
      // Its schema goes through (a read-only realm still writes its schema when it opens) ...
      client.send({ ...recordedUpload('schema'), sessionIdent: 1 });
      expect(await client.next()).toMatchObject({ type: 'download', sessionIdent: 1, downloadServerVersion: 1, uploadClientVersion: 4 });
      // ... its objects do not.
      client.send({ ...recordedUpload('data'), sessionIdent: 1 });
      expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 1, body: { message: expect.stringContaining('write permission') } });
      client.close();
    });

    it('answers PING with PONG and UNBIND with UNBOUND', async () => {
      const client = await connect(syncUrl(host.url, apps.string, await login(apps.string)));
      client.send({ type: 'ping', timestamp: 123456, rtt: 0 });
      expect(await client.next()).toEqual({ type: 'pong', timestamp: 123456 });
      await openSession(client, 3, '"shared"');
      client.send({ type: 'unbind', sessionIdent: 3 });
      expect(await client.next()).toEqual({ type: 'unbound', sessionIdent: 3 });
      client.close();
    });

    it('rejects an IDENT with a salt the server never issued, asking for a client reset', async () => {
      const client = await connect(syncUrl(host.url, apps.string, await login(apps.string)));
      client.send({ type: 'bind', sessionIdent: 1, path: '"shared"', token: '', needClientFileIdent: true, isSubserver: false });
      const ident = await client.next();
      if (ident.type !== 'ident') throw new Error('expected ident');
      client.send({ type: 'ident', sessionIdent: 1, clientFileIdent: ident.clientFileIdent, clientFileIdentSalt: ident.clientFileIdentSalt + 1n, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n });
      expect(await client.next()).toMatchObject({ type: 'json_error', code: 211, sessionIdent: 1, body: { action: 'ClientReset', shouldClientReset: true } });
      client.close();
    });

    it("delivers one client's upload to another client of the partition as a DOWNLOAD, and MARKs download completion", async () => {
      const url = syncUrl(host.url, apps.string, await login(apps.string));
      const writer = await connect(url);
      const reader = await connect(syncUrl(host.url, apps.string, await login(apps.string)));
      const a = await openSession(writer, 1, '"p1"');
      const b = await openSession(reader, 1, '"p1"');
      expect(a.fileIdent).not.toBe(b.fileIdent);

      const upload = recordedUpload();
      writer.send({ ...upload, sessionIdent: 1 });
      // The uploader learns its upload was integrated: an empty DOWNLOAD whose upload cursor moved.
      expect(await writer.next()).toMatchObject({ type: 'download', sessionIdent: 1, downloadServerVersion: 1, latestServerVersion: 1, uploadClientVersion: upload.progressClientVersion, changesets: [] });

      const download = await reader.next();
      if (download.type !== 'download') throw new Error(`expected a download, got ${download.type}`);
      expect(download).toMatchObject({ sessionIdent: 1, downloadServerVersion: 1, latestServerVersion: 1, uploadClientVersion: 0 });
      expect(download.changesets).toHaveLength(1);
      const [sent] = upload.changesets;
      const [received] = download.changesets;
      expect(received).toMatchObject({ serverVersion: 1, originFileIdent: a.fileIdent, originTimestamp: sent.originTimestamp, lastIntegratedClientVersion: 0 });
      expect(parseChangeset(received.changeset).instructions).toEqual(parseChangeset(sent.changeset).instructions);

      reader.send({ type: 'mark', sessionIdent: 1, requestIdent: 7 });
      expect(await reader.next()).toEqual({ type: 'mark', sessionIdent: 1, requestIdent: 7 });
      expect(reader.unread()).toEqual([]);
      writer.close();
      reader.close();
    });
  });
});
