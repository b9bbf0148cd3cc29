import { emptyApp, type AppConfig, type SyncConfig } from '@tessera/app-config';
import { queryableFieldsFor, syncModeOf } from './sync-config';

const withSync = (sync: SyncConfig | undefined): AppConfig => {
  const app = emptyApp('sync-config');
  if (sync) app.sync = sync;
  return app;
};

const partition = { key: '_partition', type: 'string', permissions: { read: true, write: { '%%partition': '%%user.id' } } };

describe('syncModeOf', () => {
  it('reads an enabled partition configuration with its key, type and compiled permissions', async () => {
    const mode = syncModeOf(withSync({ type: 'partition', state: 'enabled', partition }));
    if (mode.kind !== 'partition') throw new Error(`expected partition sync, got ${mode.kind}`);
    expect(mode).toMatchObject({ key: '_partition', type: 'string', required: false });
    expect(await mode.permissions.evaluate({ user: { id: 'u1' }, partition: 'u1' })).toMatchObject({ read: true, write: true });
    expect(await mode.permissions.evaluate({ user: { id: 'u1' }, partition: 'u2' })).toMatchObject({ read: true, write: false });
  });

  it('treats a missing, disabled or keyless sync configuration as disabled', () => {
    expect(syncModeOf(withSync(undefined)).kind).toBe('disabled');
    expect(syncModeOf(withSync({ type: 'partition', state: 'disabled', partition })).kind).toBe('disabled');
    expect(syncModeOf(withSync({ type: 'partition', state: 'enabled', partition: { type: 'string' } })).kind).toBe('disabled');
  });

  it('reads the legacy form embedded in the cluster service, with recovery mode and the offline limit', () => {
    const app = withSync(undefined);
    app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { sync: { state: 'enabled', partition, is_recovery_mode_disabled: true, client_max_offline_days: 7 } } }, collectionRules: [], rules: [], webhooks: [] });
    expect(syncModeOf(app)).toMatchObject({ kind: 'partition', key: '_partition', recoveryDisabled: true, clientMaxOfflineDays: 7 });
    expect(syncModeOf(withSync({ type: 'partition', state: 'enabled', partition }))).toMatchObject({ recoveryDisabled: false, clientMaxOfflineDays: 30 });
  });

  it('tells a terminated configuration (last_disabled set) from one never enabled', () => {
    expect(syncModeOf(withSync({ type: 'partition', state: 'disabled', partition, last_disabled: 1_700_000_000 }))).toEqual({ kind: 'disabled', terminated: true });
    expect(syncModeOf(withSync({ type: 'partition', state: 'disabled', partition }))).toEqual({ kind: 'disabled', terminated: false });
  });

  it('tells flexible sync apart, so partition clients can be told to switch', () => {
    expect(syncModeOf(withSync({ type: 'flexible', state: 'enabled' })).kind).toBe('flexible');
  });

  it('exposes the flexible configuration: queryable fields (global, per type, indexed), asymmetric tables, recovery and offline days', () => {
    const mode = syncModeOf(
      withSync({
        type: 'flexible',
        state: 'enabled',
        service_name: 'mongodb-atlas',
        database_name: 'todo',
        development_mode_enabled: true,
        queryable_fields_names: ['owner_id', 'team'],
        indexed_queryable_fields_names: ['owner_id'],
        collection_queryable_fields_names: { Item: ['isComplete'], Bad: 'x' as unknown as string[] },
        asymmetric_tables: ['Log'],
        is_recovery_mode_disabled: true,
        client_max_offline_days: 12,
      }),
    );
    if (mode.kind !== 'flexible') throw new Error(`expected flexible sync, got ${mode.kind}`);
    expect(mode).toEqual({
      kind: 'flexible',
      serviceName: 'mongodb-atlas',
      developmentMode: true,
      databaseName: 'todo',
      queryableFields: ['owner_id', 'team'],
      collectionQueryableFields: { Item: ['isComplete'], Bad: [] },
      indexedQueryableField: 'owner_id',
      asymmetricTables: ['Log'],
      recoveryDisabled: true,
      clientMaxOfflineDays: 12,
    });
    expect([...queryableFieldsFor(mode, 'Item')].sort()).toEqual(['_id', 'isComplete', 'owner_id', 'team']);
    expect([...queryableFieldsFor(mode, 'Person')].sort()).toEqual(['_id', 'owner_id', 'team']);
  });

  it('reads the older flexible_sync form embedded in the cluster service, with defaults', () => {
    const app = withSync(undefined);
    app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { flexible_sync: { state: 'enabled', database_name: 'db', queryable_fields_names: ['name'] } } }, collectionRules: [], rules: [], webhooks: [] });
    expect(syncModeOf(app)).toMatchObject({ kind: 'flexible', serviceName: 'mongodb-atlas', queryableFields: ['name'], asymmetricTables: [], recoveryDisabled: false, clientMaxOfflineDays: 30, developmentMode: false });
    const terminated = withSync(undefined);
    terminated.services.push({ config: { name: 'c', type: 'mongodb-atlas', config: { flexible_sync: { state: 'disabled', last_disabled: 5 } } }, collectionRules: [], rules: [], webhooks: [] });
    expect(syncModeOf(terminated)).toEqual({ kind: 'disabled', terminated: true });
  });

  it('denies everything when the configuration has no permissions', async () => {
    const mode = syncModeOf(withSync({ type: 'partition', state: 'enabled', partition: { key: '_partition', type: 'string' } }));
    if (mode.kind !== 'partition') throw new Error('expected partition sync');
    expect(await mode.permissions.evaluate({ user: { id: 'u1' }, partition: 'p' })).toMatchObject({ read: false, write: false });
  });
});
