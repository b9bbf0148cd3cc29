import { type AppConfig, type CollectionRule, emptyApp, type Role } from '@tessera/app-config';

const everyone: Role = { name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true };

/**
 * The app the GraphQL end-to-end tests run: products owned by users (others see public products only,
 * without `secret`, and may not write them), categories linked by code, reviews linked both ways (private
 * reviews hidden), and custom resolvers of each kind.
 */
export function shopApp(options: { introspection?: boolean } = {}): AppConfig {
  const app = emptyApp('shop');
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  const rule = (collection: string, roles: Role[], schema: CollectionRule['schema'], relationships?: CollectionRule['relationships']): CollectionRule => ({
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
        [
          { name: 'owner', apply_when: { owner_id: '%%user.id' }, read: true, write: true, insert: true, delete: true, search: true },
          { name: 'public', apply_when: { visibility: 'public' }, fields: { secret: { read: false } }, additional_fields: { read: true }, insert: false, delete: false, search: true },
        ],
        {
          title: 'products',
          bsonType: 'object',
          required: ['name'],
          properties: {
            _id: { bsonType: 'objectId' },
            name: { bsonType: 'string' },
            owner_id: { bsonType: 'string' },
            visibility: { bsonType: 'string' },
            secret: { bsonType: 'string' },
            stock: { bsonType: 'int' },
            price: { bsonType: 'double' },
            views: { bsonType: 'long' },
            exactPrice: { bsonType: 'decimal' },
            releasedAt: { bsonType: 'date' },
            active: { bsonType: 'bool' },
            tags: { bsonType: 'array', items: { bsonType: 'string' } },
            dimensions: { bsonType: 'object', properties: { width: { bsonType: 'double' }, unit: { bsonType: 'string' } } },
            variants: { bsonType: 'array', items: { bsonType: 'object', properties: { color: { bsonType: 'string' }, count: { bsonType: 'int' } } } },
            'shelf label': { bsonType: 'string' },
            category_code: { bsonType: 'string' },
            reviewIds: { bsonType: 'array', items: { bsonType: 'objectId' } },
          },
        },
        {
          category_code: { ref: '#/relationship/mongodb-atlas/shop/categories', source_key: 'category_code', foreign_key: 'code', is_list: false },
          reviewIds: { ref: '#/relationship/mongodb-atlas/shop/reviews', source_key: 'reviewIds', foreign_key: '_id', is_list: true },
        },
      ),
      rule('categories', [everyone], {
        title: 'categories',
        bsonType: 'object',
        required: ['code'],
        properties: { _id: { bsonType: 'objectId' }, code: { bsonType: 'string' }, label: { bsonType: 'string' } },
      }),
      rule(
        'reviews',
        [{ ...everyone, name: 'published', apply_when: { published: true } }],
        {
          title: 'Review',
          bsonType: 'object',
          properties: { _id: { bsonType: 'objectId' }, stars: { bsonType: 'int' }, published: { bsonType: 'bool' }, product_id: { bsonType: 'objectId' } },
        },
        { product_id: { ref: '#/relationship/mongodb-atlas/shop/products', source_key: 'product_id', foreign_key: '_id', is_list: false } },
      ),
    ],
  });
  app.functions.push(
    { config: { name: 'countProducts' }, source: 'exports = function () { return 42; };\n' },
    { config: { name: 'search' }, source: "exports = function (text) { return [{ name: 'found ' + text }]; };\n" },
    { config: { name: 'restock' }, source: 'exports = function (input) { return input.name; };\n' },
    { config: { name: 'productStats' }, source: 'exports = function (source) { return { doubled: source.price * 2 }; };\n' },
  );
  app.graphql = {
    config: { use_natural_pluralization: true, disable_schema_introspection: options.introspection === false },
    customResolvers: [
      { on_type: 'Query', field_name: 'productCount', function_name: 'countProducts', payload_type: 'int', payload_type_format: 'scalar', input_type_format: '' },
      { on_type: 'Query', field_name: 'searchProducts', function_name: 'search', input_type: 'string', input_type_format: 'scalar', payload_type: 'Product', payload_type_format: 'generated-list' },
      { on_type: 'Mutation', field_name: 'restock', function_name: 'restock', input_type: 'ProductInsertInput', input_type_format: 'generated' },
      {
        on_type: 'Product',
        field_name: 'stats',
        function_name: 'productStats',
        payload_type: { title: 'ProductStatsData', bsonType: 'object', properties: { doubled: { bsonType: 'double' } } },
        payload_type_format: 'custom',
      },
    ],
  };
  return app;
}
