import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readAppFiles } from '@tessera/app-config';
import { SyncStateStore } from '@tessera/platform';
import { queryableFieldsFor, syncModeOf } from '@tessera/sync-service';
import { repositoryRoot } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession, canonicalJson } from './admin-session';

type ErrorBody = { error: string; error_code: string; violations?: { file: string; path: string; rule: string; message: string }[] };

// The App Services export of a flexible-sync app (test/fixtures/appservices-flexible), as a user moves it
// in: pushed unchanged, then its sync configuration managed through the admin API as realm-cli and the
// SDKs' test harnesses did (`flexible_sync` in the cluster service's config). Over real HTTP.
const FIXTURE = join(repositoryRoot, 'test', 'fixtures', 'appservices-flexible');

function exportFiles(dir = FIXTURE): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name !== 'README.md') files.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

describe('admin API: an App Services export with flexible sync', () => {
  let host: TestHost;
  let admin: AdminSession;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'flexible-test-password' } });
    admin = await AdminSession.login(host, 'admin', 'flexible-test-password');
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  const imported = async (name: string): Promise<{ appId: string; serviceId: string }> => {
    const app = await admin.createApp(name);
    const pushed = await admin.push(app._id, exportFiles());
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    const services = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(app._id, '/services'));
    return { appId: app._id, serviceId: services.body.find((service) => service.name === 'mongodb-atlas')!._id };
  };
  const patch = (appId: string, serviceId: string, body: unknown) => admin.request<ErrorBody & Record<string, unknown>>('PATCH', admin.app(appId, `/services/${serviceId}/config`), body);

  it('imports the export without edits: flexible sync enabled with its queryable fields, asymmetric table and roles', async () => {
    const { appId, serviceId } = await imported('taskboard');
    const files = await admin.pull(appId);
    expect(JSON.parse(files.get('sync/config.json')!)).toEqual({
      type: 'flexible',
      state: 'enabled',
      development_mode_enabled: false,
      service_name: 'mongodb-atlas',
      database_name: 'taskboard',
      client_max_offline_days: 30,
      is_recovery_mode_disabled: false,
      indexed_queryable_fields_names: ['team_id'],
      queryable_fields_names: ['owner_id', 'team_id'],
      collection_queryable_fields_names: { Task: ['status', 'due'] },
      asymmetric_tables: ['Log'],
    });
    const config = await admin.request<Record<string, unknown>>('GET', admin.app(appId, `/services/${serviceId}/config`));
    expect(config.body['sync']).toBeUndefined();
    expect(config.body['flexible_sync']).toMatchObject({ state: 'enabled', queryable_fields_names: ['owner_id', 'team_id'], asymmetric_tables: ['Log'] });
    expect(config.body['flexible_sync']).not.toHaveProperty('type');
    expect(await host.nest.get(SyncStateStore).get(appId)).toMatchObject({ enabled: true, everEnabled: false, resetEpoch: 0 });

    // What the sync service reads from the deployed files.
    const mode = syncModeOf(readAppFiles(new Map([...files].map(([path, text]) => [path, new TextEncoder().encode(text)]))).app);
    if (mode.kind !== 'flexible') throw new Error(`expected flexible sync, got ${mode.kind}`);
    expect(mode).toMatchObject({ serviceName: 'mongodb-atlas', indexedQueryableField: 'team_id', asymmetricTables: ['Log'], recoveryDisabled: false, clientMaxOfflineDays: 30 });
    expect([...queryableFieldsFor(mode, 'Task')].sort()).toEqual(['_id', 'due', 'owner_id', 'status', 'team_id']);
    // The export pushed again is no change at all.
    const again = await admin.push(appId, exportFiles(), true);
    expect(again.status).toBe(200);
    expect(again.body.diffs).toEqual([]);
  });

  it('accepts roles that are not sync compatible as App Services does, warning about each on a dry run', async () => {
    const { appId } = await imported('taskboard-roles');
    const files = exportFiles();
    const taskRules = 'data_sources/mongodb-atlas/taskboard/Task/rules.json';
    const rules = JSON.parse(files.get(taskRules)!) as { roles: Record<string, unknown>[] };
    rules.roles[1] = { ...rules.roles[1], document_filters: { read: { summary: '%%user.id' }, write: { owner_id: '%%user.id' } }, read: { owner_id: '%%user.id' }, apply_when: { '%%root.owner_id': '%%user.id' } };
    files.set(taskRules, canonicalJson(rules));
    const preview = await admin.push(appId, files, true);
    expect(preview.status).toBe(200);
    const warnings = (preview.body as unknown as { warnings: { file: string; path: string; rule: string; message: string }[] }).warnings;
    expect(warnings.map((w) => `${w.file}|${w.path}|${w.rule}`).sort()).toEqual([
      `${taskRules}|roles[1].apply_when|sync.role.apply_when.document`,
      `${taskRules}|roles[1].document_filters.read|sync.role.document_filters.queryable`,
      `${taskRules}|roles[1].read|sync.role.read.boolean`,
    ]);
    expect(warnings[0].message).toContain('is not sync compatible');
    const pushed = await admin.push(appId, files);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    expect(JSON.parse((await admin.pull(appId)).get('services/mongodb-atlas/rules/taskboard.Task.json') ?? '{}')).toMatchObject({ roles: [expect.anything(), { read: { owner_id: '%%user.id' } }] });
  });

  it('terminates and re-enables through flexible_sync, recording last_disabled and marking clients for reset', async () => {
    const { appId, serviceId } = await imported('taskboard-cycle');
    const startedAt = Math.floor(Date.now() / 1000);
    const terminated = await patch(appId, serviceId, { flexible_sync: { state: 'disabled' } });
    expect(terminated.status, JSON.stringify(terminated.body)).toBe(200);
    const disabled = terminated.body['flexible_sync'] as { state: string; last_disabled: number };
    expect(disabled.state).toBe('disabled');
    expect(disabled.last_disabled).toBeGreaterThanOrEqual(startedAt);
    const reenabled = await patch(appId, serviceId, { flexible_sync: { state: 'enabled', queryable_fields_names: ['owner_id', 'team_id', 'summary'] } });
    expect(reenabled.status, JSON.stringify(reenabled.body)).toBe(200);
    expect(reenabled.body['flexible_sync']).toMatchObject({ state: 'enabled', queryable_fields_names: ['owner_id', 'team_id', 'summary'], asymmetric_tables: ['Log'] });
    const state = await host.nest.get(SyncStateStore).get(appId);
    expect(state).toMatchObject({ enabled: true, everEnabled: false, resetEpoch: 1 });
    expect(state.clientResetRequiredSince).toBeGreaterThanOrEqual(disabled.last_disabled);
  });

  it('changes queryable fields while enabled, but refuses a switch to partition-based sync until terminated', async () => {
    const { appId, serviceId } = await imported('taskboard-locked');
    const widened = await patch(appId, serviceId, { flexible_sync: { queryable_fields_names: ['owner_id', 'team_id', 'summary'] } });
    expect(widened.status, JSON.stringify(widened.body)).toBe(200);
    const before = await admin.pull(appId);
    const files = new Map(before);
    files.set('sync/config.json', canonicalJson({ type: 'partition', state: 'enabled', service_name: 'mongodb-atlas', database_name: 'taskboard', partition: { key: 'owner_id', type: 'string', permissions: { read: true, write: true } } }));
    const switched = await admin.push(appId, files);
    expect(switched.status).toBe(409);
    expect((switched.body as unknown as ErrorBody).error_code).toBe('SyncRulesLocked');
    expect((switched.body as unknown as ErrorBody).violations!.map((v) => v.rule)).toEqual(['sync.mode.locked']);
    expect(await admin.pull(appId)).toEqual(before);
  });

  it('refuses malformed flexible_sync bodies and invalid flexible settings with 400', async () => {
    const { appId, serviceId } = await imported('taskboard-bad');
    const notObject = await patch(appId, serviceId, { flexible_sync: ['enabled'] });
    expect(notObject.status).toBe(400);
    expect(notObject.body).toMatchObject({ error_code: 'BadRequest', error: 'flexible_sync must be an object' });
    const both = await patch(appId, serviceId, { sync: {}, flexible_sync: {} });
    expect(both.status).toBe(400);
    const twoIndexed = await patch(appId, serviceId, { flexible_sync: { indexed_queryable_fields_names: ['owner_id', 'team_id'] } });
    expect(twoIndexed.status).toBe(400);
    expect(twoIndexed.body.error_code).toBe('InvalidConfiguration');
    expect(twoIndexed.body.violations!.map((v) => v.rule)).toContain('sync.indexed_queryable_fields_names.count');
  });
});
