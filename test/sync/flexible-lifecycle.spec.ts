import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession } from '../admin-api/admin-session';
import { flexibleApp, FlexibleTestClient, taskSchema, writeTask } from './flexible-test-client';
import { type SyncHost } from './sync-host';
import { createConfiguredApp, startAdminSyncHost, userIdOf } from './sync-admin-app';
import { syncUrl } from './sync-test-client';

// Spec 3's lifecycle for flexible sync, driven through the admin API as an operator does it and seen by
// protocol-level clients: terminate ends the sessions and refuses uploads, clients wait quietly (Transient),
// and after a re-enable a client file of before the terminate resets (with recovery unless the app disabled
// it), then syncs again from a fresh file with its recovered change.

const password = 'flexible-lifecycle-password';

describe('flexible sync lifecycle (spec 3, protocol level)', () => {
  let host: SyncHost;
  let admin: AdminSession;

  beforeAll(async () => {
    ({ host, admin } = await startAdminSyncHost(password));
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const createApp = (name: string, sync: Record<string, unknown> = {}): Promise<{ appId: string; clientAppId: string }> =>
    createConfiguredApp(admin, name, (config) => {
      flexibleApp(config);
      Object.assign(config.sync!, sync);
    });

  async function changeSync(appId: string, change: Record<string, unknown>): Promise<void> {
    const files = await admin.pull(appId);
    files.set('sync/config.json', JSON.stringify({ ...(JSON.parse(files.get('sync/config.json')!) as Record<string, unknown>), ...change }));
    const pushed = await admin.push(appId, files);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
  }

  async function client(clientAppId: string): Promise<{ client: FlexibleTestClient; url: string; userId: string }> {
    const { access } = await host.login(clientAppId);
    const url = syncUrl(host.url, clientAppId, access);
    return { client: await FlexibleTestClient.open(url), url, userId: userIdOf(access) };
  }

  it('terminate ends live sessions and refuses uploads; re-enable resets old files with recovery; the reset file syncs', async () => {
    const { appId, clientAppId } = await createApp('flx-cycle');
    const { client: writer, url, userId } = await client(clientAppId);
    const { client: other, userId: otherId } = await client(clientAppId);
    await writer.openSession(1, 1, { Task: `owner_id == "${userId}"` });
    await other.openSession(1, 1, { Task: `owner_id == "${otherId}"` });
    writer.upload(1, [...taskSchema(), ...writeTask('cycle-1', { owner_id: userId, status: 'open', name: 'before' })]);
    expect(await writer.next()).toMatchObject({ type: 'download' });

    await changeSync(appId, { state: 'disabled' });
    const ended = { type: 'json_error', code: 201, sessionIdent: 1, body: { action: 'Transient', tryAgain: true, shouldClientReset: false, message: expect.stringContaining('terminated') } };
    expect(await writer.next()).toMatchObject(ended);
    // An upload sent now is refused, never acknowledged nor written.
    other.upload(1, [...taskSchema(), ...writeTask('cycle-2', { owner_id: otherId, status: 'open', name: 'during' })]);
    expect(await other.next()).toMatchObject(ended);
    expect(other.unread()).toEqual([]);
    // A BIND while terminated gets the same answer; the connection stays open.
    writer.send({ type: 'unbind', sessionIdent: 1 });
    writer.send({ type: 'bind', sessionIdent: 2, data: { sessionReason: 0, schemaVersion: 0 }, token: '', needClientFileIdent: true, isSubserver: false });
    expect(await writer.next()).toMatchObject({ ...ended, sessionIdent: 2 });
    writer.close();

    // Re-enabled: the file is from before the terminate, so it resets, with recovery (the default).
    await changeSync(appId, { state: 'enabled' });
    const back = await FlexibleTestClient.resume(url, writer, 1, 1, { Task: `owner_id == "${userId}"` });
    expect(await back.next()).toMatchObject({ type: 'json_error', code: 208, sessionIdent: 1, body: { action: 'ClientReset', shouldClientReset: true, isRecoveryModeDisabled: false, tryAgain: false } });
    back.send({ type: 'unbind', sessionIdent: 1 });
    // The reset: a fresh file (BIND for a client reset) downloads the view as the collection holds it, and the
    // recovered change uploads on top.
    back.send({ type: 'bind', sessionIdent: 2, data: { sessionReason: 1, schemaVersion: 0 }, token: '', needClientFileIdent: true, isSubserver: false });
    const ident = await back.next();
    if (ident.type !== 'ident') throw new Error(`expected ident, got ${ident.type}`);
    expect(ident.clientFileIdentSalt).not.toBe(writer.file?.salt);
    back.send({ type: 'ident', sessionIdent: 2, clientFileIdent: ident.clientFileIdent, clientFileIdentSalt: ident.clientFileIdentSalt, downloadServerVersion: 0, downloadClientVersion: 0, latestServerVersion: 0, latestServerVersionSalt: 0n, queryVersion: 1, queries: { Task: `owner_id == "${userId}"` } });
    await back.bootstrap();
    expect(back.ids('Task')).toEqual(['cycle-1']);
    const recovered = back.upload(2, writeTask('cycle-1', { name: 'recovered' }, false));
    expect(await back.next()).toMatchObject({ type: 'download', sessionIdent: 2, uploadClientVersion: recovered.progressClientVersion });
    back.close();
    other.close();
  });

  it('resets without recovery when the app disabled recovery mode', async () => {
    const { appId, clientAppId } = await createApp('flx-norecovery', { is_recovery_mode_disabled: true });
    const { client: first, url } = await client(clientAppId);
    await first.openSession(1, 1, { Task: 'status == "open"' });
    first.close();
    await changeSync(appId, { state: 'disabled' });
    await changeSync(appId, { state: 'enabled' });
    const back = await FlexibleTestClient.resume(url, first, 1, 1, { Task: 'status == "open"' });
    expect(await back.next()).toMatchObject({ type: 'json_error', code: 208, sessionIdent: 1, body: { action: 'ClientResetNoRecovery', isRecoveryModeDisabled: true, shouldClientReset: true } });
    back.close();
  });
});
