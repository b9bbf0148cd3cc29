import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, makeTempDir, repositoryRoot, startServerProcess, type ServerProcess } from '@tessera/testing';
import { FlexibleTestClient, writeTask } from '../sync/flexible-test-client';
import { tessera } from './tessera-cli';

// `tessera sync ...` run as a subprocess against the built server: a partition-sync app (the README's
// task-tracker export), its flexible-sync form made by `sync migrate-plan`, and both driven through their
// lifecycle with the admin API's sync endpoints.
const TASK_TRACKER = join(repositoryRoot, 'examples', 'task-tracker');
const CLI_TIMEOUT_MS = 180_000;

interface Summary {
  mode: string;
  enabled: boolean;
  terminated: boolean;
  service?: string;
  partition?: { key?: string; type?: string };
  queryable_fields?: string[];
  last_disabled?: string;
}

describe('tessera sync', () => {
  const dataDir = makeTempDir('tessera-cli-sync-data-');
  const work = makeTempDir('tessera-cli-sync-work-');
  let server: ServerProcess;
  let env: Record<string, string>;
  const ids: Record<string, string> = {};

  const show = async (app: string): Promise<Summary> => {
    const run = await tessera(['sync', 'show', '--remote', app, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as Summary;
  };

  const create = async (name: string): Promise<string> => {
    const created = await tessera(['apps', 'create', '--name', name, '--local', join(work.path, `${name}-empty`), '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    return (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
  };

  const anonymousSync = async (appId: string): Promise<{ client: FlexibleTestClient; userId: string }> => {
    const login = await fetch(`${server.url}/api/client/v2.0/app/${appId}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const { access_token: token, user_id: userId } = (await login.json()) as { access_token: string; user_id: string };
    return { client: await FlexibleTestClient.open(`${server.url.replace(/^http/, 'ws')}/api/client/v2.0/app/${appId}/realm-sync?baas_at=${token}`), userId };
  };

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'cli-sync-password' } });
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
    const login = await tessera(['login', '--url', server.url, '--username', 'admin', '--password', 'cli-sync-password'], env);
    expect(login.code, login.stderr).toBe(0);
    ids['tracker'] = await create('tracker');
    ids['plain'] = await create('plain');
    // The export's first deployment may enable partition sync (an imported app), as the README walks through.
    const push = await tessera(['push', '--remote', ids['tracker'], '--local', TASK_TRACKER, '--yes'], env);
    expect(push.code, push.stderr).toBe(0);
  }, CLI_TIMEOUT_MS);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
    work.remove();
  });

  it('shows a partition-sync app: mode, enabled, partition key and permissions; an app without sync says so', async () => {
    const summary = await show(ids['tracker']);
    expect(summary).toMatchObject({ mode: 'partition', enabled: true, terminated: false, service: 'mongodb-atlas', partition: { key: '_partition', type: 'string' } });
    const text = await tessera(['sync', 'show', '--remote', ids['tracker']], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/mode:\s+partition-based/);
    expect(text.stdout).toMatch(/partition key:\s+_partition \(string\)/);
    expect(text.stdout).toContain('%%user.custom_data.teams');
    expect(await show(ids['plain'])).toEqual({ app: ids['plain'], mode: 'none', enabled: false, terminated: false });
  }, CLI_TIMEOUT_MS);

  it('plans the move to flexible sync, writes an app that validates, and that app deploys and runs flexible sync', async () => {
    const output = join(work.path, 'tracker-flexible');
    const plan = await tessera(['sync', 'migrate-plan', '--local', TASK_TRACKER, '--output', output], env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('"type": "flexible"');
    expect(plan.stdout).toContain('"_partition"');
    expect(plan.stdout).toContain('Partition permissions that do not translate');
    expect(plan.stdout).toContain('%%partition cannot be migrated');
    expect(plan.stdout).toContain('document_filters.write {"_partition":{"$in":"%%user.custom_data.teams"}}');
    const sync = JSON.parse(readFileSync(join(output, 'sync', 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(sync).toMatchObject({ type: 'flexible', state: 'enabled', service_name: 'mongodb-atlas', queryable_fields_names: ['_partition'] });
    // Nothing translated for this app: its synced collection has no role, rather than the old all-access one.
    expect(JSON.parse(readFileSync(join(output, 'services', 'mongodb-atlas', 'rules', 'tracker.Task.json'), 'utf8'))).toMatchObject({ roles: [] });

    // The JSON form carries the same plan.
    const json = await tessera(['sync', 'migrate-plan', '--local', TASK_TRACKER, '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, sync: { type: 'flexible' }, untranslated: [{ permission: 'read' }, { permission: 'write' }] });

    // The deployed partition-sync app gives the same plan as its export.
    const deployed = await tessera(['sync', 'migrate-plan', '--remote', ids['tracker'], '--json'], env);
    expect(deployed.code, deployed.stderr).toBe(0);
    expect((JSON.parse(deployed.stdout) as { sync: unknown }).sync).toEqual((JSON.parse(json.stdout) as { sync: unknown }).sync);

    ids['flexible'] = await create('flexible');
    const push = await tessera(['push', '--remote', ids['flexible'], '--local', output, '--yes'], env);
    expect(push.code, push.stderr).toBe(0);
    expect(await show(ids['flexible'])).toMatchObject({ mode: 'flexible', enabled: true, terminated: false, queryable_fields: ['_partition'] });
    const progress = await tessera(['sync', 'progress', '--remote', ids['flexible'], '--json'], env);
    expect(progress.code, progress.stderr).toBe(0);
    expect(JSON.parse(progress.stdout)).toEqual({ accepting_clients: true, progress: { 'tracker.Task': { complete: true } } });
  }, CLI_TIMEOUT_MS);

  it('lists a connected flexible-sync client', async () => {
    const appId = ids['flexible'];
    const { client, userId } = await anonymousSync(appId);
    try {
      await eventually(async () => {
        const run = await tessera(['sync', 'clients', '--remote', appId, '--json'], env);
        expect(run.code, run.stderr).toBe(0);
        const listed = JSON.parse(run.stdout) as { replicas: number; clients: { user_id: string }[] };
        expect(listed.replicas).toBeGreaterThanOrEqual(1);
        expect(listed.clients.map((c) => c.user_id)).toContain(userId);
      }, { timeoutMs: 60_000 });
      const text = await tessera(['sync', 'clients', '--remote', appId], env);
      expect(text.stdout).toContain(userId);
    } finally {
      client.close();
    }
  }, CLI_TIMEOUT_MS);

  it('runs the migrated apps: untranslated permissions let nobody sync; translated ones serve queries on the partition key', async () => {
    // task-tracker's %%partition rules gave no role: a session sees nothing and its writes are undone, not widened.
    const { client: refused } = await anonymousSync(ids['flexible']);
    await refused.openSession(1, 1, { Task: '_partition == "red"' });
    refused.upload(1, writeTask('t1', { _partition: 'red', name: 'not allowed' }));
    expect(await refused.next()).toMatchObject({ type: 'json_error', code: 231, sessionIdent: 1 });
    refused.close();

    // The same export with global permissions: one role, and a migrated client's subscription on the key works.
    const source = join(work.path, 'tracker-open');
    cpSync(TASK_TRACKER, source, { recursive: true });
    const cluster = join(source, 'data_sources', 'mongodb-atlas', 'config.json');
    const config = JSON.parse(readFileSync(cluster, 'utf8')) as { config: { sync: { partition: { permissions: unknown } } } };
    config.config.sync.partition.permissions = { read: true, write: true };
    writeFileSync(cluster, JSON.stringify(config));
    const output = join(work.path, 'tracker-open-flexible');
    const plan = await tessera(['sync', 'migrate-plan', '--local', source, '--output', output, '--json'], env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ untranslated: [], collections: [{ roles: [{ name: 'sync-everyone-writes' }] }] });
    const appId = await create('open');
    const push = await tessera(['push', '--remote', appId, '--local', output, '--yes'], env);
    expect(push.code, push.stderr).toBe(0);
    const { client: writer } = await anonymousSync(appId);
    await writer.openSession(1, 1, { Task: '_partition == "red"' });
    writer.upload(1, writeTask('t1', { _partition: 'red', name: 'allowed' }));
    expect(await writer.next()).toMatchObject({ type: 'download', sessionIdent: 1, uploadClientVersion: 2 });
    writer.close();
    const { client } = await anonymousSync(appId);
    await client.openSession(1, 1, { Task: '_partition == "red"' });
    expect(client.objects.get('Task')?.get('t1')).toMatchObject({ _partition: 'red', name: 'allowed' });
    // `name` was never a partition key: not queryable.
    client.send({ type: 'query', sessionIdent: 1, queryVersion: 2, queries: { Task: 'name == "x"' } });
    expect(await client.next()).toMatchObject({ type: 'query_error', code: 226, queryVersion: 2 });
    client.close();
  }, CLI_TIMEOUT_MS);

  it('terminates and re-enables flexible sync only when confirmed, saying clients reset', async () => {
    const app = ids['flexible'];
    // No terminal to ask on and no --yes: nothing changes.
    const unconfirmed = await tessera(['sync', 'terminate', '--remote', app], env);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('pass --yes');
    expect(unconfirmed.stderr).toContain('every client must reset');
    expect((await show(app)).enabled).toBe(true);

    const terminated = await tessera(['sync', 'terminate', '--remote', app, '--yes'], env);
    expect(terminated.code, terminated.stderr).toBe(0);
    expect(terminated.stdout).toContain('every client resets');
    const after = await show(app);
    expect(after).toMatchObject({ mode: 'flexible', enabled: false, terminated: true, last_disabled: expect.any(String) });
    const again = await tessera(['sync', 'terminate', '--remote', app, '--yes'], env);
    expect(again.code).toBe(6);
    expect(again.stderr).toContain('not enabled');

    const unconfirmedEnable = await tessera(['sync', 'enable', '--remote', app], env);
    expect(unconfirmedEnable.code).toBe(2);
    expect(unconfirmedEnable.stderr).toContain('must reset');
    expect((await show(app)).enabled).toBe(false);
    const enabled = await tessera(['sync', 'enable', '--remote', app, '--yes'], env);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stdout).toContain('clients reset');
    expect(await show(app)).toMatchObject({ mode: 'flexible', enabled: true, terminated: false });
    const noop = await tessera(['sync', 'enable', '--remote', app], env);
    expect(noop.code, noop.stderr).toBe(0);
    expect(noop.stdout).toContain('already enabled');
  }, CLI_TIMEOUT_MS);

  it('terminates and re-enables partition sync, keeping its key and permissions', async () => {
    const app = ids['tracker'];
    const terminated = await tessera(['sync', 'terminate', '--remote', app, '--yes', '--json'], env);
    expect(terminated.code, terminated.stderr).toBe(0);
    expect(JSON.parse(terminated.stdout)).toMatchObject({ mode: 'partition', enabled: false, terminated: true });
    const enabled = await tessera(['sync', 'enable', '--remote', app, '--yes'], env);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(await show(app)).toMatchObject({ mode: 'partition', enabled: true, partition: { key: '_partition', type: 'string' } });
  }, CLI_TIMEOUT_MS);

  it('refuses an unknown app, bad flags, no login, and a plan for what is not a partition-sync app', async () => {
    const unknown = await tessera(['sync', 'show', '--remote', 'no-such-app-zzzzz'], env);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('app not found');
    const unknownTerminate = await tessera(['sync', 'terminate', '--remote', 'no-such-app-zzzzz', '--yes'], env);
    expect(unknownTerminate.code).toBe(4);
    const badFlag = await tessera(['sync', 'show', '--remote', ids['tracker'], '--partition-key', 'x'], env);
    expect(badFlag.code).toBe(2);
    const badCommand = await tessera(['sync', 'explode'], env);
    expect(badCommand.code).toBe(2);
    const noRemote = await tessera(['sync', 'show'], { ...env });
    expect(noRemote.code).toBe(2);
    const nobody = { TESSERA_CONFIG_DIR: join(work.path, 'nobody') };
    for (const args of [['sync', 'show', '--remote', ids['tracker']], ['sync', 'terminate', '--remote', ids['tracker'], '--yes'], ['sync', 'clients', '--remote', ids['tracker']]]) {
      const run = await tessera(args, nobody);
      expect(run.code, args.join(' ')).toBe(3);
      expect(run.stderr).toContain('not logged in');
    }
    // A forged session is refused by the server, not trusted by the CLI.
    const forged = await tessera(['sync', 'show', '--remote', ids['tracker']], { TESSERA_URL: server.url, TESSERA_ACCESS_TOKEN: 'eyJhbGciOiJIUzI1NiJ9.e30.forged' });
    expect(forged.code).toBe(3);
    expect((await show(ids['tracker'])).enabled).toBe(true);

    // migrate-plan: a flexible app, a directory holding no app, an --output that is not empty.
    const flexible = join(work.path, 'tracker-flexible');
    const already = await tessera(['sync', 'migrate-plan', '--local', flexible], env);
    expect(already.code).toBe(5);
    expect(already.stderr).toContain('already uses flexible sync');
    const deployedFlexible = await tessera(['sync', 'migrate-plan', '--remote', ids['flexible']], env);
    expect(deployedFlexible.code).toBe(5);
    expect((await tessera(['sync', 'migrate-plan', '--remote', 'no-such-app-zzzzz'], env)).code).toBe(4);
    const empty = join(work.path, 'not-an-app');
    mkdirSync(empty, { recursive: true });
    const none = await tessera(['sync', 'migrate-plan', '--local', empty], env);
    expect(none.code).toBe(4);
    const occupied = join(work.path, 'occupied');
    mkdirSync(occupied, { recursive: true });
    writeFileSync(join(occupied, 'keep.txt'), 'mine');
    const refused = await tessera(['sync', 'migrate-plan', '--local', TASK_TRACKER, '--output', occupied], env);
    expect(refused.code).toBe(2);
    expect(readFileSync(join(occupied, 'keep.txt'), 'utf8')).toBe('mine');
    expect(existsSync(join(occupied, 'sync'))).toBe(false);
    // An invalid source app is reported, not migrated.
    const broken = join(work.path, 'broken');
    cpSync(TASK_TRACKER, broken, { recursive: true });
    const cluster = join(broken, 'data_sources', 'mongodb-atlas', 'config.json');
    const config = JSON.parse(readFileSync(cluster, 'utf8')) as { config: { sync: { partition: { key?: string } } } };
    delete config.config.sync.partition.key;
    writeFileSync(cluster, JSON.stringify(config));
    const keyless = await tessera(['sync', 'migrate-plan', '--local', broken], env);
    expect(keyless.code).toBe(5);
    expect(keyless.stderr).toContain('names no partition key');
  }, CLI_TIMEOUT_MS);
});
