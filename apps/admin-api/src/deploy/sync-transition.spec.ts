import { emptyApp, type AppConfig, type SyncConfig } from '@tessera/app-config';
import { initialSyncState } from '@tessera/platform';
import { checkSyncSource, locateSync, planSyncTransition, type LocatedSync } from './sync-transition';

const permissions = { read: true, write: { '%%partition': '%%user.id' } };
const at = (sync: SyncConfig): LocatedSync => ({ sync, serviceName: 'mongodb-atlas', file: 'sync/config.json', base: '' });
const enabled = (key = 'owner_id'): LocatedSync => at({ type: 'partition', state: 'enabled', partition: { key, type: 'string', permissions } });
const context = { allowNewPartitionSync: false, firstImport: false, nowSeconds: 1_000 };

describe('planSyncTransition', () => {
  it('refuses to enable partition-based sync on an app that never had it, naming flexible sync', () => {
    const result = planSyncTransition(undefined, enabled(), initialSyncState, context);
    expect(result).toMatchObject({ ok: false, code: 'PartitionSyncNotAllowed' });
    expect(!result.ok && result.message).toContain('flexible sync');
  });

  it('enables it when the setting allows it or the configuration is a first import', () => {
    for (const options of [{ ...context, allowNewPartitionSync: true }, { ...context, firstImport: true }]) {
      expect(planSyncTransition(undefined, enabled(), initialSyncState, options)).toMatchObject({ ok: true, event: 'enabled', state: { everEnabled: true, enabled: true, enabledAt: 1_000, resetEpoch: 0 } });
    }
  });

  it('locks the key, its type and the permissions while enabled, but not the other settings', () => {
    const state = { ...initialSyncState, everEnabled: true, enabled: true };
    expect(planSyncTransition(enabled(), enabled('other'), state, context)).toMatchObject({ ok: false, code: 'SyncRulesLocked' });
    const newPermissions = at({ type: 'partition', state: 'enabled', partition: { key: 'owner_id', type: 'string', permissions: { read: true, write: true } } });
    expect(planSyncTransition(enabled(), newPermissions, state, context)).toMatchObject({ ok: false, code: 'SyncRulesLocked' });
    const reordered = at({ type: 'partition', state: 'enabled', partition: { permissions: { write: { '%%partition': '%%user.id' }, read: true }, type: 'string', key: 'owner_id' }, client_max_offline_days: 3 });
    expect(planSyncTransition(enabled(), reordered, state, context)).toMatchObject({ ok: true, event: 'updated' });
  });

  it('records last_disabled on terminate, then a client reset on re-enable', () => {
    const next = at({ type: 'partition', state: 'disabled', partition: { key: 'owner_id', type: 'string', permissions } });
    const terminated = planSyncTransition(enabled(), next, { ...initialSyncState, everEnabled: true, enabled: true }, context);
    expect(terminated).toMatchObject({ ok: true, event: 'terminated', state: { enabled: false, lastDisabled: 1_000 } });
    expect(next.sync.last_disabled).toBe(1_000);
    const reenabled = planSyncTransition(next, enabled('team_id'), terminated.ok ? terminated.state : initialSyncState, { ...context, nowSeconds: 2_000 });
    expect(reenabled).toMatchObject({ ok: true, event: 're-enabled', state: { enabled: true, resetEpoch: 1, clientResetRequiredSince: 2_000, partition: { key: 'team_id' } } });
  });

  it('counts sync enabled before the platform kept sync state (a bootstrapped app) as history', () => {
    const next = at({ type: 'partition', state: 'disabled', partition: { key: 'owner_id', type: 'string', permissions } });
    const terminated = planSyncTransition(enabled(), next, initialSyncState, context);
    expect(terminated).toMatchObject({ ok: true, event: 'terminated', state: { everEnabled: true } });
    const reenabled = planSyncTransition(next, enabled('team_id'), initialSyncState, context);
    expect(reenabled).toMatchObject({ ok: true, event: 're-enabled', state: { resetEpoch: 1 } });
  });

  it('treats removing the sync configuration of an enabled app as a terminate', () => {
    expect(planSyncTransition(enabled(), undefined, { ...initialSyncState, everEnabled: true, enabled: true }, context)).toMatchObject({ ok: true, event: 'terminated', state: { lastDisabled: 1_000 } });
  });
});

