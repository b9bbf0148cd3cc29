import { join } from 'node:path';
import { loadApp, migratePartitionSync, readAppFiles, validateApp, writeAppFiles, type AppConfig, type AppFiles } from './index';
import { editJson, readDirSync } from './__fixtures__/app-files';

// The partition-sync App Services export of the README's walkthrough (20210101 layout, sync embedded in the cluster's config).
const TASK_TRACKER = join(__dirname, '..', '..', '..', 'examples', 'task-tracker');
const CLUSTER = 'data_sources/mongodb-atlas/config.json';

function trackerWith(permissions?: { read?: unknown; write?: unknown }): AppConfig {
  const files: AppFiles = readDirSync(TASK_TRACKER);
  if (permissions) editJson(files, CLUSTER, (d) => (d.config.sync.partition.permissions = permissions));
  const { app, violations } = loadApp(files);
  expect(violations).toEqual([]);
  return app;
}

function migrated(app: AppConfig): Extract<ReturnType<typeof migratePartitionSync>, { ok: true }> {
  const result = migratePartitionSync(app);
  if (!result.ok) throw new Error(result.reason);
  return result;
}

/** The result written in the current layout and read back validates as an app. */
function expectValid(app: AppConfig): void {
  const { violations } = loadApp(writeAppFiles(app));
  expect(violations).toEqual([]);
  expect(validateApp(app)).toEqual([]);
}

describe('migratePartitionSync', () => {
  it('makes the partition key queryable and keeps the sync settings, with the partition sync removed from the cluster', () => {
    const result = migrated(trackerWith());
    expect(result.sync).toEqual({
      type: 'flexible',
      state: 'enabled',
      service_name: 'mongodb-atlas',
      development_mode_enabled: false,
      database_name: 'tracker',
      queryable_fields_names: ['_partition'],
      client_max_offline_days: 30,
      is_recovery_mode_disabled: false,
    });
    expect(result.app.sync).toEqual(result.sync);
    expect(result.app.services.find((s) => s.config.name === 'mongodb-atlas')?.config.config).not.toHaveProperty('sync');
    expectValid(result.app);
  });

  it('does not translate the example\'s %%partition rules: no role, each reason given, a filter suggested for the write rule only', () => {
    const source = trackerWith();
    const result = migrated(source);
    expect(result.untranslated.map((u) => u.permission)).toEqual(['read', 'write']);
    expect(result.untranslated[0]?.reason).toContain('%%partition');
    // The read rule is an %or of two %%partition tests: nothing to suggest.
    expect(result.untranslated[0]).not.toHaveProperty('suggestedDocumentFilter');
    expect(result.untranslated[1]?.suggestedDocumentFilter).toEqual({ _partition: { $in: '%%user.custom_data.teams' } });
    expect(result.collections).toEqual([{ database: 'tracker', collection: 'Task', replacedRoles: ['member'], roles: [] }]);
    expect(result.notes.join('\n')).toContain('no user can sync');
    // The old "member" role let everyone do everything: it must not survive into a sync-compatible app.
    expect(result.app.services[0]?.collectionRules[0]?.roles).toEqual([]);
    expectValid(result.app);
    // The source is left as it was.
    expect(source.services[0]?.collectionRules[0]?.roles?.map((r) => r.name)).toEqual(['member']);
  });

  it('translates global booleans: anyone reads and writes with one role', () => {
    const result = migrated(trackerWith({ read: true, write: true }));
    expect(result.untranslated).toEqual([]);
    expect(result.collections[0]?.roles).toEqual([
      { name: 'sync-everyone-writes', apply_when: {}, document_filters: { read: true, write: true }, read: true, write: true, insert: true, delete: true, search: true },
    ]);
    expectValid(result.app);
  });

  it('translates read-only for everyone (write false) into a role that reads and never writes', () => {
    const result = migrated(trackerWith({ read: true, write: false }));
    expect(result.collections[0]?.roles).toEqual([
      { name: 'sync-everyone-reads', apply_when: {}, document_filters: { read: true, write: false }, read: true, write: false, insert: false, delete: false, search: true },
    ]);
    expectValid(result.app);
  });

  it('translates %%user.id tests into apply_when: writers first, then readers', () => {
    const result = migrated(trackerWith({ read: { '%%user.id': { '%in': ['a', 'b', 'c'] } }, write: { '%%user.id': 'a' } }));
    expect(result.untranslated).toEqual([]);
    expect(result.collections[0]?.roles.map((r) => [r.name, r.apply_when, r.document_filters])).toEqual([
      ['sync-writer', { '%%user.id': 'a' }, { read: true, write: true }],
      ['sync-reader', { '%%user.id': { '%in': ['a', 'b', 'c'] } }, { read: true, write: false }],
    ]);
    expectValid(result.app);
  });

  it('refuses to carry over %function and the logical expansions, and keeps what does translate', () => {
    const result = migrated(trackerWith({ read: { '%%true': { '%function': { name: 'canRead', arguments: ['%%partition'] } } }, write: { '%and': [{ '%%user.id': 'a' }, { '%%user.data.email': 'x@y' }] } }));
    expect(result.untranslated.map((u) => [u.permission, u.reason.split(':')[0]])).toEqual([
      ['read', 'it calls a function (%function)'],
      ['write', 'it uses %and'],
    ]);
    expect(result.collections[0]?.roles).toEqual([]);
    const readOnly = migrated(trackerWith({ read: { '%%user.custom_data.admin': true }, write: { '%or': [{ '%%user.id': 'a' }] } }));
    expect(readOnly.collections[0]?.roles.map((r) => r.name)).toEqual(['sync-reader']);
    expect(readOnly.untranslated.map((u) => u.permission)).toEqual(['write']);
    expectValid(readOnly.app);
  });

  it('treats an absent permission as none', () => {
    const absent = migrated(trackerWith({ read: true }));
    expect(absent.collections[0]?.roles.map((r) => r.name)).toEqual(['sync-everyone-reads']);
    expect(absent.untranslated).toEqual([]);
  });

  it('says why it cannot migrate an app without partition sync', () => {
    const flexible = readAppFiles(readDirSync(join(__dirname, '..', '..', '..', 'test', 'fixtures', 'appservices-flexible'))).app;
    expect(migratePartitionSync(flexible)).toEqual({ ok: false, reason: 'the app already uses flexible sync' });
    const none = trackerWith();
    none.services[0].config.config = { clusterName: 'Cluster0' };
    expect(migratePartitionSync(none)).toEqual({ ok: false, reason: 'the app has no partition-based sync configuration' });
  });
});
