import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';
import { cliWithApp, tessera } from './tessera-cli';

const password = 'schema-datamodels-cli-password';

// realm-cli's `schema datamodels` on the built `tessera` binary, as a subprocess against the real host.
describe('tessera schema datamodels', () => {
  const work = makeTempDir('tessera-datamodels-cli-');
  let host: TestHost;
  let env: Record<string, string>;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    ({ env, clientAppId } = await cliWithApp(host.url, password, work.path, 'cli-zoo', join(work.path, 'app')));
    const admin = await AdminSession.login(host, 'admin', password);
    const apps = await admin.request<{ _id: string; client_app_id: string }[]>('GET', `/groups/${admin.groupId}/apps`);
    const appId = apps.body.find((app) => app.client_app_id === clientAppId)!._id;
    const services = await admin.request<{ name: string }[]>('GET', admin.app(appId, '/services'));
    if (!services.body.some((service) => service.name === 'mongodb-atlas')) {
      const created = await admin.request('POST', admin.app(appId, '/services'), { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    const schemas: [string, Record<string, unknown>][] = [
      ['cats', { title: 'Cat', bsonType: 'object', required: ['_id'], properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' }, regex: { bsonType: 'regex' } } }],
      ['dogs', { title: 'Dog', bsonType: 'object', required: ['_id', 'name'], properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' }, tags: { bsonType: 'array', uniqueItems: true, items: { bsonType: 'string' } } } }],
    ];
    for (const [collection, schema] of schemas) {
      const created = await admin.request('POST', admin.app(appId, '/schemas'), { metadata: { data_source: 'mongodb-atlas', database: 'zoo', collection }, schema });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  it('prints one model, filtered by --name, with its imports first, as realm-cli does', async () => {
    const run = await tessera(['schema', 'datamodels', '--app', clientAppId, '--language', 'typescript', '--name', 'Dog'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.startsWith('The following Typescript data model was generated from your schema: DOG\n\nimport Realm from "realm";\n\nexport class Dog extends Realm.Object<Dog> {\n')).toBe(true);
    expect(run.stdout).toContain('  tags!: Realm.Set<string>;\n');
    expect(run.stdout).toContain("      tags: 'string<>',\n");
    expect(run.stdout).not.toContain('class Cat');
    expect(run.stdout).not.toContain('warnings');
  });

  it('prints every model in one block with --flat, and the warnings in a table', async () => {
    const run = await tessera(['schema', 'datamodel', '--app', clientAppId, '-l', 'swift', '--flat'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.startsWith('The following Swift data models were generated from your schema\n\nimport Foundation\nimport RealmSwift\n\nclass ')).toBe(true);
    expect(run.stdout).toContain('class Cat: Object {\n    @Persisted(primaryKey: true) var _id: ObjectId\n    @Persisted var name: String?\n}\n\nclass Dog: Object {');
    expect(run.stdout.match(/import RealmSwift/g)).toHaveLength(1);
    expect(run.stdout).toContain('The following collections have schemas with warnings\n  Collection  Model Name  Error Code       Message');
    expect(run.stdout).toMatch(/ {2}zoo\.cats {4}Cat {9}UnsupportedType {2}Cat\.regex .*\/groups\/[0-9a-f]{24}\/apps\/[0-9a-f]{24}\/clusters\/[0-9a-f]{24}\/rules\/[0-9a-f]{24}\/schema/);
  });

  it('leaves out imports with --no-imports, takes realm-cli aliases, and answers JSON with --json', async () => {
    const run = await tessera(['schema', 'datamodels', '--app', clientAppId, '--language', 'csharp', '--name', 'Dog', '--no-imports'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`The following C# data model was generated from your schema: DOG\n\n${run.stdout.split('\n\n').slice(1).join('\n\n')}`);
    expect(run.stdout).not.toContain('using Realms;');
    expect(run.stdout).toContain('public partial class Dog : IRealmObject');
    const json = await tessera(['schema', 'datamodels', '--app', clientAppId, '--language', 'kotlin', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { model_name: string }[]).map((model) => model.model_name).sort()).toEqual(['Cat', 'Dog']);
  });

  it('refuses an unknown language or none, and says so when nothing was generated', async () => {
    const bad = await tessera(['schema', 'datamodels', '--app', clientAppId, '--language', 'cobol'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("'cobol' is not a recognized language, instead try: c_sharp, java, javascript, kotlin, objective_c, swift, typescript, dart");
    expect((await tessera(['schema', 'datamodels', '--app', clientAppId], env)).code).toBe(2);
    const created = await tessera(['apps', 'create', '--name', 'empty-zoo', '--local', join(work.path, 'empty'), '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const empty = (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
    const none = await tessera(['schema', 'datamodels', '--app', empty, '--language', 'js'], env);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe('No Javascript models were generated, check that you have defined a schema\n');
  });
});