describe('planSyncTransition with flexible sync', () => {
  const flexible = (extra: SyncConfig = {}, serviceName = 'mongodb-atlas'): LocatedSync => ({
    sync: { type: 'flexible', state: 'enabled', queryable_fields_names: ['owner_id'], ...extra },
    mode: 'flexible',
    serviceName,
    file: 'sync/config.json',
    base: '',
  });

  it('enables flexible sync on an app that never had sync, without the partition-sync setting', () => {
    expect(planSyncTransition(undefined, flexible(), initialSyncState, context)).toMatchObject({ ok: true, event: 'enabled', state: { everEnabled: false, enabled: true, enabledAt: 1_000, resetEpoch: 0 } });
  });

  it('lets queryable fields, asymmetric tables and development mode change while enabled, but not the synced cluster', () => {
    const state = { ...initialSyncState, enabled: true };
    const changed = flexible({ queryable_fields_names: ['owner_id', 'team'], asymmetric_tables: ['Log'], development_mode_enabled: true, database_name: 'x' });
    expect(planSyncTransition(flexible(), changed, state, context)).toMatchObject({ ok: true, event: 'updated' });
    const moved = planSyncTransition(flexible(), flexible({}, 'other-cluster'), state, context);
    expect(moved).toMatchObject({ ok: false, code: 'SyncRulesLocked', violations: [{ rule: 'sync.rules.locked', path: 'service_name' }] });
  });

  it('refuses to switch modes while enabled, and allows it after a terminate (with a reset epoch)', () => {
    const switched = planSyncTransition(enabled(), flexible(), { ...initialSyncState, everEnabled: true, enabled: true }, context);
    expect(switched).toMatchObject({ ok: false, code: 'SyncRulesLocked', violations: [{ rule: 'sync.mode.locked' }] });
    expect(!switched.ok && switched.message).toContain('terminate sync');
    const terminated = planSyncTransition(enabled(), at({ type: 'partition', state: 'disabled', partition: { key: 'owner_id', type: 'string', permissions } }), { ...initialSyncState, everEnabled: true, enabled: true }, context);
    const next = planSyncTransition(undefined, flexible(), terminated.ok ? terminated.state : initialSyncState, { ...context, nowSeconds: 2_000 });
    expect(next).toMatchObject({ ok: true, event: 're-enabled', state: { enabled: true, resetEpoch: 1, clientResetRequiredSince: 2_000, everEnabled: true } });
    expect(next.ok && next.state.partition).toBeUndefined();
  });

  it('terminates flexible sync without counting it as partition history', () => {
    const next = flexible({ state: 'disabled' });
    const terminated = planSyncTransition(flexible(), next, { ...initialSyncState, enabled: true }, context);
    expect(terminated).toMatchObject({ ok: true, event: 'terminated', state: { everEnabled: false, enabled: false, lastDisabled: 1_000 } });
    expect(next.sync.last_disabled).toBe(1_000);
    // Partition-based sync stays refused afterwards: the app never had it.
    expect(planSyncTransition(next, enabled(), terminated.ok ? terminated.state : initialSyncState, context)).toMatchObject({ ok: false, code: 'PartitionSyncNotAllowed' });
  });
});

describe('locateSync and checkSyncSource', () => {
  const appWith = (clusterConfig: Record<string, unknown>, sync?: SyncConfig): AppConfig => {
    const app = emptyApp('a');
    app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: clusterConfig }, collectionRules: [], rules: [], webhooks: [] });
    if (sync) app.sync = sync;
    return app;
  };

  it('finds sync/config.json first and an embedded config.sync otherwise', () => {
    expect(locateSync(appWith({}, { type: 'partition', service_name: 'mongodb-atlas', state: 'enabled' }))).toMatchObject({ file: 'sync/config.json', base: '' });
    expect(locateSync(appWith({ sync: { state: true, partition: { key: 'k', type: 'string' } } }))).toMatchObject({ file: 'services/mongodb-atlas/config.json', base: 'config.sync.' });
    expect(locateSync(appWith({}))).toBeUndefined();
  });

  it('finds flexible sync in sync/config.json and in the older config.flexible_sync', () => {
    expect(locateSync(appWith({}, { type: 'flexible', service_name: 'mongodb-atlas', state: 'enabled' }))).toMatchObject({ mode: 'flexible', file: 'sync/config.json', serviceName: 'mongodb-atlas' });
    expect(locateSync(appWith({ flexible_sync: { state: 'enabled', queryable_fields_names: ['a'] } }))).toMatchObject({ mode: 'flexible', file: 'services/mongodb-atlas/config.json', base: 'config.flexible_sync.' });
  });

  it('needs MongoDB 5.0 for flexible sync where the cluster version is known', () => {
    const app = appWith({ clusterVersion: '4.4.18' }, { type: 'flexible', service_name: 'mongodb-atlas', state: 'enabled' });
    expect(checkSyncSource(app, locateSync(app)).map((violation) => violation.message)).toEqual(['flexible sync needs database version 5.0.0 or later; the cluster runs 4.4.18']);
    const recent = appWith({ clusterVersion: '6.0.3' }, { type: 'flexible', service_name: 'mongodb-atlas', state: 'enabled' });
    expect(checkSyncSource(recent, locateSync(recent))).toEqual([]);
  });

  it('refuses serverless instances and clusters older than 4.4.0, and accepts 4.4.0', () => {
    const sync: SyncConfig = { type: 'partition', service_name: 'mongodb-atlas', state: 'enabled' };
    const rules = (config: Record<string, unknown>) => {
      const app = appWith(config, sync);
      return checkSyncSource(app, locateSync(app)).map((violation) => violation.rule);
    };
    expect(rules({ clusterType: 'serverless' })).toEqual(['sync.datasource.serverless']);
    expect(rules({ clusterVersion: '4.2.9' })).toEqual(['sync.cluster.version']);
    expect(rules({ clusterVersion: '4.4.0' })).toEqual([]);
    expect(rules({ clusterVersion: '7.0' })).toEqual([]);
  });
});
