import { readAppFiles, writeAppFiles } from '@tessera/app-config';
import { appDataToFiles, filesToAppData } from './app-data';
import { writeExportFiles } from './export-layout';

const text = (value: string) => new TextEncoder().encode(value);
const json = (value: unknown) => text(`${JSON.stringify(value, null, 2)}\n`);

describe('realm-cli AppData and the export layout', () => {
  const current = new Map([
    ['config.json', json({ name: 'shop', location: 'US-VA', deployment_model: 'GLOBAL', security: { allowed_request_origins: ['http://a'] }, hosting: { enabled: true, custom_domain: 'shop.example.com', default_response_code: 200, default_error_path: '/index.html' } })],
    ['auth_providers/anon-user.json', json({ name: 'anon-user', type: 'anon-user', disabled: false })],
    ['functions/total/config.json', json({ name: 'total', private: false })],
    ['functions/total/source.js', text('exports = (a, b) => a + b;\n')],
    ['services/mongodb-atlas/config.json', json({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } })],
    ['services/mongodb-atlas/rules/shop.orders.json', json({ database: 'shop', collection: 'orders', roles: [{ name: 'r', apply_when: {}, read: true }], schema: { title: 'Order', bsonType: 'object', properties: { _id: { bsonType: 'objectId' } } } })],
    ['services/web/config.json', json({ name: 'web', type: 'http', config: {} })],
    ['services/web/incoming_webhooks/hook/config.json', json({ name: 'hook', run_as_system: true })],
    ['services/web/incoming_webhooks/hook/source.js', text('exports = () => 1;\n')],
    ['triggers/onOrder.json', json({ name: 'onOrder', type: 'DATABASE', function_name: 'total', config: { service_name: 'mongodb-atlas' } })],
    ['values/limit.json', json({ name: 'limit', value: '10' })],
  ]);

  it('round-trips an app through the export layout and AppData without losing anything', () => {
    const app = readAppFiles(current).app;
    const exported = writeExportFiles(app, { sourceControl: true });
    expect(JSON.parse(new TextDecoder().decode(exported.get('realm_config.json')))).toEqual({ config_version: 20210101, name: 'shop', location: 'US-VA', deployment_model: 'GLOBAL', allowed_request_origins: ['http://a'] });
    expect(JSON.parse(new TextDecoder().decode(exported.get('hosting/config.json')))).toEqual({ enabled: true, custom_domain: 'shop.example.com', default_response_code: 200, default_error_path: '/index.html' });
    const appData = filesToAppData(exported);
    expect(appData['hosting']).toEqual({ enabled: true, custom_domain: 'shop.example.com', default_response_code: 200, default_error_path: '/index.html' });
    expect(appData).toMatchObject({ name: 'shop', functions: { sources: { 'total.js': 'exports = (a, b) => a + b;\n' } }, data_sources: [{ rules: [{ collection: 'orders', schema: { title: 'Order' } }] }] });
    const imported = readAppFiles(appDataToFiles(JSON.parse(JSON.stringify(appData)))).app;
    expect(writeAppFiles(imported)).toEqual(writeAppFiles(app));
  });

  it('imports an App Services CLI body: provider_region, environment templates resolved, endpoints kept', () => {
    const endpoint = { route: '/total', http_method: 'POST', function_name: 'total', validation_method: 'NO_VALIDATION', respond_result: true };
    const { app, violations } = readAppFiles(
      appDataToFiles({
        name: 'shop',
        provider_region: 'aws-us-east-1',
        environment: 'testing',
        environments: { testing: { values: { cluster: 'shop-test' } } },
        functions: { config: [{ name: 'total', private: false }], sources: { 'total.js': 'exports = (a, b) => a + b;\n' } },
        data_sources: [{ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: '%(%%environment.values.cluster)' } } }],
        endpoints: [endpoint],
        data_api_config: { disabled: true, versions: ['v1'] },
      }),
    );
    expect(violations).toEqual([]);
    expect(app.settings).toMatchObject({ provider_region: 'aws-us-east-1', environment: 'testing' });
    expect(app.services[0].config.config?.clusterName).toBe('shop-test');
    expect(JSON.parse(new TextDecoder().decode(app.extraFiles.get('http_endpoints/config.json')))).toEqual([endpoint]);
    expect(app.extraFiles.has('http_endpoints/data_api_config.json')).toBe(true);
  });

  it('refuses an import body that is not an object', () => {
    expect(() => appDataToFiles([1, 2])).toThrow('the import body must be a JSON object');
  });
});
