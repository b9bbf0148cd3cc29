import { AppRegistry, DataSources } from '@tessera/platform';
import { HistoryHousekeeping, SYNC_HISTORY_DATABASE } from '@tessera/sync-service';
import { eventually } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { type MetricReader, startMetricReader } from '../support/metric-reader';
import { createSyncApp, userIdOf } from './sync-admin-app';
import { type SyncHost, startSyncHost } from './sync-host';
import { connect, createTaskUpload, openSync, type SyncTestClient, syncUrl } from './sync-test-client';

// Operating partition-based sync through the admin API, against the real host with protocol-level clients
// over real WebSockets: the App Services sync endpoints (progress, state, config), Tessera's view of connected
// clients and partition histories (asked of the sync service over the bus), their refusals, the metrics
// exported through a real OpenTelemetry meter provider, and what deleting an app leaves behind (nothing).

const password = 'sync-ops-password';

interface ErrorBody {
  error: string;
  error_code: string;
}

interface ClientsBody {
  replicas: number;
  clients: Array<{ user_id: string; partitions: string[]; connected_at: string; replica: string }>;
  truncated: boolean;
}

interface PartitionsBody {
  partitions: Array<{ partition: string; epoch: number; versions: number; bytes: number; compacted_until: number; client_files: number }>;
  truncated: boolean;
}

