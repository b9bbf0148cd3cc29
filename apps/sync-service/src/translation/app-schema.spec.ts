import { type AppConfig, emptyApp } from '@tessera/app-config';
import { appSyncLayout, syncServiceName } from './app-schema';

function app(): AppConfig {
  const config = emptyApp('layout');
  config.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
    collectionRules: [
      {
        database: 'pets',
        collection: 'dogs',
        schema: {
          title: 'Dog',
          bsonType: 'object',
          required: ['_id', 'name'],
          properties: {
            _id: { bsonType: 'objectId' },
            _partition: { bsonType: 'string' },
            name: { bsonType: 'string' },
            age: { bsonType: 'long' },
            toys: { bsonType: 'array', items: { bsonType: 'string' } },
            tags: { bsonType: 'array', uniqueItems: true, items: { bsonType: 'string' } },
            marks: { bsonType: 'object', additionalProperties: { bsonType: 'int' } },
            address: { bsonType: 'object', title: 'Address', properties: { street: { bsonType: 'string' } } },
            owner: { bsonType: 'string' },
          },
        },
        relationships: { owner: { ref: '#/relationship/mongodb-atlas/people/owners', name: 'owner', foreign_key: '_id', is_list: false } as never },
      },
      { database: 'people', collection: 'owners', schema: { title: 'Owner', bsonType: 'object', properties: { _id: { bsonType: 'string' } } } },
    ],
    rules: [],
    webhooks: [],
  });
  config.sync = { type: 'partition', state: 'enabled', partition: { key: '_partition', type: 'string' } };
  return config;
}

describe('sync layout of an app', () => {
  it('finds the data-source service sync writes to', () => {
    expect(syncServiceName(app())).toBe('mongodb-atlas');
    expect(syncServiceName({ ...app(), sync: { service_name: 'other' } })).toBe('other');
  });

  it('maps each schema title to its collection and reads its table from the JSON schema', () => {
    const layout = appSyncLayout(app());
    expect(layout?.collections.get('Dog')).toEqual({ db: 'pets', coll: 'dogs' });
    const dog = layout?.schema.get('Dog');
    expect(dog?.spec).toEqual({ kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'ObjectId', pkNullable: false });
    expect(layout?.schema.get('Owner')?.spec).toMatchObject({ pkType: 'String' });
    const columns = Object.fromEntries([...(dog?.columns.values() ?? [])].map((c) => [c.field, [c.valueType, c.collectionType, c.linkTargetTable ?? '', c.nullable]]));
    expect(columns).toEqual({
      _partition: ['String', 'Single', '', true],
      name: ['String', 'Single', '', false],
      age: ['Int', 'Single', '', true],
      toys: ['String', 'List', '', false],
      tags: ['String', 'Set', '', false],
      marks: ['Int', 'Dictionary', '', false],
      address: ['Link', 'Single', 'Address', true],
      owner: ['Link', 'Single', 'Owner', true],
    });
    expect(layout?.schema.get('Address')?.spec).toEqual({ kind: 'Embedded' });
    expect(layout?.developmentMode).toBe(false);
  });

  it('links from embedded objects through the relationships App Services keys by path (pet.toy, pets.[].toy)', () => {
    const config = app();
    const rule = config.services[0].collectionRules[0];
    Object.assign(rule.schema!.properties!, {
      bestFriend: { bsonType: 'object', title: 'Friend', properties: { owner: { bsonType: 'string' }, since: { bsonType: 'date' } } },
      walks: { bsonType: 'array', items: { bsonType: 'object', title: 'Walk', properties: { with: { bsonType: 'string' } } } },
      sitters: { bsonType: 'object', additionalProperties: { bsonType: 'object', title: 'Sitting', properties: { by: { bsonType: 'string' } } } },
    });
    rule.relationships = {
      ...rule.relationships,
      'bestFriend.owner': { ref: '#/relationship/mongodb-atlas/people/owners', foreign_key: '_id', is_list: false },
      'walks.[].with': { ref: '#/relationship/mongodb-atlas/people/owners', foreign_key: '_id', is_list: false },
      'sitters.[].by': { ref: '#/relationship/mongodb-atlas/people/owners', foreign_key: '_id', is_list: false },
    } as never;
    const layout = appSyncLayout(config);
    const column = (table: string, field: string) => {
      const c = layout?.schema.get(table)?.columns.get(field);
      return [c?.valueType, c?.collectionType, c?.linkTargetTable ?? ''];
    };
    expect(column('Friend', 'owner')).toEqual(['Link', 'Single', 'Owner']);
    expect(column('Friend', 'since')).toEqual(['Timestamp', 'Single', '']);
    expect(column('Walk', 'with')).toEqual(['Link', 'Single', 'Owner']);
    expect(column('Sitting', 'by')).toEqual(['Link', 'Single', 'Owner']);
    // A top-level field of the same name as an embedded one is not linked by the embedded one's relationship.
    expect(column('Dog', 'name')).toEqual(['String', 'Single', '']);
  });

  it('reads optional collection elements, floats and dictionaries of embedded objects as Realm declares them', () => {
    const config = app();
    Object.assign(config.services[0].collectionRules[0].schema!.properties!, {
      nicknames: { bsonType: 'array', items: { bsonType: ['string', 'null'] } },
      weight: { bsonType: 'float' },
      rooms: { bsonType: 'object', additionalProperties: { bsonType: 'object', title: 'Room', properties: { size: { bsonType: 'double' } } } },
      visits: { bsonType: 'array', items: { bsonType: 'object', title: 'Visit', properties: { at: { bsonType: 'date' } } } },
    });
    const columns = Object.fromEntries([...(appSyncLayout(config)?.schema.get('Dog')?.columns.values() ?? [])].map((c) => [c.field, [c.valueType, c.collectionType, c.linkTargetTable ?? '', c.nullable]]));
    expect(columns).toMatchObject({
      nicknames: ['String', 'List', '', true],
      toys: ['String', 'List', '', false],
      weight: ['Float', 'Single', '', true],
      rooms: ['Link', 'Dictionary', 'Room', true],
      visits: ['Link', 'List', 'Visit', false],
    });
  });

  it('syncs a field whose relationship points at a foreign field other than _id as its own value, not a link', () => {
    const config = app();
    const dogs = config.services[0].collectionRules[0];
    dogs.relationships = { owner: { ref: '#/relationship/mongodb-atlas/people/owners', name: 'owner', foreign_key: 'name', is_list: false } as never };
    const owner = [...(appSyncLayout(config)?.schema.get('Dog')?.columns.values() ?? [])].find((column) => column.field === 'owner');
    expect([owner?.valueType, owner?.linkTargetTable ?? '']).toEqual(['String', '']);
  });
});
