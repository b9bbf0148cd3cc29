import { Decimal128, Double, Long, ObjectId } from 'bson';
import type { ClientError as GraphqlClientError, GraphQLClient as GraphqlRequestClient } from 'graphql-request' with { 'resolution-mode': 'import' };
import { shopApp } from '@tessera/testing';
import { type DataAccessCall, startTestHost, type TestHost } from '../support/test-host';

// The client GraphQL endpoint end to end: a real HTTP server (the gateway module on Fastify, the client
// API's anonymous login, the rules-enforcing data access) driven by graphql-request.
// graphql-request 7 is an ES module; this file compiles to CommonJS, so it is loaded with import().
let GraphQLClient: typeof GraphqlRequestClient;
let ClientError: typeof GraphqlClientError;

describe('client GraphQL endpoint', () => {
  let host: TestHost;
  /** Every data-access call the endpoint made, in order (to count reads per relationship level). */
  let calls: DataAccessCall[];
  let clientAppId: string;
  let appId: string;
  let owner: { accessToken: string; userId: string };
  let other: { accessToken: string; userId: string };
  let client: GraphqlRequestClient;
  let lenient: GraphqlRequestClient;
  const reviewPublished = new ObjectId();
  const reviewHidden = new ObjectId();
  const productIds = Array.from({ length: 20 }, () => new ObjectId());

  const endpoint = (): string => `${host.url}/api/client/v2.0/app/${clientAppId}/graphql`;
  const seed = () => host.dataSources.forService(shopApp(), 'mongodb-atlas').client.db('shop');

  beforeAll(async () => {
    ({ GraphQLClient, ClientError } = await import('graphql-request'));
    host = await startTestHost({
      services: ['graphql-gateway'],
      fakes: {
        functions: {
          countProducts: () => 42,
          search: (args) => [{ _id: productIds[0], name: `found ${String(args[0])}` }],
          restock: () => 'ignored',
          productStats: (args) => ({ doubled: (args[0] as { price: number }).price * 2 }),
        },
      },
    });
    calls = host.recordDataAccess();
    ({ clientAppId, appId } = await host.createApp('shop', shopApp()));
    owner = await host.anonymousLogin(clientAppId);
    other = await host.anonymousLogin(clientAppId);
    client = new GraphQLClient(endpoint(), { headers: { authorization: `Bearer ${owner.accessToken}` } });
    lenient = new GraphQLClient(endpoint(), { headers: { authorization: `Bearer ${owner.accessToken}` }, errorPolicy: 'all' });
    const db = seed();
    await db.collection('categories').insertMany([
      { code: 'tools', label: 'Tools' },
      { code: 'toys', label: 'Toys' },
    ]);
    await db.collection('reviews').insertMany([
      { _id: reviewPublished, stars: 5, published: true, product_id: productIds[0] },
      { _id: reviewHidden, stars: 1, published: false, product_id: productIds[0] },
    ]);
    await db.collection('products').insertMany([
      ...productIds.map((_id, i) => ({
        _id,
        name: `product ${String(i).padStart(2, '0')}`,
        owner_id: owner.userId,
        visibility: 'public',
        secret: `mine ${i}`,
        // Product 04 holds its numbers with other BSON types than the schema's (a long stock, a double holding 6).
        stock: i === 4 ? Long.fromNumber(4) : i,
        price: i === 4 ? new Double(6) : i * 1.5,
        views: Long.fromNumber(1000 * i),
        active: i % 2 === 0,
        tags: i % 3 === 0 ? ['red', 'sale'] : ['blue'],
        dimensions: { width: i, unit: i < 10 ? 'cm' : 'in' },
        variants: [{ color: i % 2 === 0 ? 'red' : 'green', count: i }],
        'shelf label': `A${i}`,
        category_code: i % 2 === 0 ? 'tools' : 'toys',
        ...(i === 0 ? { reviewIds: [reviewPublished, reviewHidden, new ObjectId()], releasedAt: new Date('2024-01-02T03:04:05.000Z'), exactPrice: Decimal128.fromString('9.99') } : {}),
      })),
      { name: 'theirs private', owner_id: other.userId, visibility: 'private', secret: 'x', stock: 500 },
      { name: 'theirs public', owner_id: other.userId, visibility: 'public', secret: 'hidden from others', stock: 600 },
    ]);
  });

  afterAll(async () => {
    await host?.close();
  });

  function errorsOf(error: unknown): string[] {
    if (!(error instanceof ClientError)) throw error;
    return (error.response.errors ?? []).map((e) => e.message);
  }

  describe('queries', () => {
    it('answers the singular query with one document and null when nothing matches', async () => {
      const result = await client.request<{ product: { name: string; stock: number } | null; none: unknown }>(
        `query { product(query: { name: "product 03" }) { name stock } none: product(query: { name: "nothing" }) { name } }`,
      );
      expect(result).toEqual({ product: { name: 'product 03', stock: 3 }, none: null });
    });

    it('reads Int and Float fields whatever BSON number type the document holds', async () => {
      const result = await client.request<{ product: { stock: number; price: number; views: number } }>(`query { product(query: { name: "product 04" }) { stock price views } }`);
      expect(result).toEqual({ product: { stock: 4, price: 6, views: 4000 } });
    });

    it('answers the plural query with limit 100 by default, a limit, and sortBy', async () => {
      const all = await client.request<{ products: Array<{ name: string }> }>(`{ products { name } }`);
      expect(all.products).toHaveLength(21);
      const sorted = await client.request<{ products: Array<{ stock: number }> }>(`{ products(sortBy: STOCK_DESC, limit: 3) { stock } }`);
      expect(sorted.products).toEqual([{ stock: 600 }, { stock: 19 }, { stock: 18 }]);
      const ascending = await client.request<{ products: Array<{ name: string }> }>(`{ products(sortBy: NAME_ASC, limit: 2) { name } }`);
      expect(ascending.products.map((p) => p.name)).toEqual(['product 00', 'product 01']);
    });

    it.each([
      ['eq', '{ stock: 4 }', [4]],
      ['ne', '{ stock_ne: 4, stock_lt: 6 }', [0, 1, 2, 3, 5]],
      ['gt', '{ stock_gt: 17, stock_lt: 100 }', [18, 19]],
      ['gte', '{ stock_gte: 18, stock_lt: 100 }', [18, 19]],
      ['lt', '{ stock_lt: 2 }', [0, 1]],
      ['lte', '{ stock_lte: 1 }', [0, 1]],
      ['in', '{ stock_in: [3, 5, 99] }', [3, 5]],
      ['nin', '{ stock_nin: [0, 1, 2], stock_lt: 5 }', [3, 4]],
      ['exists true', '{ reviewIds_exists: true }', [0]],
      ['exists false', '{ visibility_exists: false }', []],
      ['AND', '{ AND: [{ stock_gt: 2 }, { stock_lt: 5 }] }', [3, 4]],
      ['OR', '{ OR: [{ stock: 1 }, { stock: 7 }] }', [1, 7]],
      ['boolean eq and ne', '{ active: false, stock_lt: 4 }', [1, 3]],
      ['array eq', '{ tags: ["red", "sale"], stock_lt: 7 }', [0, 3, 6]],
      ['array in', '{ tags_in: ["sale"], stock_lt: 7 }', [0, 3, 6]],
      ['array nin', '{ tags_nin: ["blue"], stock_lt: 7 }', [0, 3, 6]],
      ['embedded object', '{ dimensions: { unit: "in", width_lt: 12 } }', [10, 11]],
      ['array of embedded objects', '{ variants: [{ color: "green", count_lt: 4 }] }', [1, 3]],
      ['float and long', '{ price_gte: 27.0, views_gte: 19000 }', [19]],
      ['renamed field', '{ ShelfLabel: "A7" }', [7]],
      ['to-one relationship', '{ category_code: { label: "Toys" }, stock_lt: 5 }', [1, 3]],
      ['to-many relationship', '{ reviewIds_in: [{ stars: 5 }] }', [0]],
    ])('filters with %s', async (_name, query, stocks) => {
      const result = await client.request<{ products: Array<{ stock: number }> }>(`{ products(query: ${query}, sortBy: STOCK_ASC) { stock } }`);
      expect(result.products.map((p) => p.stock)).toEqual(stocks);
    });

    it('filters and sorts with variables of BSON scalar types', async () => {
      const result = await client.request<{ products: Array<{ _id: string; releasedAt: string; exactPrice: string; views: number }> }>(
        `query ($id: ObjectId!, $after: DateTime) { products(query: { _id: $id, releasedAt_gt: $after }) { _id releasedAt exactPrice views } }`,
        { id: productIds[0].toHexString(), after: '2020-01-01T00:00:00Z' },
      );
      expect(result.products).toEqual([{ _id: productIds[0].toHexString(), releasedAt: '2024-01-02T03:04:05.000Z', exactPrice: '9.99', views: 0 }]);
    });
  });

  describe('relationships', () => {
    it('resolves to-one and to-many relationships, leaving out missing and hidden foreign documents', async () => {
      const result = await client.request<{ product: { category_code: { label: string }; reviewIds: Array<{ stars: number; product_id: { name: string } }> } }>(
        `{ product(query: { stock: 0 }) { category_code { label } reviewIds { stars product_id { name } } } }`,
      );
      expect(result.product).toEqual({ category_code: { label: 'Tools' }, reviewIds: [{ stars: 5, product_id: { name: 'product 00' } }] });
    });

    it('reads each relationship once per level, whatever the number of parents', async () => {
      calls.length = 0;
      const result = await client.request<{ products: Array<{ category_code: { code: string } }> }>(`{ products(query: { stock_lt: 20 }) { name category_code { code label } reviewIds { stars product_id { name category_code { code } } } } }`);
      expect(result.products).toHaveLength(20);
      expect(result.products.every((p) => p.category_code.code === 'tools' || p.category_code.code === 'toys')).toBe(true);
      expect(calls.map((c) => `${c.action} ${c.collection}`)).toEqual(['find products', 'find categories', 'find reviews', 'find products', 'find categories']);
      expect(calls[1].args).toEqual({ query: { code: { $in: ['tools', 'toys'] } } });
    });

    it('reads a relationship once for a root field, through fragments and aliases, and not when a directive leaves it out', async () => {
      calls.length = 0;
      const result = await client.request<{ products: Array<{ category_code: { code: string }; cc: { label: string } }> }>(
        `{ products(query: { stock_lt: 20 }) { ...codes cc: category_code { label } } } fragment codes on Product { category_code { code } }`,
      );
      expect(result.products).toHaveLength(20);
      expect(result.products.every((p) => (p.category_code.code === 'tools' && p.cc.label === 'Tools') || (p.category_code.code === 'toys' && p.cc.label === 'Toys'))).toBe(true);
      expect(calls.map((c) => `${c.action} ${c.collection}`)).toEqual(['find products', 'find categories']);

      calls.length = 0;
      const skipped = await client.request<{ products: Array<{ name: string; category_code?: unknown }> }>(
        `query ($with: Boolean!) { products(query: { stock_lt: 20 }) { name category_code @include(if: $with) { code } } }`,
        { with: false },
      );
      expect(skipped.products.every((p) => p.category_code === undefined)).toBe(true);
      expect(calls.map((c) => `${c.action} ${c.collection}`)).toEqual(['find products']);

      calls.length = 0;
      const included = await client.request<{ products: Array<{ category_code: { code: string } }> }>(
        `query ($with: Boolean!) { products(query: { stock_lt: 20 }) { category_code @include(if: $with) { code } } }`,
        { with: true },
      );
      expect(included.products.every((p) => p.category_code.code === 'tools' || p.category_code.code === 'toys')).toBe(true);
      expect(calls.map((c) => `${c.action} ${c.collection}`)).toEqual(['find products', 'find categories']);
    });

    it('links and creates related documents from relation inputs', async () => {
      const linked = await client.request<{ insertOneProduct: { name: string; category_code: { label: string } } }>(
        `mutation { insertOneProduct(data: { name: "linked", owner_id: "${owner.userId}", category_code: { link: "toys" } }) { name category_code { label } } }`,
      );
      expect(linked.insertOneProduct).toEqual({ name: 'linked', category_code: { label: 'Toys' } });
      const created = await client.request<{ insertOneProduct: { category_code: { label: string }; reviewIds: Array<{ stars: number }> } }>(
        `mutation { insertOneProduct(data: { name: "created", owner_id: "${owner.userId}", category_code: { create: { code: "games", label: "Games" }, link: "toys" }, reviewIds: { create: [{ stars: 4, published: true }] } }) { category_code { label } reviewIds { stars } } }`,
      );
      expect(created.insertOneProduct).toEqual({ category_code: { label: 'Games' }, reviewIds: [{ stars: 4 }] });
      await client.request(`mutation { deleteManyProducts(query: { name_in: ["linked", "created"] }) { deletedCount } }`);
    });
  });

  describe('mutations', () => {
    it('inserts one and many documents and answers with the document and the ids', async () => {
      const one = await client.request<{ insertOneProduct: { _id: string; name: string; views: number; exactPrice: string; tags: string[]; dimensions: { unit: string } } }>(
        `mutation ($data: ProductInsertInput!) { insertOneProduct(data: $data) { _id name views exactPrice tags dimensions { unit } } }`,
        { data: { name: 'new one', owner_id: owner.userId, views: 12345678901, exactPrice: '1.10', tags: ['x'], dimensions: { unit: 'mm' } } },
      );
      expect(one.insertOneProduct).toMatchObject({ name: 'new one', views: 12345678901, exactPrice: '1.10', tags: ['x'], dimensions: { unit: 'mm' } });
      const stored = await seed().collection('products').findOne({ _id: new ObjectId(one.insertOneProduct._id) });
      // The datastore reads int64 values inside the double range back as numbers, as the Node driver does with promoteLongs.
      expect(Number(stored?.['views'])).toBe(12345678901);
      expect(stored?.['exactPrice']).toBeInstanceOf(Decimal128);
      const many = await client.request<{ insertManyProducts: { insertedIds: string[] } }>(
        `mutation { insertManyProducts(data: [{ name: "many a", owner_id: "${owner.userId}" }, { name: "many b", owner_id: "${owner.userId}" }]) { insertedIds } }`,
      );
      expect(many.insertManyProducts.insertedIds).toHaveLength(2);
      const deleted = await client.request<{ deleteManyProducts: { deletedCount: number } }>(`mutation { deleteManyProducts(query: { name_in: ["new one", "many a", "many b"] }) { deletedCount } }`);
      expect(deleted.deleteManyProducts.deletedCount).toBe(3);
    });

    it('updates one document with set, _inc and _unset, and many documents with counts', async () => {
      await client.request(`mutation { insertOneProduct(data: { name: "to update", owner_id: "${owner.userId}", stock: 1, price: 2.5, secret: "s", dimensions: { unit: "cm", width: 1 } }) { _id } }`);
      const updated = await client.request<{ updateOneProduct: unknown }>(
        `mutation { updateOneProduct(query: { name: "to update" }, set: { stock_inc: 2, price_inc: 0.5, secret_unset: true, dimensions: { width: 9 }, visibility: "draft" }) { stock price secret visibility dimensions { unit width } } }`,
      );
      expect(updated.updateOneProduct).toEqual({ stock: 3, price: 3, secret: null, visibility: 'draft', dimensions: { unit: 'cm', width: 9 } });
      const many = await client.request<{ updateManyProducts: unknown }>(`mutation { updateManyProducts(query: { visibility: "draft" }, set: { visibility: "gone" }) { matchedCount modifiedCount } }`);
      expect(many.updateManyProducts).toEqual({ matchedCount: 1, modifiedCount: 1 });
      const none = await client.request<{ updateOneProduct: unknown }>(`mutation { updateOneProduct(query: { name: "nothing" }, set: { stock: 1 }) { name } }`);
      expect(none.updateOneProduct).toBeNull();
    });

    it('upserts (insert, then replace), replaces and deletes one document', async () => {
      const inserted = await client.request<{ upsertOneProduct: { name: string; stock: number } }>(
        `mutation { upsertOneProduct(query: { name: "upserted" }, data: { name: "upserted", owner_id: "${owner.userId}", stock: 1 }) { name stock } }`,
      );
      expect(inserted.upsertOneProduct).toEqual({ name: 'upserted', stock: 1 });
      const replaced = await client.request<{ upsertOneProduct: { name: string; stock: number | null; price: number } }>(
        `mutation { upsertOneProduct(query: { name: "upserted" }, data: { name: "upserted", owner_id: "${owner.userId}", price: 2 }) { name stock price } }`,
      );
      expect(replaced.upsertOneProduct).toEqual({ name: 'upserted', stock: null, price: 2 });
      const again = await client.request<{ replaceOneProduct: { name: string } }>(`mutation { replaceOneProduct(query: { name: "upserted" }, data: { name: "replaced", owner_id: "${owner.userId}" }) { name } }`);
      expect(again.replaceOneProduct).toEqual({ name: 'replaced' });
      const deleted = await client.request<{ deleteOneProduct: { name: string } }>(`mutation { deleteOneProduct(query: { name: "replaced" }) { name } }`);
      expect(deleted.deleteOneProduct).toEqual({ name: 'replaced' });
      const gone = await client.request<{ product: unknown }>(`{ product(query: { name: "replaced" }) { name } }`);
      expect(gone.product).toBeNull();
    });
  });

  describe('transactions', () => {
    it('commits the mutations of one operation together, later ones seeing earlier ones', async () => {
      const result = await client.request<{ a: { name: string }; b: { stock: number }; c: { name: string; category_code: { label: string } } }>(
        `mutation { a: insertOneProduct(data: { name: "tx one", owner_id: "${owner.userId}", stock: 1 }) { name } b: updateOneProduct(query: { name: "tx one" }, set: { stock_inc: 1 }) { stock } c: updateOneProduct(query: { name: "tx one" }, set: { category_code: { create: { code: "tx", label: "Tx" } } }) { name category_code { label } } }`,
      );
      expect(result).toEqual({ a: { name: 'tx one' }, b: { stock: 2 }, c: { name: 'tx one', category_code: { label: 'Tx' } } });
      expect(await seed().collection('products').findOne({ name: 'tx one' })).toMatchObject({ stock: 2, category_code: 'tx' });
      await client.request(`mutation { deleteOneProduct(query: { name: "tx one" }) { name } deleteOneCategory(query: { code: "tx" }) { code } }`);
    });

    it('rolls back every mutation of the operation when one is refused', async () => {
      const result = await lenient.rawRequest<{ a: unknown; b: unknown }>(
        `mutation { a: insertOneProduct(data: { name: "tx kept?", owner_id: "${owner.userId}" }) { name } b: insertOneProduct(data: { name: "tx forged", owner_id: "${other.userId}", visibility: "public" }) { name } }`,
      );
      expect(result.errors?.map((e) => e.message)).toEqual(['insert not permitted']);
      expect(result.data).toEqual({ a: null, b: null });
      expect(await seed().collection('products').countDocuments({ name: { $in: ['tx kept?', 'tx forged'] } })).toBe(0);
    });
  });

  describe('rules', () => {
    it('leaves out hidden documents and answers null for withheld fields', async () => {
      const result = await client.request<{ products: Array<{ name: string; secret: string | null }> }>(`{ products(query: { stock_gte: 500 }) { name secret } }`);
      expect(result.products).toEqual([{ name: 'theirs public', secret: null }]);
      const own = await client.request<{ product: { secret: string } }>(`{ product(query: { stock: 2 }) { secret } }`);
      expect(own.product.secret).toBe('mine 2');
    });

    it('answers refused writes as GraphQL errors and changes nothing', async () => {
      const insert = await lenient.rawRequest<{ insertOneProduct: unknown }>(`mutation { insertOneProduct(data: { name: "forged", owner_id: "${other.userId}", visibility: "public" }) { name } }`);
      expect(insert.data?.insertOneProduct).toBeNull();
      expect(insert.errors?.map((e) => e.message)).toEqual(['insert not permitted']);
      const update = await lenient.rawRequest<{ updateOneProduct: unknown }>(`mutation { updateOneProduct(query: { name: "theirs public" }, set: { name: "mine now" }) { name } }`);
      expect(update.errors?.map((e) => e.message)).toEqual(['update not permitted']);
      const remove = await lenient.rawRequest(`mutation { deleteOneProduct(query: { name: "theirs public" }) { name } }`);
      expect(remove.errors?.map((e) => e.message)).toEqual(['delete not permitted']);
      expect(await seed().collection('products').countDocuments({ name: { $in: ['forged', 'mine now'] } })).toBe(0);
      expect(await seed().collection('products').countDocuments({ name: 'theirs public' })).toBe(1);
    });

    it('applies the other user’s own rules to the same query', async () => {
      const theirs = new GraphQLClient(endpoint(), { headers: { authorization: `Bearer ${other.accessToken}` } });
      const result = await theirs.request<{ products: Array<{ name: string; secret: string | null }> }>(`{ products(query: { OR: [{ stock_gte: 500 }, { stock: 1 }] }, sortBy: STOCK_ASC) { name secret } }`);
      expect(result.products).toEqual([
        { name: 'product 01', secret: null },
        { name: 'theirs private', secret: 'x' },
        { name: 'theirs public', secret: 'hidden from others' },
      ]);
    });
  });

  describe('custom resolvers', () => {
    it('runs Query and Mutation resolvers and computed fields through functions', async () => {
      host.runs.length = 0;
      const result = await client.request<{ productCount: number; searchProducts: Array<{ name: string }>; product: { stats: { doubled: number } } }>(
        `{ productCount searchProducts(input: "lamp") { name } product(query: { stock: 4 }) { stats { doubled } } }`,
      );
      expect(result).toEqual({ productCount: 42, searchProducts: [{ name: 'found lamp' }], product: { stats: { doubled: 12 } } });
      const restock = await client.request<{ restock: { status: string } }>(`mutation { restock(input: { name: "x" }) { status } }`);
      expect(restock.restock).toEqual({ status: 'complete' });
      const byName = Object.fromEntries(host.runs.map((run) => [run.functionName, run]));
      expect(byName['countProducts'].args).toEqual([]);
      expect(byName['search'].args).toEqual(['lamp']);
      expect(byName['restock'].args).toEqual([{ name: 'x' }]);
      expect(byName['productStats'].caller).toMatchObject({ type: 'user', user: { id: owner.userId } });
      expect(byName['productStats'].metadata.origin).toBe('graphql');
    });

    it('answers a failing function as a GraphQL error', async () => {
      const failing = await startTestHost({ services: ['graphql-gateway'], fakes: { functions: {} } });
      try {
        const created = await failing.createApp('shop', shopApp());
        const login = await failing.anonymousLogin(created.clientAppId);
        const result = await new GraphQLClient(`${failing.url}/api/client/v2.0/app/${created.clientAppId}/graphql`, { headers: { authorization: `Bearer ${login.accessToken}` }, errorPolicy: 'all' }).rawRequest(`{ productCount }`);
        expect(result.errors?.map((e) => e.message)).toEqual(["function not found: 'countProducts'"]);
      } finally {
        await failing.close();
      }
    });
  });

  describe('limits and errors', () => {
    it('refuses more than 10 root resolvers with App Services’ message', async () => {
      const fields = (n: number): string => Array.from({ length: n }, (_, i) => `f${i}: product(query: { stock: ${i} }) { name }`).join(' ');
      await expect(client.request(`{ ${fields(10)} }`)).resolves.toBeDefined();
      expect(errorsOf(await client.request(`{ ${fields(11)} }`).catch((e: unknown) => e))).toEqual(['max number of queries reached']);
    });

    it('refuses relationships nested deeper than 5 levels', async () => {
      const five = `{ product(query: { stock: 0 }) { reviewIds { product_id { reviewIds { product_id { reviewIds { stars } } } } } } }`;
      await expect(client.request(five)).resolves.toBeDefined();
      const six = `{ product(query: { stock: 0 }) { reviewIds { product_id { reviewIds { product_id { ...deeper } } } } } } fragment deeper on Product { reviewIds { product_id { name } } }`;
      expect(errorsOf(await client.request(six).catch((e: unknown) => e))).toEqual(['max relationship depth exceeded']);
    });

    it('reports syntax errors, unknown fields and bad variables', async () => {
      expect(errorsOf(await client.request(`{ products { name `).catch((e: unknown) => e))[0]).toMatch(/Syntax Error/);
      expect(errorsOf(await client.request(`{ products { nope } }`).catch((e: unknown) => e))[0]).toMatch(/Cannot query field "nope" on type "Product"/);
      expect(errorsOf(await client.request(`query ($id: ObjectId) { product(query: { _id: $id }) { name } }`, { id: 'not-an-id' }).catch((e: unknown) => e))[0]).toMatch(/ObjectId cannot represent value/);
      expect(errorsOf(await client.request(`query ($n: Int) { products(limit: $n) { name } }`, { n: 'many' }).catch((e: unknown) => e))[0]).toMatch(/Int cannot represent non-integer value/);
      expect(errorsOf(await client.request(`mutation { insertOneProduct(data: { stock: 1 }) { name } }`).catch((e: unknown) => e))[0]).toMatch(/Field "ProductInsertInput.name" of required type "String!" was not provided/);
    });

    it('requires a valid bearer token for the app', async () => {
      const anonymous = await fetch(endpoint(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ products { name } }' }) });
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ error_code: 'InvalidSession' });
      const forged = await fetch(endpoint(), { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer abc.def.ghi' }, body: JSON.stringify({ query: '{ products { name } }' }) });
      expect(forged.status).toBe(401);
    });

    it('answers queries over GET and refuses mutations over GET', async () => {
      const query = encodeURIComponent('{ product(query: { stock: 5 }) { name } }');
      const get = await fetch(`${endpoint()}?query=${query}`, { headers: { authorization: `Bearer ${owner.accessToken}`, accept: 'application/json' } });
      expect(await get.json()).toEqual({ data: { product: { name: 'product 05' } } });
      const mutation = encodeURIComponent('mutation { deleteManyProducts { deletedCount } }');
      const refused = await fetch(`${endpoint()}?query=${mutation}`, { headers: { authorization: `Bearer ${owner.accessToken}`, accept: 'application/json' } });
      expect(refused.status).toBe(405);
      expect(await seed().collection('products').countDocuments({})).toBeGreaterThan(20);
    });
  });

  describe('deployments', () => {
    it('rebuilds the schema on deploy and can disable introspection', async () => {
      const introspect = `{ __schema { queryType { name } } }`;
      await expect(client.request(introspect)).resolves.toEqual({ __schema: { queryType: { name: 'Query' } } });
      await host.redeploy(appId, shopApp({ introspection: false }));
      expect(errorsOf(await client.request(introspect).catch((e: unknown) => e))[0]).toMatch(/introspection has been disabled/);
      await expect(client.request(`{ product(query: { stock: 1 }) { name } }`)).resolves.toEqual({ product: { name: 'product 01' } });
      await host.redeploy(appId, shopApp());
      await expect(client.request(introspect)).resolves.toBeDefined();
    });
  });
});
