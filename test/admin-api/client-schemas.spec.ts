import { type DataModel as SchemaModel, type DataModelAlert as ErrorBody } from '@tessera/app-config';
import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession } from './admin-session';

const PASSWORD = 'client-schemas-password';

// `GET .../sync/client_schemas/<language>`, the route realm-cli's `schema datamodels` calls: Realm SDK object
// models generated from the collection schemas of the app's deployment.
describe('admin API: sync/client_schemas (data models)', () => {
  let host: TestHost;
  let admin: AdminSession;
  let app: { _id: string };

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: PASSWORD } });
    admin = await AdminSession.login(host, 'admin', PASSWORD);
    app = await admin.createApp('zoo', { data_source: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } } });
    const schemas = admin.app(app._id, '/schemas');
    const person = { title: 'Person', bsonType: 'object', required: ['_id', 'name'], properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' } } };
    const dog = {
      title: 'Dog',
      bsonType: 'object',
      required: ['_id', 'name'],
      properties: {
        _id: { bsonType: 'objectId' },
        name: { bsonType: 'string' },
        age: { bsonType: 'int' },
        tricks: { bsonType: 'array', items: { bsonType: 'string' } },
        collar: { title: 'Collar', bsonType: 'object', properties: { color: { bsonType: 'string' } } },
        owner: { bsonType: 'objectId' },
      },
    };
    for (const [collection, schema, relationships] of [
      ['people', person, undefined],
      ['dogs', dog, { owner: { ref: '#/relationship/mongodb-atlas/zoo/people', source_key: 'owner', foreign_key: '_id', is_list: false } }],
    ] as const) {
      const created = await admin.request('POST', schemas, { metadata: { data_source: 'mongodb-atlas', database: 'zoo', collection }, schema, ...(relationships ? { relationships } : {}) });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('answers a model per titled collection schema and embedded type, in the shape realm-cli decodes', async () => {
    const response = await admin.request<SchemaModel[]>('GET', admin.app(app._id, '/sync/client_schemas/TYPE_SCRIPT'));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.map((model) => model.model_name).sort()).toEqual(['Collar', 'Dog', 'Person']);
    const services = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(app._id, '/services'));
    const serviceId = services.body.find((service) => service.name === 'mongodb-atlas')!._id;
    const rules = await admin.request<{ _id: string; collection: string }[]>('GET', admin.app(app._id, `/services/${serviceId}/rules`));
    const dog = response.body.find((model) => model.model_name === 'Dog')!;
    expect(dog).toEqual({
      service_id: serviceId,
      rule_id: rules.body.find((rule) => rule.collection === 'dogs')!._id,
      model_name: 'Dog',
      collection_display_name: 'zoo.dogs',
      import_statements: ['import Realm from "realm";\n'],
      schema: expect.stringContaining('export class Dog extends Realm.Object<Dog> {') as string,
      warnings: [],
      error: { error: '', error_code: '' },
    });
    for (const line of ['_id!: Realm.BSON.ObjectId;', 'age?: number;', 'tricks!: Realm.List<string>;', 'collar?: Collar;', 'owner?: Person;', "owner: 'Person?',"]) expect(dog.schema).toContain(line);
    expect(response.body.find((model) => model.model_name === 'Collar')!.schema).toContain('embedded: true,');
  });

  it('generates every language realm-cli asks for, and Dart', async () => {
    const expected: Record<string, string> = {
      C_SHARP: 'public partial class Dog : IRealmObject',
      JAVA: 'public class Dog extends RealmObject {',
      JAVA_SCRIPT: 'export class Dog extends Realm.Object {',
      KOTLIN: 'class Dog : RealmObject {',
      OBJECTIVE_C: '@interface Dog : RLMObject',
      SWIFT: 'class Dog: Object {',
      DART: 'class _Dog {',
    };
    for (const [language, start] of Object.entries(expected)) {
      const response = await admin.request<SchemaModel[]>('GET', admin.app(app._id, `/sync/client_schemas/${language}`));
      expect(response.status, language).toBe(200);
      expect(response.body.find((model) => model.model_name === 'Dog')!.schema, language).toContain(start);
    }
  });

  it('refuses an unknown language with 400, and another group or an unknown app with 404', async () => {
    const bad = await admin.request<ErrorBody>('GET', admin.app(app._id, '/sync/client_schemas/COBOL'));
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: expect.stringContaining('COBOL') as string, error_code: 'InvalidParameter' });
    const otherGroup = await admin.request<ErrorBody>('GET', `/groups/000000000000000000000000/apps/${app._id}/sync/client_schemas/SWIFT`);
    expect(otherGroup.status).toBe(404);
    expect(otherGroup.body.error_code).toBe('GroupNotFound');
    expect((await admin.request('GET', admin.app('000000000000000000000000', '/sync/client_schemas/SWIFT'))).status).toBe(404);
    expect((await admin.request('GET', admin.app(app._id, '/sync/client_schemas/SWIFT'), undefined, { token: 'not-a-token' })).status).toBe(401);
  });

  it('answers an empty list for an app without titled schemas', async () => {
    const empty = await admin.createApp('no-schemas');
    const response = await admin.request<SchemaModel[]>('GET', admin.app(empty._id, '/sync/client_schemas/KOTLIN'));
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });
});
