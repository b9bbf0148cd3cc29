import { AppRegistry, DataSources, DeployedApps, LogStore } from '@tessera/platform';
import { eventually } from '@tessera/testing';
import { type AppConfig } from '@tessera/app-config';
import { partitionSync, type SyncHost, startSyncHost } from './sync-host';
import { connect, createTaskUpload, type SyncTestClient, syncUrl } from './sync-test-client';

// Partition permissions with the whole user (spec 2.6, permission rules 1 and 4): `%%user` at BIND is the
// user as rules see it everywhere else, custom user data and `%function` included, read afresh at each
// BIND. Spoken over a real WebSocket to the real host with the protocol library's codec.

/** The configuration: read and write for the teams listed in the user's custom data. */
const teamPermission = { '%%partition': { '%in': '%%user.custom_data.teams' } };

function withCustomUserData(app: AppConfig, permissions: { read?: unknown; write?: unknown }): void {
  partitionSync(app, permissions);
  app.services.push({ config: { id: 'svc1', name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'SyncPermissionsCluster' } }, collectionRules: [], rules: [], webhooks: [] });
  app.settings.custom_user_data_config = { enabled: true, mongo_service_id: 'svc1', database_name: 'app', collection_name: 'profiles', user_id_field: 'userId' };
}

describe('sync permissions with the whole user', () => {
  let host: SyncHost;
  const apps = { teams: '', readonly: '', fn: '' };

  /** A new anonymous user of the app, its id, and a sync connection for it. */
  const userOf = async (clientAppId: string): Promise<{ userId: string; client: SyncTestClient }> => {
    const { access } = await host.login(clientAppId);
    const claims = JSON.parse(Buffer.from(access.split('.')[1], 'base64url').toString('utf8')) as { sub: string };
    return { userId: claims.sub, client: await connect(syncUrl(host.url, clientAppId, access)) };
  };

  /** The custom user data collection, as an operator or a function changes it in the cluster. */
  const profiles = async (clientAppId: string) => {
    const app = await host.nest.get(DeployedApps).byClientAppId(clientAppId);
    return host.nest.get(DataSources).forService(app.config, 'mongodb-atlas').client.db('app').collection('profiles');
  };
  const setTeams = async (clientAppId: string, userId: string, teams: string[], extra: Record<string, unknown> = {}) => {
    await (await profiles(clientAppId)).replaceOne({ userId }, { userId, teams, ...extra }, { upsert: true });
  };

  beforeAll(async () => {
    host = await startSyncHost();
    apps.teams = await host.createApp('sync-perm-teams', (app) => withCustomUserData(app, { read: teamPermission, write: teamPermission }));
    apps.readonly = await host.createApp('sync-perm-readonly', (app) => withCustomUserData(app, { read: { '%%partition': { '%in': '%%user.custom_data.readable' } }, write: teamPermission }));
    apps.fn = await host.createApp('sync-perm-function', (app) => {
      partitionSync(app, { read: { '%%true': { '%function': { name: 'mayWrite', arguments: ['%%partition', '%%user.id', '%%user.identities'] } } }, write: false });
      app.functions.push({ config: { name: 'mayWrite', private: true }, source: 'exports = (partition, userId, identities) => { if (partition === "boom") throw new Error("boom"); return partition === `own-${userId}` && identities[0].providerType === "anon-user"; };' });
    });
  });

  afterAll(async () => {
    await host?.close();
  });

  it('allows a BIND on a team listed in custom user data, and applies a change of the list at the next BIND', async () => {
    const { userId, client } = await userOf(apps.teams);
    await setTeams(apps.teams, userId, ['red']);
    const { download } = await client.openSession(1, '"red"');
    expect(download).toMatchObject({ type: 'download', sessionIdent: 1 });
    client.send({ type: 'bind', sessionIdent: 2, path: '"blue"', token: '', needClientFileIdent: true, isSubserver: false });
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 2, body: { action: 'ApplicationBug' } });
    client.send({ type: 'unbind', sessionIdent: 2 });

    // The user joins blue and leaves red: the same connection's next BINDs see it.
    await setTeams(apps.teams, userId, ['blue']);
    expect((await client.openSession(3, '"blue"')).download).toMatchObject({ type: 'download', sessionIdent: 3 });
    client.send({ type: 'bind', sessionIdent: 4, path: '"red"', token: '', needClientFileIdent: true, isSubserver: false });
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 4 });
    // A team member writes: write permission comes from the same custom data.
    client.send(createTaskUpload(3, 'blue', 't1'));
    expect(await client.next()).toMatchObject({ type: 'download', sessionIdent: 3, downloadServerVersion: 1, uploadClientVersion: 2 });
    client.close();
  });

  it('keeps the connection and its other sessions alive when a refused BIND was followed by pipelined IDENT and MARK', async () => {
    const { userId, client } = await userOf(apps.teams);
    await setTeams(apps.teams, userId, ['green']);
    await client.openSession(1, '"green"');
    // What realm-core sends for an existing file without waiting for the answer to its BIND.
    client.send({ type: 'bind', sessionIdent: 2, path: '"purple"', token: '', needClientFileIdent: false, isSubserver: false });
    client.send({ type: 'ident', sessionIdent: 2, clientFileIdent: 5, clientFileIdentSalt: 77n, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n });
    client.send({ type: 'mark', sessionIdent: 2, requestIdent: 1 });
    client.send({ type: 'upload', sessionIdent: 2, progressClientVersion: 0, progressServerVersion: 0, lockedServerVersion: 0, changesets: [] });
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 2 });

    // The other session still syncs: an upload is acknowledged and a MARK answered.
    client.send(createTaskUpload(1, 'green', 'g1'));
    expect(await client.next()).toMatchObject({ type: 'download', sessionIdent: 1, downloadServerVersion: 1 });
    client.send({ type: 'mark', sessionIdent: 1, requestIdent: 9 });
    expect(await client.next()).toEqual({ type: 'mark', sessionIdent: 1, requestIdent: 9 });
    // The refused ident is freed by the client's UNBIND (no UNBOUND), then binds again once allowed.
    client.send({ type: 'unbind', sessionIdent: 2 });
    await setTeams(apps.teams, userId, ['green', 'purple']);
    expect((await client.openSession(2, '"purple"')).download).toMatchObject({ type: 'download', sessionIdent: 2 });
    expect(client.unread()).toEqual([]);
    expect(client.closed).toBe(false);

    // The refusal is in the app's logs with app, user and partition.
    const app = await host.nest.get(AppRegistry).getByClientAppId(apps.teams);
    const logs = await eventually(async () => {
      const entries = await host.nest.get(LogStore).list(app._id, { types: ['SYNC_ERROR'] });
      const refusal = entries.find((entry) => entry['partition'] === '"purple"' && entry.user_id === userId);
      if (!refusal) throw new Error('no SYNC_ERROR entry yet');
      return refusal;
    });
    expect(logs).toMatchObject({ type: 'SYNC_ERROR', error_code: 'permissionDenied (206)', sync_error_kind: 'refused', error: expect.stringContaining('permission') });
    client.close();
  });

  it('refuses a partition without read permission, and the writes of a user who may only read', async () => {
    const { userId, client } = await userOf(apps.readonly);
    await setTeams(apps.readonly, userId, ['mine'], { readable: ['mine', 'news'] });
    client.send({ type: 'bind', sessionIdent: 1, path: '"secret"', token: '', needClientFileIdent: true, isSubserver: false });
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 1, body: { tryAgain: false } });
    client.send({ type: 'unbind', sessionIdent: 1 });

    await client.openSession(2, '"news"');
    client.send(createTaskUpload(2, 'news', 'n1'));
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 2, body: { message: expect.stringContaining('write permission') } });
    // Write implies read: the user's own team is writable.
    await client.openSession(3, '"mine"');
    client.send(createTaskUpload(3, 'mine', 'm1'));
    expect(await client.next()).toMatchObject({ type: 'download', sessionIdent: 3, downloadServerVersion: 1 });
    client.close();
  });

  it('calls a %function permission with the partition, the user id and identities, and refuses the BIND when it throws', async () => {
    const { userId, client } = await userOf(apps.fn);
    expect((await client.openSession(1, JSON.stringify(`own-${userId}`))).download).toMatchObject({ type: 'download', sessionIdent: 1 });
    client.send({ type: 'bind', sessionIdent: 2, path: '"own-somebody-else"', token: '', needClientFileIdent: true, isSubserver: false });
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 2 });
    // A function that throws refuses the BIND; the connection and its other session go on.
    client.send({ type: 'bind', sessionIdent: 3, path: '"boom"', token: '', needClientFileIdent: true, isSubserver: false });
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 206, sessionIdent: 3, body: { message: expect.stringContaining('permission check failed') } });
    client.send({ type: 'mark', sessionIdent: 1, requestIdent: 1 });
    expect(await client.next()).toEqual({ type: 'mark', sessionIdent: 1, requestIdent: 1 });
    client.close();
  });
});
