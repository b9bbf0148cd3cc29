import { emptyApp, validateApp, type AppConfig } from '@tessera/app-config';
import { applyDevelopmentSchemas } from './development-schemas';

const devApp = (developmentMode = true): AppConfig => {
  const app = emptyApp('dev');
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } }, collectionRules: [], rules: [], webhooks: [] });
  app.sync = { type: 'partition', state: 'enabled', service_name: 'mongodb-atlas', development_mode_enabled: developmentMode, database_name: 'devdb', partition: { key: 'owner_id', type: 'string', permissions: { read: true, write: true } } };
  return app;
};

const task = { name: 'Task', primary_key: '_id', properties: { _id: { type: 'objectId' }, title: { type: 'string' }, done: { type: 'bool', optional: true }, tags: { type: 'list', items: { type: 'string' } }, project: { type: 'object', object_type: 'Project', optional: true } } };
const project = { name: 'Project', primary_key: '_id', properties: { _id: { type: 'objectId' }, name: { type: 'string' } } };

describe('applyDevelopmentSchemas', () => {
  it('maps each synced type to a collection of database_name with a schema holding the partition key', () => {
    const app = devApp();
    expect(applyDevelopmentSchemas(app, [task, project])).toEqual({ created: ['Task', 'Project'], extended: [] });
    const rules = app.services[0].collectionRules;
    expect(rules.map((rule) => `${rule.database}.${rule.collection}`)).toEqual(['devdb.Task', 'devdb.Project']);
    expect(rules[0].schema).toEqual({
      title: 'Task',
      bsonType: 'object',
      required: ['_id', 'title'],
      properties: { _id: { bsonType: 'objectId' }, title: { bsonType: 'string' }, done: { bsonType: 'bool' }, tags: { bsonType: 'array', items: { bsonType: 'string' } }, project: { bsonType: 'objectId' }, owner_id: { bsonType: 'string' } },
    });
    expect(rules[0].relationships).toEqual({ project: { ref: '#/relationship/mongodb-atlas/devdb/Project', source_key: 'project', foreign_key: '_id', is_list: false } });
    expect(validateApp(app)).toEqual([]);
  });

  it('writes floats, optional elements, embedded objects and links as App Services did, so the sync schema reads back as declared', () => {
    const app = devApp();
    const owner = { name: 'Owner', primary_key: '_id', properties: { _id: { type: 'string' } } };
    const address = { name: 'Address', embedded: true, properties: { street: { type: 'string' }, zip: { type: 'int', optional: true } } };
    const thing = {
      name: 'Thing',
      primary_key: '_id',
      properties: {
        _id: { type: 'objectId' },
        weight: { type: 'float' },
        names: { type: 'list', items: { type: 'string', optional: true } },
        address: { type: 'object', object_type: 'Address', optional: true },
        addresses: { type: 'list', items: { type: 'object', object_type: 'Address' } },
        owners: { type: 'list', items: { type: 'object', object_type: 'Owner' } },
      },
    };
    expect(applyDevelopmentSchemas(app, [thing, owner, address])).toEqual({ created: ['Thing', 'Owner'], extended: [] });
    const [thingRule] = app.services[0].collectionRules;
    const addressSchema = { title: 'Address', bsonType: 'object', properties: { street: { bsonType: 'string' }, zip: { bsonType: 'long' } }, required: ['street'] };
    expect(thingRule.schema?.properties).toMatchObject({
      weight: { bsonType: 'float' },
      names: { bsonType: 'array', items: { bsonType: ['string', 'null'] } },
      address: addressSchema,
      addresses: { bsonType: 'array', items: addressSchema },
      owners: { bsonType: 'array', items: { bsonType: 'string' } },
    });
    expect(thingRule.relationships).toEqual({ owners: { ref: '#/relationship/mongodb-atlas/devdb/Owner', source_key: 'owners', foreign_key: '_id', is_list: true } });
    // A later type links to one deployed before: the relationship uses the deployed collection and _id type.
    applyDevelopmentSchemas(app, [{ name: 'Pet', primary_key: '_id', properties: { _id: { type: 'int' }, owner: { type: 'object', object_type: 'Owner', optional: true } } }]);
    const pet = app.services[0].collectionRules.find((rule) => rule.collection === 'Pet');
    expect(pet?.schema?.properties?.['owner']).toEqual({ bsonType: 'string' });
    expect(pet?.relationships).toEqual({ owner: { ref: '#/relationship/mongodb-atlas/devdb/Owner', source_key: 'owner', foreign_key: '_id', is_list: false } });
    expect(validateApp(app)).toEqual([]);
  });

  it('keys the relationships of links inside embedded objects by their path, as App Services did (visit.by, visits.[].by)', () => {
    const app = devApp();
    const owner = { name: 'Owner', primary_key: '_id', properties: { _id: { type: 'string' } } };
    const visit = { name: 'Visit', embedded: true, properties: { by: { type: 'object', object_type: 'Owner', optional: true }, at: { type: 'date' } } };
    const house = {
      name: 'House',
      primary_key: '_id',
      properties: {
        _id: { type: 'objectId' },
        visit: { type: 'object', object_type: 'Visit', optional: true },
        visits: { type: 'list', items: { type: 'object', object_type: 'Visit' } },
        byRoom: { type: 'dictionary', items: { type: 'object', object_type: 'Visit', optional: true } },
      },
    };
    applyDevelopmentSchemas(app, [house, owner, visit]);
    const houseRule = app.services[0].collectionRules.find((rule) => rule.collection === 'House');
    const ref = '#/relationship/mongodb-atlas/devdb/Owner';
    expect(houseRule?.relationships).toEqual({
      'visit.by': { ref, source_key: 'visit.by', foreign_key: '_id', is_list: false },
      'visits.[].by': { ref, source_key: 'visits.[].by', foreign_key: '_id', is_list: false },
      'byRoom.[].by': { ref, source_key: 'byRoom.[].by', foreign_key: '_id', is_list: false },
    });
    expect(houseRule?.schema?.properties?.['visit']).toMatchObject({ title: 'Visit', properties: { by: { bsonType: 'string' }, at: { bsonType: 'date' } } });
    expect(validateApp(app)).toEqual([]);
  });

  it('adds new fields, keeps existing ones, and refuses a type change', () => {
    const app = devApp();
    applyDevelopmentSchemas(app, [project]);
    expect(applyDevelopmentSchemas(app, [{ ...project, properties: { ...project.properties, color: { type: 'string', optional: true } } }])).toEqual({ created: [], extended: ['Project'] });
    expect(Object.keys(app.services[0].collectionRules[0].schema!.properties!)).toEqual(['_id', 'name', 'owner_id', 'color']);
    expect(() => applyDevelopmentSchemas(app, [{ ...project, properties: { ...project.properties, name: { type: 'int' } } }])).toThrow('the synced types change existing fields');
  });

  it('refuses when development mode is off, and types it cannot map', () => {
    expect(() => applyDevelopmentSchemas(devApp(false), [project])).toThrow('development mode is off');
    expect(() => applyDevelopmentSchemas(devApp(), [{ name: 'X', properties: { a: { type: 'tensor' } } }])).toThrow('unknown property type "tensor"');
    expect(() => applyDevelopmentSchemas(devApp(), [{ name: 'X', properties: { a: { type: 'object', object_type: 'Nope' } } }])).toThrow('links to unknown type "Nope"');
  });
});
