import { type AppConfig, emptyApp } from '@tessera/app-config';
import { DeployedApps, LogStore } from '@tessera/platform';
import { EJSON, ObjectId } from 'bson';
import { createHmac } from 'node:crypto';
import { SignJWT } from 'jose';
import { eventually } from '@tessera/testing';
import { startTestHost, type TestHost } from '../support/test-host';
import { clientLogin, dataApi, ownedItemsAndCatalog, remoteDataAccess, serverApiKey, withDataApiConfig } from './data-api-support';

// The Data API over real HTTP with fetch: every action, every way to authenticate, both formats, the
// caller's rules exactly as remote data access applies them, the configuration's options, and attacks.
describe('Data API', () => {
  let host: TestHost;
  let app: { appId: string; clientAppId: string };
  let other: { appId: string; clientAppId: string };
  const jwtSecret = 'data-api-jwt-secret-0123456789abcdef';
  const source = { dataSource: 'mongodb-atlas', database: 'shop', collection: 'items' };

  /** Owners see and change only their own items; `catalog` is readable by everyone and writable by none. */
  const linkCluster = (config: AppConfig) => {
    config.services.push({
      config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
      defaultRule: { roles: [] },
      collectionRules: ownedItemsAndCatalog(),
      rules: [],
      webhooks: [],
    });
  };

  beforeAll(async () => {
    host = await startTestHost({ services: ['graphql-gateway'] });
    app = await host.createApp('dataapi', (config) => {
      config.authProviders.push(
        { name: 'anon-user', type: 'anon-user' },
        { name: 'api-key', type: 'api-key' },
        { name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } },
        { name: 'custom-token', type: 'custom-token', config: { signingAlgorithm: 'HS256', useJWKURI: false }, secret_config: { signingKeys: ['jwtKey'] } },
      );
      linkCluster(config);
      withDataApiConfig(config, { disabled: false, versions: ['v1'], return_type: 'JSON', create_user_on_auth: true, run_as_user_id: '', run_as_user_id_script_source: '', validation_method: 'NO_VALIDATION', log_function_arguments: true });
    });
    await host.secrets.create(app.appId, 'jwtKey', jwtSecret);
    other = await host.createApp('otherapp', (config) => {
      config.authProviders.push({ name: 'anon-user', type: 'anon-user' }, { name: 'api-key', type: 'api-key' });
      linkCluster(config);
      withDataApiConfig(config, { disabled: false, versions: ['v1'], return_type: 'JSON' });
    });
  });

  afterAll(async () => {
    await host?.close();
  });

  describe('actions', () => {
    let apiKey: string;
    let userId: string;

    beforeAll(async () => {
      ({ key: apiKey, userId } = await serverApiKey(host, app.clientAppId, 'actions'));
    });

    const call = (action: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => dataApi(host, app.clientAppId, action, { ...source, ...body }, { headers: { apiKey, ...headers } });

    it('runs every action with the response shapes and statuses of App Services', async () => {
      const one = await call('insertOne', { document: { owner: userId, name: 'apple', qty: 5 } });
      expect(one.status).toBe(201);
      expect(one.contentType).toBe('application/json');
      expect(one.body['insertedId']).toMatch(/^[0-9a-f]{24}$/);

      const many = await call('insertMany', { documents: [{ owner: userId, name: 'pear', qty: 2 }, { owner: userId, name: 'plum', qty: 9 }, { owner: userId, name: 'kiwi', qty: 1 }] });
      expect(many.status).toBe(201);
      expect(many.body['insertedIds']).toHaveLength(3);

      const found = await call('findOne', { filter: { name: 'apple' }, projection: { _id: 0, name: 1, qty: 1 } });
      expect(found).toMatchObject({ status: 200, body: { document: { name: 'apple', qty: 5 } } });
      expect(await call('findOne', { filter: { name: 'nothing' } })).toMatchObject({ status: 200, body: { document: null } });

      const list = await call('find', { filter: { qty: { $gte: 2 } }, sort: { qty: -1 }, skip: 1, limit: 2, projection: { _id: 0, name: 1 } });
      expect(list).toMatchObject({ status: 200, body: { documents: [{ name: 'apple' }, { name: 'pear' }] } });

      expect((await call('updateOne', { filter: { name: 'apple' }, update: { $inc: { qty: 1 } } })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
      const upsert = await call('updateOne', { filter: { name: 'fig' }, update: { $set: { qty: 3, owner: userId } }, upsert: true });
      expect(upsert.body).toMatchObject({ matchedCount: 0, modifiedCount: 0, upsertedId: expect.stringMatching(/^[0-9a-f]{24}$/) });
      expect((await call('updateMany', { filter: {}, update: { $set: { tagged: true } } })).body).toEqual({ matchedCount: 5, modifiedCount: 5 });

      expect((await call('replaceOne', { filter: { name: 'kiwi' }, replacement: { owner: userId, name: 'kiwi', qty: 10 } })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
      expect((await call('findOne', { filter: { name: 'kiwi' }, projection: { _id: 0 } })).body).toEqual({ document: { owner: userId, name: 'kiwi', qty: 10 } });
      const replaced = await call('replaceOne', { filter: { name: 'lime' }, replacement: { owner: userId, name: 'lime', qty: 4 }, upsert: true });
      expect(replaced.body).toMatchObject({ matchedCount: 0, modifiedCount: 0, upsertedId: expect.stringMatching(/^[0-9a-f]{24}$/) });
      expect((await call('findOne', { filter: { _id: { $oid: replaced.body['upsertedId'] } }, projection: { _id: 0, name: 1 } })).body).toEqual({ document: { name: 'lime' } });

      const total = await call('aggregate', { pipeline: [{ $match: { qty: { $gt: 1 } } }, { $group: { _id: null, total: { $sum: '$qty' } } }] });
      expect(total).toMatchObject({ status: 200, body: { documents: [{ _id: null, total: 6 + 2 + 9 + 10 + 3 + 4 }] } });

      expect((await call('deleteOne', { filter: { name: 'pear' } })).body).toEqual({ deletedCount: 1 });
      expect((await call('deleteMany', { filter: { qty: { $lt: 5 } } })).body).toEqual({ deletedCount: 2 });
      expect((await call('find', { filter: {}, projection: { _id: 0, name: 1 }, sort: { name: 1 } })).body).toEqual({ documents: [{ name: 'apple' }, { name: 'kiwi' }, { name: 'plum' }] });
    });

    it('serves many concurrent requests with one API key (a server calling the Data API is not a login storm)', async () => {
      const answers = await Promise.all(Array.from({ length: 40 }, () => call('find', { filter: {}, limit: 1 })));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    });

    it('serves the beta path like v1 and names the data source by its cluster too', async () => {
      const beta = await dataApi(host, app.clientAppId, 'find', { ...source, dataSource: 'Cluster0', filter: { name: 'apple' }, projection: { _id: 0, name: 1 } }, { version: 'beta', headers: { apiKey } });
      expect(beta).toMatchObject({ status: 200, body: { documents: [{ name: 'apple' }] } });
    });

    it('answers canonical EJSON for Accept application/ejson and plain JSON for application/json', async () => {
      const id = new ObjectId();
      const document = { _id: id, owner: userId, name: 'typed', when: new Date('2024-01-02T03:04:05.678Z'), big: { $numberLong: '9007199254740993' }, price: { $numberDecimal: '1.10' }, n: 7, one: { $numberDouble: '1.0' }, small: { $numberLong: '5' } };
      const inserted = await dataApi(host, app.clientAppId, 'insertOne', { ...source, document: EJSON.serialize(document, { relaxed: false }) }, { headers: { apiKey, 'content-type': 'application/ejson', accept: 'application/ejson' } });
      expect(inserted.status).toBe(201);
      expect(inserted.contentType).toBe('application/ejson');
      expect(inserted.body).toEqual({ insertedId: { $oid: id.toHexString() } });

      const asEjson = await call('findOne', { filter: { _id: { $oid: id.toHexString() } } }, { accept: 'application/ejson' });
      expect(asEjson.body['document']).toEqual({ _id: { $oid: id.toHexString() }, owner: userId, name: 'typed', when: { $date: { $numberLong: '1704164645678' } }, big: { $numberLong: '9007199254740993' }, price: { $numberDecimal: '1.10' }, n: { $numberInt: '7' }, one: { $numberDouble: '1.0' }, small: { $numberLong: '5' } });
      const asJson = await call('findOne', { filter: { _id: { $oid: id.toHexString() } } }, { accept: 'application/json' });
      expect(asJson.contentType).toBe('application/json');
      expect(asJson.body['document']).toEqual({ _id: id.toHexString(), owner: userId, name: 'typed', when: '2024-01-02T03:04:05.678Z', big: 9007199254740992, price: '1.10', n: 7, one: 1, small: 5 });
      // A JSON body is read as MongoDB reads relaxed Extended JSON: `1.0` and `2e3` are doubles, `1` an int.
      const raw = `{"dataSource":"${source.dataSource}","database":"${source.database}","collection":"${source.collection}","document":{"_id":"plain-json","owner":"${userId}","one":1.0,"int":1,"exp":2e3,"half":0.5}}`;
      const plain = await dataApi(host, app.clientAppId, 'insertOne', undefined, { raw, headers: { apiKey } });
      expect(plain.status).toBe(201);
      const typed = await call('findOne', { filter: { _id: 'plain-json' }, projection: { _id: 0, owner: 0 } }, { accept: 'application/ejson' });
      expect(typed.body['document']).toEqual({ one: { $numberDouble: '1.0' }, int: { $numberInt: '1' }, exp: { $numberDouble: '2000.0' }, half: { $numberDouble: '0.5' } });
      // Relaxed EJSON input: a relaxed date is stored as a date, matched by a canonical one.
      const relaxed = await call('find', { filter: { when: { $gte: { $date: '2024-01-01T00:00:00Z' } } }, projection: { _id: 0, name: 1 } });
      expect(relaxed.body).toEqual({ documents: [{ name: 'typed' }] });
    });
  });

  describe('authentication', () => {
    it('authenticates by bearer access token, API key, email and password, and custom JWT, each as its own user', async () => {
      const anon = await host.anonymousLogin(app.clientAppId);
      const server = await serverApiKey(host, app.clientAppId, 'auth-methods');
      const register = await fetch(`${host.url}/api/client/v2.0/app/${app.clientAppId}/auth/providers/local-userpass/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada@example.com', password: 'correct-horse' }) });
      expect(register.status).toBe(201);
      const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('jwt-person').setExpirationTime('5m').sign(new TextEncoder().encode(jwtSecret));
      const methods: Array<[string, Record<string, string>]> = [
        ['bearer', { authorization: `Bearer ${anon.accessToken}` }],
        ['apiKey', { apiKey: server.key }],
        ['email', { email: 'ada@example.com', password: 'correct-horse' }],
        ['jwt', { jwtTokenString: jwt }],
      ];
      // The first Data API call of email/password and JWT creates their users (create_user_on_auth).
      for (const [name, headers] of methods) {
        const whoami = await dataApi(host, app.clientAppId, 'find', { ...source, filter: {} }, { headers });
        expect(whoami.status, name).toBe(200);
      }
      const ids: Record<string, string> = {
        bearer: anon.userId,
        apiKey: server.userId,
        email: (await clientLogin(host, app.clientAppId, 'local-userpass', { username: 'ada@example.com', password: 'correct-horse' })).userId,
        jwt: (await clientLogin(host, app.clientAppId, 'custom-token', { token: jwt })).userId,
      };
      for (const [name, headers] of methods) {
        const inserted = await dataApi(host, app.clientAppId, 'insertOne', { ...source, document: { owner: ids[name], name: `by-${name}` } }, { headers });
        expect(inserted.status, name).toBe(201);
        const mine = await dataApi(host, app.clientAppId, 'find', { ...source, filter: {}, projection: { _id: 0, name: 1 } }, { headers });
        expect(mine.body, name).toEqual({ documents: [{ name: `by-${name}` }] });
      }
    });

    it('serves many concurrent requests with one email and password (checked once while in flight, not throttled)', async () => {
      const register = await fetch(`${host.url}/api/client/v2.0/app/${app.clientAppId}/auth/providers/local-userpass/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'grace@example.com', password: 'cobol-1959' }) });
      expect(register.status).toBe(201);
      const headers = { email: 'grace@example.com', password: 'cobol-1959' };
      const answers = await Promise.all(Array.from({ length: 30 }, () => dataApi(host, app.clientAppId, 'find', { ...source, filter: {}, limit: 1 }, { headers })));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      // Wrong passwords are still refused and counted: the throttle still stops parallel guessing.
      const wrong = await Promise.all(Array.from({ length: 12 }, (_, i) => dataApi(host, app.clientAppId, 'find', { ...source, filter: {} }, { headers: { email: 'grace@example.com', password: `guess-${i}` } })));
      expect(new Set(wrong.map((answer) => answer.status))).toEqual(new Set([401, 429]));
    });

    it("refuses a request without credentials, or with an email and no password, as the Data API's OpenAPI description says, with a link to its log entry", async () => {
      const answer = await dataApi(host, app.clientAppId, 'find', { ...source, filter: {} });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'no authentication methods were specified', error_code: 'InvalidParameter', link: expect.stringContaining(`/api/admin/v3.0/groups/`) });
      for (const headers of [{ email: 'grace@example.com' }, { password: 'a password' }] as Array<Record<string, string>>) {
        const partial = await dataApi(host, app.clientAppId, 'find', { ...source, filter: {} }, { headers });
        expect(partial.status).toBe(400);
        expect(partial.body).toMatchObject({ error: 'must specify some form of authentication (either email+password, api-key, or jwt) in the request header or body', error_code: 'MissingParameter' });
      }
      expect(String(answer.body['link'])).toContain(`/apps/${app.appId}/logs?co_id=`);
    });

    it('refuses wrong credentials of every kind with 401', async () => {
      const anon = await host.anonymousLogin(app.clientAppId);
      const [header, payload, signature] = anon.accessToken.split('.');
      const forged = `${header}.${payload}.${(signature ?? '').slice(0, -4)}AAAA`;
      const foreign = await host.anonymousLogin(other.clientAppId);
      const foreignKey = await serverApiKey(host, other.clientAppId, 'foreign');
      const wrongJwt = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setExpirationTime('5m').sign(new TextEncoder().encode('not-the-secret-0123456789abcdefgh'));
      const cases: Array<[string, Record<string, string>, string]> = [
        ['forged token', { authorization: `Bearer ${forged}` }, 'InvalidSession'],
        ["another app's token", { authorization: `Bearer ${foreign.accessToken}` }, 'InvalidSession'],
        ['garbage token', { authorization: 'Bearer not.a.token' }, 'InvalidSession'],
        ["another app's API key", { apiKey: foreignKey.key }, 'AuthError'],
        ['unknown API key', { apiKey: 'x'.repeat(64) }, 'AuthError'],
        ['wrong password', { email: 'ada@example.com', password: 'wrong-horse' }, 'InvalidPassword'],
        ['wrongly signed JWT', { jwtTokenString: wrongJwt }, 'AuthError'],
      ];
      for (const [name, headers, code] of cases) {
        const answer = await dataApi(host, app.clientAppId, 'find', { ...source, filter: {} }, { headers });
        expect(answer.status, name).toBe(401);
        expect(answer.body['error_code'], name).toBe(code);
      }
    });
  });

  describe('rules', () => {
    it('shows a user exactly what remote data access shows, and refuses the writes it refuses', async () => {
      const alice = await host.anonymousLogin(app.clientAppId);
      const bob = await host.anonymousLogin(app.clientAppId);
      const asAlice = { authorization: `Bearer ${alice.accessToken}` };
      const asBob = { authorization: `Bearer ${bob.accessToken}` };
      const collection = { ...source, collection: 'private' };
      expect((await dataApi(host, app.clientAppId, 'insertOne', { ...source, document: { owner: alice.userId, name: 'alice-1' } }, { headers: asAlice })).status).toBe(201);
      expect((await dataApi(host, app.clientAppId, 'insertOne', { ...source, document: { owner: bob.userId, name: 'bob-1' } }, { headers: asBob })).status).toBe(201);

      for (const user of [alice, bob]) {
        const viaDataApi = await dataApi(host, app.clientAppId, 'find', { ...source, filter: {}, sort: { name: 1 } }, { headers: { authorization: `Bearer ${user.accessToken}`, accept: 'application/ejson' } });
        const viaRemote = await remoteDataAccess(host, app.clientAppId, user.accessToken, 'find', { database: 'shop', collection: 'items', query: {}, sort: { name: 1 } });
        expect(viaDataApi.body['documents']).toEqual(viaRemote.body);
      }
      expect((await dataApi(host, app.clientAppId, 'find', { ...source, filter: {}, projection: { _id: 0, name: 1 } }, { headers: asBob })).body).toEqual({ documents: [{ name: 'bob-1' }] });

      // Bob cannot change, replace or delete Alice's document: it does not match for him.
      expect((await dataApi(host, app.clientAppId, 'updateOne', { ...source, filter: { name: 'alice-1' }, update: { $set: { name: 'stolen' } } }, { headers: asBob })).body).toEqual({ matchedCount: 0, modifiedCount: 0 });
      expect((await dataApi(host, app.clientAppId, 'deleteMany', { ...source, filter: {} }, { headers: asBob })).body).toEqual({ deletedCount: 1 });
      expect((await dataApi(host, app.clientAppId, 'findOne', { ...source, filter: {}, projection: { _id: 0, name: 1 } }, { headers: asAlice })).body).toEqual({ document: { name: 'alice-1' } });

      // A write the rules refuse is refused as remote data access refuses it.
      const refused = await dataApi(host, app.clientAppId, 'insertOne', { ...source, document: { owner: alice.userId, name: 'planted by bob' } }, { headers: asBob });
      const remoteRefusal = await remoteDataAccess(host, app.clientAppId, bob.accessToken, 'insertOne', { database: 'shop', collection: 'items', document: { owner: alice.userId, name: 'planted by bob' } });
      expect(refused.status).toBe(remoteRefusal.status);
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(refused.body['error_code']).toBe((remoteRefusal.body as { error_code: string }).error_code);
      const catalogWrite = await dataApi(host, app.clientAppId, 'insertOne', { ...source, collection: 'catalog', document: { name: 'x' } }, { headers: asBob });
      expect(catalogWrite.status).toBeGreaterThanOrEqual(400);
      expect((await dataApi(host, app.clientAppId, 'find', { ...source, collection: 'catalog', filter: {} }, { headers: asBob })).body).toEqual({ documents: [] });
      // No rule for the namespace: nothing is readable (the default rule has no roles).
      expect((await dataApi(host, app.clientAppId, 'find', { ...collection, filter: {} }, { headers: asAlice })).body).toEqual({ documents: [] });
      expect((await dataApi(host, app.clientAppId, 'find', { ...source, filter: {}, projection: { _id: 0, name: 1 } }, { headers: asAlice })).body).toEqual({ documents: [{ name: 'alice-1' }] });
    });

    it('refuses operator injection: $where and $function in filters and pipelines, $out', async () => {
      const user = await host.anonymousLogin(app.clientAppId);
      const headers = { authorization: `Bearer ${user.accessToken}` };
      const attempts: Array<[string, Record<string, unknown>]> = [
        ['find', { filter: { $where: 'true' } }],
        ['find', { filter: { $expr: { $function: { body: 'function () { return true; }', args: [], lang: 'js' } } } }],
        ['deleteMany', { filter: { $where: 'true' } }],
        ['aggregate', { pipeline: [{ $match: { $where: 'true' } }] }],
        ['aggregate', { pipeline: [{ $out: 'stolen' }] }],
        ['aggregate', { pipeline: [{ $lookup: { from: 'catalog', localField: 'x', foreignField: 'y', as: 'z' } }] }],
      ];
      for (const [action, body] of attempts) {
        const answer = await dataApi(host, app.clientAppId, action, { ...source, ...body }, { headers });
        expect(answer.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
        expect(answer.status, JSON.stringify(body)).toBeLessThan(500);
        expect(answer.body['error_code'], JSON.stringify(body)).toEqual(expect.any(String));
      }
    });
  });

  describe('bad requests', () => {
    let apiKey: string;
    beforeAll(async () => {
      ({ key: apiKey } = await serverApiKey(host, app.clientAppId, 'bad-requests'));
    });

    it.each([
      ['malformed JSON', '{"dataSource": ', 400, 'InvalidParameter'],
      ['an array body', '[1,2]', 400, 'InvalidParameter'],
      ['an empty body', '', 400, 'InvalidParameter'],
      ['malformed EJSON', JSON.stringify({ ...source, filter: { _id: { $oid: 'not-an-id' } } }), 400, 'InvalidParameter'],
      ['a missing collection', JSON.stringify({ dataSource: 'mongodb-atlas', database: 'shop' }), 400, 'InvalidParameter'],
      ['an unknown data source', JSON.stringify({ ...source, dataSource: 'elsewhere' }), 404, 'DataSourceNotFound'],
      ['a string limit', JSON.stringify({ ...source, limit: 'ten' }), 400, 'InvalidParameter'],
      ['a limit over the maximum', JSON.stringify({ ...source, limit: 50_001 }), 400, 'InvalidParameter'],
    ])('refuses %s', async (_name, raw, status, code) => {
      const answer = await dataApi(host, app.clientAppId, 'find', undefined, { raw, headers: { apiKey } });
      expect(answer.status).toBe(status);
      expect(answer.contentType).toBe('application/json');
      expect(answer.body['error_code']).toBe(code);
    });

    it('refuses a delete without a filter, an unknown action, a wrong method, a wrong content type and an unknown version', async () => {
      expect(await dataApi(host, app.clientAppId, 'deleteMany', source, { headers: { apiKey } })).toMatchObject({ status: 400, body: { error_code: 'InvalidParameter' } });
      expect(await dataApi(host, app.clientAppId, 'dropDatabase', source, { headers: { apiKey } })).toMatchObject({ status: 404, body: { error_code: 'ActionNotFound' } });
      const get = await dataApi(host, app.clientAppId, 'find', undefined, { method: 'GET', headers: { apiKey } });
      expect(get).toMatchObject({ status: 405, body: { error_code: 'MethodNotAllowed' } });
      expect(await dataApi(host, app.clientAppId, 'find', source, { headers: { apiKey, 'content-type': 'text/plain' } })).toMatchObject({ status: 415 });
      expect(await dataApi(host, app.clientAppId, 'find', source, { version: 'v9', headers: { apiKey } })).toMatchObject({ status: 404, body: { error_code: 'DataApiNotEnabled' } });
      const unknownApp = await dataApi(host, 'nope-abcde', 'find', source, { headers: { apiKey } });
      expect(unknownApp).toMatchObject({ status: 404, body: { error_code: 'AppNotFound' } });
    });

    it('refuses a body over the request size limit with 413', async () => {
      const raw = JSON.stringify({ ...source, document: { blob: 'x'.repeat(19 * 1024 * 1024) } });
      const answer = await dataApi(host, app.clientAppId, 'insertOne', undefined, { raw, headers: { apiKey } });
      expect(answer).toMatchObject({ status: 413, body: { error_code: 'RequestTooLarge' } });
    });
  });

  describe('configuration', () => {
    it('is not served for an app without a Data API configuration, nor when disabled', async () => {
      const none = await host.createApp('nodataapi', (config) => {
        config.authProviders.push({ name: 'api-key', type: 'api-key' });
        linkCluster(config);
      });
      const disabled = await host.createApp('disableddataapi', (config) => {
        config.authProviders.push({ name: 'api-key', type: 'api-key' });
        linkCluster(config);
        withDataApiConfig(config, { disabled: true, versions: ['v1'], return_type: 'JSON' });
      });
      for (const target of [none, disabled]) {
        const { key } = await serverApiKey(host, target.clientAppId, 'k');
        expect(await dataApi(host, target.clientAppId, 'find', source, { headers: { apiKey: key } })).toMatchObject({ status: 404, body: { error_code: 'DataApiNotEnabled' } });
      }
    });

    it('runs as system behind a query-parameter secret, and answers EJSON by default when return_type says so', async () => {
      const system = await host.createApp('systemdataapi', (config) => {
        linkCluster(config);
        withDataApiConfig(config, { disabled: false, versions: ['v1'], return_type: 'EJSON', run_as_system: true, validation_method: 'SECRET_AS_QUERY_PARAM', secret_name: 'dataApiSecret' });
      });
      await host.secrets.create(system.appId, 'dataApiSecret', 's3cret-value');
      const systemConfig = (await host.nest.get(DeployedApps).byId(system.appId)).config;
      await host.dataSources.forService(systemConfig, 'mongodb-atlas').client.db('shop').collection('ledger').insertMany([{ owner: 'a', name: 'one' }, { owner: 'b', name: 'two' }]);
      const ledger = { ...source, collection: 'ledger' };
      expect(await dataApi(host, system.clientAppId, 'find', { ...ledger, filter: {} }, { query: 'secret=wrong' })).toMatchObject({ status: 401, body: { error_code: 'AuthError' } });
      expect(await dataApi(host, system.clientAppId, 'find', { ...ledger, filter: {} })).toMatchObject({ status: 401, body: { error_code: 'AuthError' } });
      // As system, the rules (none for this collection) do not apply: every document is read.
      const all = await dataApi(host, system.clientAppId, 'find', { ...ledger, filter: {}, projection: { _id: 0, name: 1 }, sort: { name: 1 } }, { query: 'secret=s3cret-value' });
      expect(all.status).toBe(200);
      expect(all.contentType).toBe('application/ejson');
      expect(all.body).toEqual({ documents: [{ name: 'one' }, { name: 'two' }] });
    });

    it('runs as the configured user behind a payload signature', async () => {
      const fixedConfig = (fixedUser: string) => {
        const config = emptyApp('fixeddataapi');
        config.authProviders.push({ name: 'anon-user', type: 'anon-user' });
        linkCluster(config);
        if (fixedUser) withDataApiConfig(config, { disabled: false, versions: ['v1'], return_type: 'JSON', run_as_user_id: fixedUser, validation_method: 'VERIFY_PAYLOAD', secret_name: 'signKey' });
        return config;
      };
      const fixed = await host.createApp('fixeddataapi', fixedConfig(''));
      const { userId: fixedUser } = await host.anonymousLogin(fixed.clientAppId);
      const deployed = fixedConfig(fixedUser);
      await host.redeploy(fixed.appId, deployed);
      await host.secrets.create(fixed.appId, 'signKey', 'signing-secret');
      const cluster = host.dataSources.forService(deployed, 'mongodb-atlas').client.db('shop').collection('items');
      await cluster.insertMany([{ owner: fixedUser, name: 'mine' }, { owner: 'someone else', name: 'theirs' }]);
      const raw = JSON.stringify({ ...source, filter: {}, projection: { _id: 0, name: 1 } });
      const signature = `sha256=${createHmac('sha256', 'signing-secret').update(raw).digest('hex')}`;
      expect(await dataApi(host, fixed.clientAppId, 'find', undefined, { raw, headers: { 'endpoint-signature': signature } })).toMatchObject({ status: 200, body: { documents: [{ name: 'mine' }] } });
      expect(await dataApi(host, fixed.clientAppId, 'find', undefined, { raw, headers: { 'endpoint-signature': `sha256=${'0'.repeat(64)}` } })).toMatchObject({ status: 401, body: { error_code: 'AuthError' } });
      expect(await dataApi(host, fixed.clientAppId, 'find', undefined, { raw: raw.replace('{}', '{"owner":{"$exists":true}}'), headers: { 'endpoint-signature': signature } })).toMatchObject({ status: 401 });
    });
  });

  it('logs every call in the app logs as ENDPOINT entries with the route, status and caller, credentials redacted', async () => {
    const { key, userId } = await serverApiKey(host, app.clientAppId, 'logged');
    await dataApi(host, app.clientAppId, 'find', { ...source, filter: { name: 'logged' } }, { headers: { apiKey: key } });
    const refused = await dataApi(host, app.clientAppId, 'find', { ...source, filter: {} });
    const coId = new URL(String(refused.body['link'])).searchParams.get('co_id');
    const logs = host.nest.get(LogStore);
    await eventually(async () => {
      const entries = await logs.list(app.appId, { types: ['ENDPOINT'] });
      const ok = entries.find((entry) => entry.user_id === userId);
      expect(ok).toMatchObject({ type: 'ENDPOINT', endpoint_route: '/data/v1/action/find', status: 200, request_method: 'POST', app_id: app.clientAppId, function_call: { name: 'data/v1/find' } });
      expect(String(ok?.['endpoint_args'])).toContain('<redacted>');
      expect(String(ok?.['endpoint_args'])).not.toContain(key);
      const failed = await logs.list(app.appId, { coId: coId ?? '' });
      expect(failed[0]).toMatchObject({ type: 'ENDPOINT', status: 400, error_code: 'InvalidParameter' });
    });
  });
});
