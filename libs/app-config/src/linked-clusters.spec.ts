import { keepLinkedClusters, loadApp, readAppFiles, validateApp } from './index';
import { filesOf } from './__fixtures__/app-files';

// A Stitch template export (`stitch-cli export --as-template`) drops the cluster name of its cluster services,
// and its README imports it into an app that already links one (`stitch-cli import --strategy=replace`).
const template = () =>
  filesOf({
    'stitch.json': { config_version: 20180301, security: {} },
    'services/mongodb-atlas/config.json': { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { readPreference: 'primary', wireProtocolEnabled: false }, version: 1 },
    'services/mongodb-atlas/rules/shop.orders.json': { database: 'shop', collection: 'orders', roles: [{ name: 'all', apply_when: {}, read: true, write: true }] },
  });
const deployed = () =>
  readAppFiles(
    filesOf({
      'config.json': { name: 'shop' },
      'services/mongodb-atlas/config.json': { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0', readPreference: 'primary' } },
    }),
  ).app;

describe('keepLinkedClusters', () => {
  it('keeps the cluster the deployed app links when a pushed cluster service names none, with a warning', () => {
    const loaded = readAppFiles(template());
    loaded.app.settings.name = 'shop';
    expect(validateApp(loaded.app, { fileOf: loaded.fileOf }).map((v) => v.rule)).toEqual(['datasource.link.exactly_one']);
    const warnings = keepLinkedClusters(loaded.app, deployed(), loaded.fileOf);
    expect(loaded.app.services[0].config.config).toEqual({ clusterName: 'Cluster0', readPreference: 'primary', wireProtocolEnabled: false });
    expect(warnings.map(({ file, path, rule }) => `${file}|${path}|${rule}`)).toEqual(['services/mongodb-atlas/config.json|config.clusterName|datasource.link.kept']);
    expect(validateApp(loaded.app, { fileOf: loaded.fileOf })).toEqual([]);
  });

  it('changes nothing when the pushed service names a cluster, or the deployed app has no such service', () => {
    const named = readAppFiles(template()).app;
    (named.services[0].config.config as Record<string, unknown>).clusterName = 'Cluster1';
    expect(keepLinkedClusters(named, deployed())).toEqual([]);
    expect(named.services[0].config.config?.clusterName).toBe('Cluster1');

    const fresh = readAppFiles(template()).app;
    expect(keepLinkedClusters(fresh, readAppFiles(filesOf({ 'config.json': { name: 'shop' } })).app)).toEqual([]);
    expect(fresh.services[0].config.config?.clusterName).toBeUndefined();
    expect(loadApp(template()).violations.map((v) => v.rule)).toContain('datasource.link.exactly_one');
  });

  it('does not link a federated source or a service of another type', () => {
    const lake = readAppFiles(
      filesOf({ 'config.json': { name: 'shop' }, 'services/mongodb-atlas/config.json': { name: 'mongodb-atlas', type: 'datalake', config: {} } }),
    ).app;
    expect(keepLinkedClusters(lake, deployed())).toEqual([]);
    expect(lake.services[0].config.config).toEqual({});
  });

  it('keeps the one linked cluster for a Stitch service named as its app liked, and guesses nothing when there is a choice', () => {
    const renamed = () =>
      filesOf({
        'stitch.json': { config_version: 20180301, security: {} },
        'services/thepages-atlas/config.json': { name: 'thepages-atlas', type: 'mongodb-atlas', config: { readPreference: 'primary' }, version: 1 },
      });
    const loaded = readAppFiles(renamed());
    loaded.app.settings.name = 'shop';
    const warnings = keepLinkedClusters(loaded.app, deployed(), loaded.fileOf);
    expect(loaded.app.services[0].config.config).toEqual({ clusterName: 'Cluster0', readPreference: 'primary' });
    expect(warnings.map(({ file, rule }) => `${file}|${rule}`)).toEqual(['services/thepages-atlas/config.json|datasource.link.kept']);
    expect(validateApp(loaded.app, { fileOf: loaded.fileOf })).toEqual([]);

    // Two linked clusters deployed, or two unlinked services pushed: which one is meant is not known.
    const twoDeployed = readAppFiles(
      filesOf({
        'config.json': { name: 'shop' },
        'services/a/config.json': { name: 'a', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
        'services/b/config.json': { name: 'b', type: 'mongodb-atlas', config: { clusterName: 'Cluster1' } },
      }),
    ).app;
    const pushed = readAppFiles(renamed()).app;
    expect(keepLinkedClusters(pushed, twoDeployed)).toEqual([]);
    expect(pushed.services[0].config.config?.clusterName).toBeUndefined();
    const twoPushed = readAppFiles(
      filesOf({
        'stitch.json': { config_version: 20180301, security: {} },
        'services/one/config.json': { name: 'one', type: 'mongodb-atlas', config: {} },
        'services/two/config.json': { name: 'two', type: 'mongodb-atlas', config: {} },
      }),
    ).app;
    expect(keepLinkedClusters(twoPushed, deployed())).toEqual([]);
  });
});
