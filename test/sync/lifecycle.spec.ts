import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { SyncCompaction } from '@tessera/sync-service';
import { startTracing, type Tracing } from '@tessera/telemetry';
import { eventually } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { type MetricReader, startMetricReader } from '../support/metric-reader';
import { createSyncApp, userIdOf } from './sync-admin-app';
import { type SyncHost, startSyncHost } from './sync-host';
import { connect, createTaskUpload, openSync, type SyncTestClient, syncUrl } from './sync-test-client';

// The sync lifecycle of spec 3 over the admin API, as an operator drives it, seen by protocol-level clients
// over real WebSockets: terminate, re-enable and the client resets realm-core expects, clients that synced
// elsewhere, compaction past clients offline too long, users disabled or deleted, and what operations see.

const password = 'sync-lifecycle-password';

describe('sync lifecycle (spec 3) and operations', () => {
  let host: SyncHost;
  let admin: AdminSession;
  let tracing: Tracing;
  const spans = new InMemorySpanExporter();
  let metrics: MetricReader;

  const createApp = (name: string, sync: Record<string, unknown> = {}): Promise<{ appId: string; clientAppId: string }> => createSyncApp(admin, name, sync);

  /** Changes sync/config.json through a pull and a push, as realm-cli does; returns the deployed document. */
  const changeSync = async (appId: string, change: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const files = await admin.pull(appId);
    files.set('sync/config.json', JSON.stringify({ ...(JSON.parse(files.get('sync/config.json')!) as Record<string, unknown>), ...change }));
    const pushed = await admin.push(appId, files);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    return JSON.parse((await admin.pull(appId)).get('sync/config.json')!) as Record<string, unknown>;
  };

  const clientOf = async (clientAppId: string): Promise<{ client: SyncTestClient; access: string; userId: string }> => {
    const { access } = await host.login(clientAppId);
    const userId = userIdOf(access);
    return { client: await connect(syncUrl(host.url, clientAppId, access)), access, userId };
  };

  /** A client coming back with a file it synced before: BIND without a new ident, then IDENT with its own. */
  const resume = (client: SyncTestClient, sessionIdent: number, path: string, file: { fileIdent: number; salt: bigint }, serverVersion = 0, serverVersionSalt = 0n) => {
    client.send({ type: 'bind', sessionIdent, path, token: '', needClientFileIdent: false, isSubserver: false });
    client.send({
      type: 'ident',
      sessionIdent,
      clientFileIdent: file.fileIdent,
      clientFileIdentSalt: file.salt,
      downloadServerVersion: serverVersion,
      downloadClientVersion: 0,
      latestServerVersion: serverVersion,
      latestServerVersionSalt: serverVersionSalt,
    });
  };

  beforeAll(async () => {
    // Registered before the host starts, as main.ts registers them before the application.
    tracing = startTracing({ serviceName: 'sync-lifecycle-test', exporter: spans, sampler: 'always_on' });
    metrics = startMetricReader('sync-lifecycle-test');
    host = await startSyncHost({ settings: { TESSERA_ADMIN_PASSWORD: password, TESSERA_ALLOW_NEW_PARTITION_SYNC: 'true' } });
    admin = await AdminSession.login(host, 'admin', password);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    await tracing?.shutdown();
    await metrics?.telemetry.shutdown();
  });

  it('terminate ends live sessions and refuses uploads; clients wait quietly; re-enable resets them with recovery', async () => {
    const { appId, clientAppId } = await createApp('cycle');
    const { client: writer } = await clientOf(clientAppId);
    const { client: other } = await clientOf(clientAppId);
    const file = await writer.openSession(1, '"p"');
    await other.openSession(1, '"p"');
    writer.send(createTaskUpload(1, 'p', 'before'));
    const acknowledged = await writer.next();
    expect(acknowledged).toMatchObject({ type: 'download', downloadServerVersion: 1 });
    expect(await other.next()).toMatchObject({ type: 'download', downloadServerVersion: 1 });

    const terminated = await changeSync(appId, { state: 'disabled' });
    expect(terminated['last_disabled']).toEqual(expect.any(Number));
    // The live session ends with an error the client retries quietly (Transient), without a reset.
    const ended = { type: 'json_error', code: 201, sessionIdent: 1, body: { action: 'Transient', tryAgain: true, shouldClientReset: false, message: expect.stringContaining('terminated') } };
    expect(await writer.next()).toMatchObject(ended);
    // An upload sent now is refused, never acknowledged.
    other.send(createTaskUpload(1, 'p', 'during', 3, 1));
    expect(await other.next()).toMatchObject(ended);
    expect(other.unread()).toEqual([]);
    // A BIND while terminated gets the same answer; the connection stays open.
    writer.send({ type: 'unbind', sessionIdent: 1 });
    writer.send({ type: 'bind', sessionIdent: 2, path: '"p"', token: '', needClientFileIdent: true, isSubserver: false });
    expect(await writer.next()).toMatchObject({ ...ended, sessionIdent: 2 });
    writer.send({ type: 'unbind', sessionIdent: 2 });

    // Re-enabled: the client's file belongs to the history before the terminate, so it must reset;
    // recovery mode is on by default (is_recovery_mode_disabled absent).
    await changeSync(appId, { state: 'enabled' });
    const version = acknowledged.type === 'download' ? acknowledged.latestServerVersion : 0;
    const salt = acknowledged.type === 'download' ? acknowledged.latestServerVersionSalt : 0n;
    resume(writer, 3, '"p"', file, version, salt);
    expect(await writer.next()).toMatchObject({
      type: 'json_error',
      code: 208,
      sessionIdent: 3,
      body: { action: 'ClientReset', shouldClientReset: true, isRecoveryModeDisabled: false, tryAgain: false },
    });
    // The reset itself: a fresh file downloads the partition's new history, and the recovered change uploads.
    writer.send({ type: 'unbind', sessionIdent: 3 });
    await writer.openSession(4, '"p"');
    writer.send(createTaskUpload(4, 'p', 'before'));
    expect(await writer.next()).toMatchObject({ type: 'download', sessionIdent: 4, uploadClientVersion: 2 });
    writer.close();
    other.close();
  });

  it('resets without recovery when the app disabled recovery mode', async () => {
    const { appId, clientAppId } = await createApp('norecovery', { is_recovery_mode_disabled: true });
    const { client } = await clientOf(clientAppId);
    const file = await client.openSession(1, '"q"');
    client.send({ type: 'unbind', sessionIdent: 1 });
    expect(await client.next()).toEqual({ type: 'unbound', sessionIdent: 1 });
    await changeSync(appId, { state: 'disabled' });
    await changeSync(appId, { state: 'enabled' });
    resume(client, 2, '"q"', file);
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 208, sessionIdent: 2, body: { action: 'ClientResetNoRecovery', isRecoveryModeDisabled: true, shouldClientReset: true } });
    client.close();
  });

  it('resets a client whose file ident or salt this server never issued (it synced with App Services)', async () => {
    const { clientAppId } = await createApp('migrated');
    const { client } = await clientOf(clientAppId);
    resume(client, 1, '"m"', { fileIdent: 918_273, salt: 123_456_789n }, 57, 987_654n);
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 208, sessionIdent: 1, body: { action: 'ClientReset', shouldClientReset: true } });
    // A known ident with a salt of another server resets too.
    const issued = await client.openSession(2, '"m"');
    resume(client, 3, '"m"', { fileIdent: issued.fileIdent, salt: issued.salt + 1n });
    expect(await client.next()).toMatchObject({ type: 'json_error', code: 211, sessionIdent: 3, body: { action: 'ClientReset' } });
    expect(client.closed).toBe(false);
    client.close();
  });

  it('compacts past a client offline longer than client_max_offline_days, which then resets instead of downloading', async () => {
    const { clientAppId } = await createApp('offline', { client_max_offline_days: 10 });
    const { client: writer } = await clientOf(clientAppId);
    const { client: traveller } = await clientOf(clientAppId);
    const file = await traveller.openSession(1, '"o"');
    traveller.close();
    await writer.openSession(1, '"o"');
    writer.send(createTaskUpload(1, 'o', 'w1'));
    expect(await writer.next()).toMatchObject({ type: 'download', downloadServerVersion: 1 });

    const compaction = host.nest.get(SyncCompaction);
    // Nine days later the traveller still holds the history back; eleven days later it does not.
    expect((await compaction.compactAll(Date.now() + 9 * 86_400_000)).expiredClients).toBe(0);
    const back = (await clientOf(clientAppId)).client;
    resume(back, 1, '"o"', file);
    expect(await back.next()).toMatchObject({ type: 'download', sessionIdent: 1, downloadServerVersion: 1 });
    back.close();
    expect((await compaction.compactAll(Date.now() + 11 * 86_400_000)).expiredClients).toBeGreaterThanOrEqual(1);
    const late = (await clientOf(clientAppId)).client;
    resume(late, 1, '"o"', file);
    expect(await late.next()).toMatchObject({ type: 'json_error', code: 222, sessionIdent: 1, body: { action: 'ClientReset' } });
    late.close();
    writer.close();
  });

  it('closes the connections of a user the admin disables, and of a user who deletes itself', async () => {
    const { appId, clientAppId } = await createApp('users');
    const disabled = await clientOf(clientAppId);
    await disabled.client.openSession(1, '"u"');
    const disable = await admin.request('PUT', admin.app(appId, `/users/${disabled.userId}/disable`));
    expect(disable.status).toBeLessThan(300);
    await eventually(() => expect(disabled.client.closed).toBe(true));
    // Its reconnect is refused with 403: realm-core logs the user out.
    expect(await openSync(syncUrl(host.url, clientAppId, disabled.access))).toMatchObject({ status: 403 });

    const leaving = await clientOf(clientAppId);
    const bystander = await clientOf(clientAppId);
    await leaving.client.openSession(1, '"u"');
    await bystander.client.openSession(1, '"u"');
    const deleted = await fetch(`${host.url}/api/client/v2.0/auth/delete`, { method: 'DELETE', headers: { authorization: `Bearer ${leaving.access}` } });
    expect(deleted.status).toBeLessThan(300);
    await eventually(() => expect(leaving.client.closed).toBe(true));
    expect(await openSync(syncUrl(host.url, clientAppId, leaving.access))).toMatchObject({ status: 401 });
    bystander.client.send({ type: 'ping', timestamp: 5, rtt: 0 });
    expect(await bystander.client.next()).toEqual({ type: 'pong', timestamp: 5 });
    bystander.client.close();
  });

  it('traces BINDs and UPLOADs with app, user and partition, and counts connections, sessions, uploads and downloads', async () => {
    const { appId, clientAppId } = await createApp('observed');
    const { client, userId } = await clientOf(clientAppId);
    await client.openSession(1, '"obs"');
    client.send(createTaskUpload(1, 'obs', 'x'));
    await client.next();
    await tracing.forceFlush();
    const bind = spans.getFinishedSpans().find((span) => span.name === 'sync.bind' && span.attributes['tessera.app_id'] === appId);
    expect(bind?.attributes).toMatchObject({ 'enduser.id': userId, 'tessera.sync.partition': '"obs"', 'tessera.sync.session': 1 });
    expect(spans.getFinishedSpans().some((span) => span.name === 'sync.upload' && span.attributes['tessera.app_id'] === appId)).toBe(true);
    expect(await metrics.sum('tessera.sync.connections')).toBeGreaterThanOrEqual(1);
    expect(await metrics.sum('tessera.sync.sessions')).toBeGreaterThanOrEqual(1);
    expect(await metrics.sum('tessera.sync.uploads')).toBeGreaterThanOrEqual(1);
    expect(await metrics.sum('tessera.sync.downloads')).toBeGreaterThanOrEqual(2);
    expect(await metrics.sum('tessera.sync.errors')).toBeGreaterThanOrEqual(1);
    client.close();
    await eventually(async () => expect(await metrics.sum('tessera.sync.connections')).toBe(0));
  });
});