describe('sync operations: admin endpoints, metrics and app deletion', () => {
  let host: SyncHost;
  let admin: AdminSession;
  let metrics: MetricReader;

  const clientOf = async (clientAppId: string): Promise<{ client: SyncTestClient; userId: string }> => {
    const { access } = await host.login(clientAppId);
    return { client: await connect(syncUrl(host.url, clientAppId, access)), userId: userIdOf(access) };
  };

  beforeAll(async () => {
    // Registered before the host starts, as main.ts registers it before the application.
    metrics = startMetricReader('sync-ops-test');
    host = await startSyncHost({ settings: { TESSERA_ADMIN_PASSWORD: password, TESSERA_ALLOW_NEW_PARTITION_SYNC: 'true' } });
    admin = await AdminSession.login(host, 'admin', password);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    await metrics?.telemetry.shutdown();
  });

  it('lists connected clients and partition histories from the sync service, and answers the App Services sync endpoints', async () => {
    const { appId, clientAppId } = await createSyncApp(admin, 'ops-view');
    const { client, userId } = await clientOf(clientAppId);
    await client.openSession(1, '"ops"');
    client.send(createTaskUpload(1, 'ops', 't1'));
    expect(await client.next()).toMatchObject({ type: 'download', downloadServerVersion: 1 });

    await eventually(async () => {
      const listed = await admin.request<ClientsBody>('GET', admin.app(appId, '/sync/clients'));
      expect(listed.status).toBe(200);
      expect(listed.body.replicas).toBeGreaterThanOrEqual(1);
      expect(listed.body.clients).toEqual([{ user_id: userId, partitions: ['"ops"'], connected_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string, replica: expect.any(String) as string }]);
    });
    const partitions = await admin.request<PartitionsBody>('GET', admin.app(appId, '/sync/partitions'));
    expect(partitions.status).toBe(200);
    expect(partitions.body.partitions).toEqual([{ partition: '"ops"', epoch: 0, versions: 1, bytes: expect.any(Number) as number, compacted_until: 0, client_files: 1 }]);
    expect(partitions.body.partitions[0]?.bytes).toBeGreaterThan(0);

    // realm-core's harness: every progress entry complete once sync is enabled; state "enabled".
    const progress = await admin.request<{ progress: Record<string, { complete: boolean }>; accepting_clients: boolean }>('GET', admin.app(appId, '/sync/progress'));
    expect(progress.status).toBe(200);
    expect(progress.body.accepting_clients).toBe(true);
    expect(Object.values(progress.body.progress).length).toBeGreaterThan(0);
    expect(Object.values(progress.body.progress).every((entry) => entry.complete)).toBe(true);
    expect((await admin.request('GET', admin.app(appId, '/sync/state?sync_type=partition'))).body).toEqual({ state: 'enabled' });

    expect((await admin.request('GET', admin.app(appId, '/sync/config'))).body).toEqual({ development_mode_enabled: true });
    expect((await admin.request('PUT', admin.app(appId, '/sync/config'), { development_mode_enabled: false })).status).toBe(204);
    expect((await admin.request('GET', admin.app(appId, '/sync/config'))).body).toEqual({ development_mode_enabled: false });
    expect(JSON.parse((await admin.pull(appId)).get('sync/config.json') ?? '{}')).toMatchObject({ development_mode_enabled: false });

    client.close();
    await eventually(async () => expect((await admin.request<ClientsBody>('GET', admin.app(appId, '/sync/clients'))).body.clients).toEqual([]));
  });

  it('refuses sync admin requests without a valid token, for another group and its apps, for unknown apps and bad bodies', async () => {
    const { appId } = await createSyncApp(admin, 'ops-guard');
    const paths = ['/sync/clients', '/sync/partitions', '/sync/progress', '/sync/state', '/sync/config'];
    const changeForeignReset = await admin.request<ErrorBody>('PUT', admin.app('000000000000000000000000', '/sync/force_reset'), { file_ident: 2 });
    expect(changeForeignReset.status).toBe(404);
    for (const path of paths) {
      const anonymous = await fetch(`${admin.baseUrl}${admin.app(appId, path)}`);
      expect(anonymous.status, path).toBe(401);
      expect(await anonymous.json(), path).toMatchObject({ error: expect.any(String) as string, error_code: expect.any(String) as string });
      const forged = await admin.request<ErrorBody>('GET', admin.app(appId, path), undefined, { token: `${admin.accessToken.slice(0, -4)}AAAA` });
      expect(forged.status, path).toBe(401);
    }
    // Another group, and an app of another group reached through this admin's group.
    const foreign = await host.nest.get(AppRegistry).create({ name: 'ops-foreign', groupId: '5f0000000000000000000001' });
    for (const path of paths) {
      const otherGroup = await admin.request<ErrorBody>('GET', `/groups/5f0000000000000000000001/apps/${foreign._id}${path}`);
      expect(otherGroup.status, path).toBe(404);
      expect(otherGroup.body.error_code, path).toBe('GroupNotFound');
      const foreignApp = await admin.request<ErrorBody>('GET', admin.app(foreign._id, path));
      expect(foreignApp.status, path).toBe(404);
      expect(foreignApp.body).toMatchObject({ error: expect.stringContaining(foreign._id) as string });
      for (const unknown of ['000000000000000000000000', 'not-an-id', '%24ne']) {
        const missing = await admin.request<ErrorBody>('GET', admin.app(unknown, path));
        expect(missing.status, `${unknown}${path}`).toBe(404);
        expect(missing.body.error_code, `${unknown}${path}`).toEqual(expect.any(String));
      }
    }
    const changeForeign = await admin.request<ErrorBody>('PUT', admin.app(foreign._id, '/sync/config'), { development_mode_enabled: true });
    expect(changeForeign.status).toBe(404);
    for (const body of [{}, { development_mode_enabled: 'yes' }, [true], { development_mode_enabled: { $ne: false } }]) {
      const bad = await admin.request<ErrorBody>('PUT', admin.app(appId, '/sync/config'), body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body).toMatchObject({ error_code: 'BadRequest', error: expect.stringContaining('development_mode_enabled') as string });
    }
    // An app without sync: nothing to toggle, no progress.
    const plain = await admin.createApp('ops-plain');
    expect((await admin.request<ErrorBody>('PUT', admin.app(plain._id, '/sync/config'), { development_mode_enabled: true })).status).toBe(400);
    expect((await admin.request('GET', admin.app(plain._id, '/sync/progress'))).body).toEqual({ progress: {}, accepting_clients: false });
    expect((await admin.request('GET', admin.app(plain._id, '/sync/state'))).body).toEqual({ state: '' });
  });

  it('exports connections, sessions, uploads, downloads and the history size of each partition through the meter provider', async () => {
    const { appId, clientAppId } = await createSyncApp(admin, 'ops-metrics');
    const { client } = await clientOf(clientAppId);
    await client.openSession(1, '"m"');
    for (const [i, id] of ['a', 'b', 'c'].entries()) {
      client.send(createTaskUpload(1, 'm', id, 2 + i, i));
      expect(await client.next()).toMatchObject({ type: 'download', downloadServerVersion: i + 1 });
    }
    expect(await metrics.sum('tessera.sync.connections')).toBeGreaterThanOrEqual(1);
    expect(await metrics.sum('tessera.sync.sessions')).toBeGreaterThanOrEqual(1);
    expect(await metrics.sum('tessera.sync.uploads')).toBeGreaterThanOrEqual(3);
    expect(await metrics.sum('tessera.sync.downloads')).toBeGreaterThanOrEqual(4);
    const attributes = { 'tessera.app_id': appId, 'tessera.sync.epoch': 0, 'tessera.sync.partition': '"m"' };
    expect((await metrics.points('tessera.sync.history.versions')).find((point) => point.attributes['tessera.app_id'] === appId)).toMatchObject({ attributes, value: 3 });
    const bytes = (await metrics.points('tessera.sync.history.bytes')).find((point) => point.attributes['tessera.app_id'] === appId);
    expect(bytes?.attributes).toEqual(attributes);
    expect(bytes?.value).toBeGreaterThan(0);
    const connectionsBefore = await metrics.sum('tessera.sync.connections');
    client.close();
    await eventually(async () => expect(await metrics.sum('tessera.sync.connections')).toBe(connectionsBefore - 1));
  });

  it('resets one client file on force_reset: its next IDENT gets a client reset; unknown, ambiguous and bad requests are refused', async () => {
    const { appId, clientAppId } = await createSyncApp(admin, 'ops-reset');
    // Idents are per partition: the first file of each partition gets ident 2.
    const files = new Map<string, { fileIdent: number; salt: bigint }>();
    for (const path of ['"r1"', '"r2"']) {
      const { client } = await clientOf(clientAppId);
      files.set(path, await client.openSession(1, path));
      client.close();
    }
    const ident = files.get('"r1"')!.fileIdent;
    expect(files.get('"r2"')!.fileIdent).toBe(ident);
    const reset = (body: unknown) => admin.request<ErrorBody>('PUT', admin.app(appId, '/sync/force_reset'), body);
    const ambiguous = await reset({ file_ident: ident });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body).toMatchObject({ error_code: 'BadRequest', error: expect.stringContaining('"r1", "r2"') as string });
    expect((await reset({ file_ident: 999 })).body).toMatchObject({ error_code: 'ClientFileNotFound' });
    expect((await reset({ file_ident: 999 })).status).toBe(404);
    expect((await reset({ file_ident: ident, partition: '"nowhere"' })).status).toBe(404);
    expect((await reset({ file_ident: ident, partition: '{"$bad": ' })).body).toMatchObject({ error_code: 'InvalidParameter' });
    for (const body of [{}, { file_ident: 0 }, { file_ident: -2 }, { file_ident: 1.5 }, { file_ident: '2' }, { file_ident: ident, partition: 7 }, { file_ident: ident, partition: 'x'.repeat(5000) }]) {
      expect((await reset(body)).body, JSON.stringify(body).slice(0, 60)).toMatchObject({ error_code: 'BadRequest' });
    }
    expect((await admin.request('PUT', admin.app(appId, '/sync/force_reset'), { file_ident: ident, partition: '"r1"' }, { token: 'not-a-token' })).status).toBe(401);

    expect((await reset({ file_ident: ident, partition: '"r1"' })).status).toBe(204);
    const back = async (path: string) => {
      const { client } = await clientOf(clientAppId);
      const file = files.get(path)!;
      client.send({ type: 'bind', sessionIdent: 1, path, token: '', needClientFileIdent: false, isSubserver: false });
      client.send({ type: 'ident', sessionIdent: 1, clientFileIdent: file.fileIdent, clientFileIdentSalt: file.salt, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n });
      const answer = await client.next();
      client.close();
      return answer;
    };
    expect(await back('"r1"')).toMatchObject({ type: 'json_error', code: 222, sessionIdent: 1, body: { action: 'ClientReset' } });
    // The file of the same ident in the other partition was not touched.
    expect(await back('"r2"')).toMatchObject({ type: 'download', sessionIdent: 1 });
  });

  it('deleting an app closes its connections and drops its sync history, client files and translation state, and no other app', async () => {
    const doomed = await createSyncApp(admin, 'ops-doomed');
    const kept = await createSyncApp(admin, 'ops-kept');
    const sessions: SyncTestClient[] = [];
    for (const { clientAppId } of [doomed, kept]) {
      const { client } = await clientOf(clientAppId);
      await client.openSession(1, '"d"');
      client.send(createTaskUpload(1, 'd', 'x'));
      expect(await client.next()).toMatchObject({ type: 'download', downloadServerVersion: 1 });
      sessions.push(client);
    }
    const [doomedClient, keptClient] = sessions as [SyncTestClient, SyncTestClient];
    const housekeeping = host.nest.get(HistoryHousekeeping);
    const platform = host.nest.get(DataSources).platform();
    const leftovers = async (appId: string): Promise<Record<string, number>> => {
      const range = (prefix: string) => ({ $gte: prefix, $lt: `${prefix}\uffff` });
      const sync = platform.db(SYNC_HISTORY_DATABASE);
      const translation = platform.db('platform');
      return {
        partitions: (await housekeeping.partitionSizes(appId)).partitions.length,
        batches: await sync.collection('history_batches').countDocuments({ partition: range(`${appId}/`) }),
        clientFiles: await sync.collection('history_client_files').countDocuments({ partition: range(`${appId}/`) }),
        activity: await sync.collection('history_client_activity').countDocuments({ partition: range(`${appId}/`) }),
        seeded: await translation.collection('sync_seeded_partitions').countDocuments({ _id: range(`${appId}/`) }),
        // Recorded only on MongoDB (the embedded engine has pre-images): none here, and none after.
        documentPartitions: await translation.collection('sync_document_partitions').countDocuments({ _id: range(`${appId}/`) }),
        schemas: await translation.collection('sync_schemas').countDocuments({ _id: appId }),
      };
    };
    // Both apps hold something everywhere before the deletion (translation state is written after the acknowledgement).
    for (const { appId } of [doomed, kept]) {
      await eventually(async () => {
        const held = await leftovers(appId);
        expect(held).toMatchObject({ partitions: 1, batches: 1, clientFiles: 1, activity: 1, seeded: 1, schemas: 1 });
      });
    }

    expect((await admin.request('DELETE', admin.app(doomed.appId))).status).toBe(204);
    await eventually(() => expect(doomedClient.closed).toBe(true));
    await eventually(async () => expect(await leftovers(doomed.appId)).toEqual({ partitions: 0, batches: 0, clientFiles: 0, activity: 0, seeded: 0, documentPartitions: 0, schemas: 0 }));
    // Its clients cannot come back (the app is gone); the other app is untouched and keeps syncing.
    expect(await openSync(syncUrl(host.url, doomed.clientAppId, 'x'))).toMatchObject({ status: 404 });
    expect(await leftovers(kept.appId)).toMatchObject({ partitions: 1, batches: 1, clientFiles: 1, activity: 1, seeded: 1, schemas: 1 });
    keptClient.send(createTaskUpload(1, 'd', 'y', 3, 1));
    expect(await keptClient.next()).toMatchObject({ type: 'download', downloadServerVersion: 2 });
    keptClient.close();
  });
});
