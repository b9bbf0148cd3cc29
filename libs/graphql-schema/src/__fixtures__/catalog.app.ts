import { type AppConfig, type CollectionRule, emptyApp } from '@tessera/app-config';

/**
 * A larger app for the SDL snapshot and the executor tests: every BSON type the generator maps (and two
 * it omits), embedded objects inside arrays inside objects, arrays of arrays, field names that need
 * sanitising, to-one and to-many relationships both ways, natural pluralisation edge cases and custom
 * resolvers of every format.
 */
export function catalogApp(options: { roles?: CollectionRule['roles'] } = {}): AppConfig {
  const app = emptyApp('catalog');
  const roles = options.roles ?? [{ name: 'all', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }];
  const rule = (collection: string, schema: CollectionRule['schema'], relationships?: CollectionRule['relationships']): CollectionRule => ({
    database: 'shop',
    collection,
    roles,
    filters: [],
    schema,
    ...(relationships ? { relationships } : {}),
  });
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
    rules: [],
    webhooks: [],
    collectionRules: [
      rule(
        'products',
        {
          title: 'products',
          bsonType: 'object',
          required: ['_id', 'name', 'sku'],
          properties: {
            _id: { bsonType: 'objectId' },
            name: { bsonType: 'string' },
            sku: { bsonType: 'string' },
            stock: { bsonType: 'int' },
            price: { bsonType: 'double' },
            exactPrice: { bsonType: 'decimal' },
            views: { bsonType: 'long' },
            active: { bsonType: 'bool' },
            releasedAt: { bsonType: 'date' },
            lastSeen: { bsonType: 'timestamp' },
            tags: { bsonType: 'array', items: { bsonType: 'string' } },
            grid: { bsonType: 'array', items: { bsonType: 'array', items: { bsonType: 'int' } } },
            'Shelf location (aisle)': { bsonType: 'string' },
            __internal: { bsonType: 'string' },
            blob: { bsonType: 'binData' },
            pattern: { bsonType: 'regex' },
            dimensions: {
              bsonType: 'object',
              properties: { width: { bsonType: 'double' }, height: { bsonType: 'double' }, unit: { bsonType: 'string' } },
              required: ['unit'],
            },
            variants: {
              bsonType: 'array',
              items: {
                bsonType: 'object',
                properties: {
                  color: { bsonType: 'string' },
                  count: { bsonType: 'int' },
                  dependencies: { bsonType: 'array', items: { bsonType: 'object', properties: { sku: { bsonType: 'string' } } } },
                },
              },
            },
            category_id: { bsonType: 'string' },
            reviewIds: { bsonType: 'array', items: { bsonType: 'objectId' } },
          },
        },
        {
          category_id: { ref: '#/relationship/mongodb-atlas/shop/categories', source_key: 'category_id', foreign_key: 'code', is_list: false },
          reviewIds: { ref: '#/relationship/mongodb-atlas/shop/reviews', source_key: 'reviewIds', foreign_key: '_id', is_list: true },
        },
      ),
      rule('categories', {
        title: 'Category',
        bsonType: 'object',
        required: ['code'],
        properties: { _id: { bsonType: 'objectId' }, code: { bsonType: 'string' }, label: { bsonType: 'string' }, rank: { bsonType: 'int' } },
      }),
      rule(
        'reviews',
        {
          title: 'reviews',
          bsonType: 'object',
          properties: { _id: { bsonType: 'objectId' }, stars: { bsonType: 'int' }, body: { bsonType: 'string' }, product_id: { bsonType: 'objectId' } },
        },
        { product_id: { ref: '#/relationship/mongodb-atlas/shop/products', source_key: 'product_id', foreign_key: '_id', is_list: false } },
      ),
      rule('phenomena', { title: 'phenomena', bsonType: 'object', properties: { _id: { bsonType: 'objectId' }, seen: { bsonType: 'date' } } }),
      rule('mice', { title: 'Mouse', bsonType: 'object', properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' } } }),
      rule('no_schema', undefined),
    ],
  });
  app.graphql = {
    config: { use_natural_pluralization: true },
    customResolvers: [
      { on_type: 'Query', field_name: 'productCount', function_name: 'countProducts', payload_type: 'int', payload_type_format: 'scalar', input_type_format: '' },
      { on_type: 'Query', field_name: 'searchProducts', function_name: 'search', input_type: 'string', input_type_format: 'scalar', payload_type: 'Product', payload_type_format: 'generated-list' },
      { on_type: 'Mutation', field_name: 'restock', function_name: 'restock', input_type: 'ProductInsertInput', input_type_format: 'generated' },
      {
        on_type: 'Mutation',
        field_name: 'createDraft',
        function_name: 'createDraft',
        input_type: { title: 'CreateDraftInput', bsonType: 'object', required: ['name'], properties: { name: { bsonType: 'string' }, draft: { bsonType: 'object', properties: { note: { bsonType: 'string' } } } } },
        input_type_format: 'custom',
        payload_type: { title: 'StepsPayload', bsonType: 'array', items: { bsonType: 'object', properties: { step: { bsonType: 'int' }, dependencies: { bsonType: 'array', items: { bsonType: 'object', properties: { on: { bsonType: 'string' } } } } } } },
        payload_type_format: 'custom',
      },
      { on_type: 'Product', field_name: 'stats', function_name: 'productStats', payload_type: { title: 'ProductStatsData', bsonType: 'object', properties: { score: { bsonType: 'double' } } }, payload_type_format: 'custom' },
    ],
  };
  return app;
}
