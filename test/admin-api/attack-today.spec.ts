import { deriveSigningKey, type JwtClaims, signJwt } from '@tessera/credentials';
import { eventually, makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import { MongoClient } from 'mongodb';
import { AdminSession } from './admin-session';

interface ErrorBody {
  error?: string;
  error_code?: string;
}
interface LogsPage extends ErrorBody {
  logs: { user_id?: string; messages: string[] }[];
}

const signingKey = Buffer.alloc(32, 7);

/** The JSON payload of a JWT (no verification). */
function claimsOf(token: string): JwtClaims {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as JwtClaims;
}

// A hostile reviewer's pass over what landed on 2026-11-26: the admin API's user sessions, custom data,
// log filters and metrics, the client API's body parser, and aggregation through the client API and the
// datastore's wire server. Each attack is answered with App Services' error body and status (or, for the
// wire server, MongoDB's error), never a crash, never another app's or user's data.
describe('attacks on the admin API, client API bodies and aggregation added today', () => {
  const dataDir = makeTempDir('tessera-attack-');
  let server: ServerProcess;
  let admin: AdminSession;
  let one: { _id: string; client_app_id: string };
  let two: { _id: string; client_app_id: string };

  const clientCall = async (app: { client_app_id: string }, path: string, body: unknown, token?: string): Promise<{ status: number; body: ErrorBody & Record<string, unknown> }> => {
    const response = await fetch(`${server.url}/api/client/v2.0/app/${app.client_app_id}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as ErrorBody & Record<string, unknown> };
  };
  const login = async (app: { client_app_id: string }) => (await clientCall(app, '/auth/providers/anon-user/login', {})).body as unknown as { access_token: string; refresh_token: string; user_id: string };
  const refresh = async (refreshToken: string): Promise<number> => (await fetch(`${server.url}/api/client/v2.0/auth/session`, { method: 'POST', headers: { authorization: `Bearer ${refreshToken}` } })).status;
  const logs = (query: string) => admin.request<LogsPage>('GET', admin.app(one._id, `/logs?${query}`));

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'attack-admin-password', TESSERA_EXAMPLE_APP: '', TESSERA_SIGNING_KEY: signingKey.toString('base64') } });
    admin = await AdminSession.login(server, 'admin', 'attack-admin-password');
    one = await admin.createApp('attack-one', { template_id: 'web.mql.todo' });
    two = await admin.createApp('attack-two', { template_id: 'web.mql.todo' });
    const source = "exports = (word) => { console.log('said ' + JSON.stringify(word)); return word; };";
    expect((await admin.request('POST', admin.app(one._id, '/functions'), { name: 'say', source })).status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  describe('user sessions and custom data', () => {
    it("never reaches another app's user or session through this app's URL", async () => {
      const mine = await login(one);
      const theirs = await login(two);
      const [theirSession] = (await admin.request<{ _id: string }[]>('GET', admin.app(two._id, `/users/${theirs.user_id}/sessions`))).body;
      for (const [method, path] of [
        ['GET', `/users/${theirs.user_id}/sessions`],
        ['GET', `/users/${theirs.user_id}/custom_data`],
        ['DELETE', `/users/${theirs.user_id}/sessions/${theirSession._id}`],
      ] as const) {
        expect(await admin.request(method, admin.app(one._id, path))).toMatchObject({ status: 404, body: { error: `user not found: '${theirs.user_id}'`, error_code: 'UserNotFound' } });
      }
      // Their session under one of this app's users: not found, and it still works.
      expect(await admin.request('DELETE', admin.app(one._id, `/users/${mine.user_id}/sessions/${theirSession._id}`))).toMatchObject({ status: 404, body: { error_code: 'SessionNotFound' } });
      expect(await refresh(theirs.refresh_token)).toBe(201);
    });

    it('answers ids that are no ObjectIds, or spell operators, with 404 and the error body', async () => {
      const mine = await login(one);
      for (const id of ['not-an-id', '$ne', '{"$ne":null}', '%7B%7D']) {
        expect(await admin.request('GET', admin.app(one._id, `/users/${encodeURIComponent(id)}/sessions`))).toMatchObject({ status: 404, body: { error_code: 'UserNotFound' } });
        expect(await admin.request('DELETE', admin.app(one._id, `/users/${mine.user_id}/sessions/${encodeURIComponent(id)}`))).toMatchObject({ status: 404, body: { error_code: 'SessionNotFound' } });
      }
      expect(await refresh(mine.refresh_token)).toBe(201);
    });

    it('refuses another group, app user tokens, and admin tokens forged, expired or signed with an app key', async () => {
      const user = await login(one);
      const path = `/users/${user.user_id}/sessions`;
      expect(await admin.request('GET', `/groups/000000000000000000000000/apps/${one._id}${path}`)).toMatchObject({ status: 404, body: { error_code: 'GroupNotFound' } });
      const claims = claimsOf(admin.accessToken);
      const now = Math.floor(Date.now() / 1000);
      const [header, , signature] = admin.accessToken.split('.');
      const tokens = {
        appUser: user.access_token,
        alteredPayload: `${header}.${Buffer.from(JSON.stringify({ ...claims, exp: now + 86_400 })).toString('base64url')}.${signature}`,
        unsigned: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${admin.accessToken.split('.')[1]}.`,
        expired: signJwt({ ...claims, iat: now - 3600, exp: now - 60 }, deriveSigningKey(signingKey, 'admin')),
        appKey: signJwt(claims, deriveSigningKey(signingKey, `app-${one._id}`)),
      };
      for (const [name, token] of Object.entries(tokens)) {
        const response = await admin.request<ErrorBody>('GET', admin.app(one._id, path), undefined, { token });
        expect({ name, status: response.status, code: response.body.error_code }).toEqual({ name, status: 401, code: 'InvalidSession' });
      }
      // The real admin token still reads it.
      expect((await admin.request('GET', admin.app(one._id, path))).status).toBe(200);
    });

    it("shows a user's own custom data document only, never the document of another user", async () => {
      const ada = await login(one);
      const bob = await login(one);
      const services = await admin.request<{ _id: string; name: string }[]>('GET', admin.app(one._id, '/services'));
      const atlas = services.body.find((service) => service.name === 'mongodb-atlas')!;
      expect((await admin.request('PATCH', admin.app(one._id, '/custom_user_data'), { enabled: true, mongo_service_id: atlas._id, database_name: 'todo', collection_name: 'custom', user_id_field: 'user_id' })).status).toBe(204);
      const source = "exports = (id) => context.services.get('mongodb-atlas').db('todo').collection('custom').insertOne({ user_id: id, secret: 'bob-only' });";
      expect((await admin.request('POST', admin.app(one._id, '/functions'), { name: 'writeCustom', source, private: true })).status).toBe(201);
      expect((await admin.request('POST', admin.app(one._id, '/debug/execute_function?run_as_system=true'), { name: 'writeCustom', arguments: [bob.user_id] })).status).toBe(200);
      const adas = await admin.request<{ document: unknown }>('GET', admin.app(one._id, `/users/${ada.user_id}/custom_data`));
      expect(adas).toMatchObject({ status: 200, body: { enabled: true, document: null } });
      expect((await admin.request<{ document: { secret: string } }>('GET', admin.app(one._id, `/users/${bob.user_id}/custom_data`))).body.document.secret).toBe('bob-only');
    });
  });

  describe('log filters', () => {
    let ada: { access_token: string; user_id: string };
    let bob: { access_token: string; user_id: string };

    beforeAll(async () => {
      ada = await login(one);
      bob = await login(one);
      expect((await clientCall(one, '/functions/call', { name: 'say', arguments: ['(a+)+$ x'] }, ada.access_token)).status).toBe(200);
      expect((await clientCall(one, '/functions/call', { name: 'say', arguments: ['porridge'] }, bob.access_token)).status).toBe(200);
      await eventually(async () => expect((await logs('type=FUNCTION')).body.logs.length).toBeGreaterThanOrEqual(2));
    });

    it.each([
      ['a negative skip', 'skip=-1', 'skip'],
      ['a skip in exponent notation', 'skip=1e3', 'skip'],
      ['a skip past 2^53', 'skip=99999999999999999999', 'skip'],
      ['a zero limit', 'limit=0', 'limit'],
      ['a limit over the kept log', 'limit=10001', 'limit'],
      ['a limit that is no number', 'limit=ten', 'limit'],
      ['a repeated limit', 'limit=1&limit=2', 'limit'],
      ['a repeated user_id', `user_id=${'a'.repeat(24)}&user_id=${'b'.repeat(24)}`, 'user_id'],
      ['a text over 200 characters', `text=${'a'.repeat(201)}`, 'text'],
      ['a start_date that is no date', 'start_date=2024-13-45', 'start_date'],
      ['a start_date past year 9999', 'start_date=99999-01-01', 'start_date'],
      ['an end_date in expanded years', 'end_date=%2B275760-09-13T00:00:00.000Z', 'end_date'],
      ['an end_date before the start_date', 'start_date=2024-01-02T00:00:00Z&end_date=2024-01-01T00:00:00Z', 'end_date'],
    ])('refuses %s with 400 InvalidParameter naming it', async (_name, query, parameter) => {
      const response = await logs(query);
      expect(response.status).toBe(400);
      expect(response.body.error_code).toBe('InvalidParameter');
      expect(response.body.error).toContain(parameter);
    });

    it('reads text as literal characters: regular expression metacharacters, a catastrophic pattern and a NUL', async () => {
      const found = (await logs('text=(a%2B)%2B%24')).body.logs;
      expect(found.map((entry) => entry.user_id)).toEqual([ada.user_id]);
      expect((await logs('text=.*')).body.logs).toEqual([]);
      // A NUL byte was handed to the datastore as a regex and came back as its MongoDBError.
      expect(await logs('text=%00')).toMatchObject({ status: 200, body: { logs: [] } });
    });

    it('takes bracketed parameter names literally: no operator reaches the log query', async () => {
      const everyone = (await logs('type=FUNCTION')).body.logs.length;
      // `user_id[$ne]` is not `user_id`: the filter is absent, not `{ $ne: ... }` (nor an error).
      expect((await logs(`type=FUNCTION&user_id[$ne]=${ada.user_id}`)).body.logs).toHaveLength(everyone);
      expect((await logs(`type=FUNCTION&user_id[$in][]=${bob.user_id}`)).body.logs).toHaveLength(everyone);
      expect((await logs('user_id=%7B%22%24ne%22%3Anull%7D')).body.logs).toEqual([]);
    });
  });

  describe('metrics', () => {
    const range = `start=${new Date(Date.now() - 3_600_000).toISOString()}&end=${new Date(Date.now() + 3_600_000).toISOString()}&granularity=PT1H`;

    it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', ',', 'OVERALL_COMPUTE_MS,'])('refuses the metric name %j with 400 InvalidParameter (an inherited or empty name was a 500)', async (name) => {
      // Log entries in the range: the series of such a name had no selector and failed on the first one.
      expect((await clientCall(one, '/functions/call', { name: 'say', arguments: ['metric'] }, (await login(one)).access_token)).status).toBe(200);
      const response = await admin.request<ErrorBody>('GET', admin.app(one._id, `/metrics?${range}&metrics=${encodeURIComponent(name)}`));
      expect(response.status).toBe(400);
      expect(response.body.error_code).toBe('InvalidParameter');
    });
  });

  describe('client API bodies', () => {
    let token: string;
    beforeAll(async () => {
      token = (await login(one)).access_token;
    });
    const say = (argument: string) => clientCall(one, '/functions/call', `{"name":"say","arguments":[${argument}]}`, token);

    it.each([
      ['an overflowing $numberLong (bson wrapped it to a negative)', '{"$numberLong":"9223372036854775808"}'],
      ['an overflowing $numberInt (bson truncated it)', '{"$numberInt":"99999999999"}'],
      ['a $numberInt that is no number (bson read 0)', '{"$numberInt":"abc"}'],
      ['a $date that is no date (was a 503)', '{"$date":"garbage"}'],
      ['a $date past the last instant (was a 503)', '{"$date":{"$numberLong":"8640000000000001"}}'],
      ['an invalid $oid', '{"$oid":"zz"}'],
      ['an invalid $numberDecimal', '{"$numberDecimal":"abc"}'],
      ['a negative $timestamp', '{"$timestamp":{"t":-1,"i":1}}'],
      ['an array nested 1,000 deep (was a 500)', `${'['.repeat(1000)}${']'.repeat(1000)}`],
      ['an object nested 100,000 deep', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`],
    ])('answers %s with 400 BadRequest', async (_name, argument) => {
      const response = await say(argument);
      expect(response.status).toBe(400);
      expect(response.body.error_code).toBe('BadRequest');
      expect(response.body.error).not.toMatch(/Maximum call stack/);
    });

    it('refuses __proto__ however spelled with 400 (dropped, it widened a deleteMany filter to every document), and leaves constructor.prototype a plain field', async () => {
      for (const key of ['__proto__', '\\u005f_proto__', '__pr\\u006fto__']) {
        expect(await say(`{"${key}":{"polluted":true},"kept":1}`)).toEqual({ status: 400, body: { error: '__proto__ may not be a key in a request body', error_code: 'BadRequest' } });
      }
      const constructor = await say('{"constructor":{"prototype":{"polluted":true}}}');
      expect(constructor).toMatchObject({ status: 200, body: { constructor: { prototype: { polluted: true } } } });
      // Remote data access: the user's documents survive a deleteMany whose filter is only a __proto__ key.
      const atlas = (name: string, args: unknown) => clientCall(one, '/functions/call', `{"name":"${name}","service":"mongodb-atlas","arguments":[${JSON.stringify(args)}]}`, token);
      const userId = (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as { sub: string }).sub;
      expect((await atlas('insertMany', { database: 'todo', collection: 'items', documents: [{ owner_id: userId, summary: 'a' }, { owner_id: userId, summary: 'b' }] })).status).toBe(200);
      const widened = await clientCall(one, '/functions/call', '{"name":"deleteMany","service":"mongodb-atlas","arguments":[{"database":"todo","collection":"items","query":{"__proto__":{"summary":"none"}}}]}', token);
      expect(widened).toMatchObject({ status: 400, body: { error_code: 'BadRequest' } });
      expect((await atlas('count', { database: 'todo', collection: 'items', query: { owner_id: userId } })).body).toEqual({ $numberLong: '2' });
    });

    it("refuses $range beyond MongoDB's memory limit in a user's aggregation, which held the whole process", async () => {
      const aggregate = (pipeline: unknown) => clientCall(one, '/functions/call', { name: 'aggregate', service: 'mongodb-atlas', arguments: [{ database: 'todo', collection: 'items', pipeline }] }, token);
      const huge = await aggregate([{ $documents: [{ a: 1 }] }, { $project: { r: { $range: [0, 1_000_000_000] } } }]);
      expect(huge.status).toBe(400);
      expect(huge.body.error_code).toBe('MongoDBError');
      expect(huge.body.error).toMatch(/\$range would use too much memory/);
      expect(await aggregate([{ $documents: [{ a: 1 }] }, { $project: { _id: 0, r: { $range: [0, 3] } } }])).toMatchObject({ status: 200, body: [{ r: [{ $numberInt: '0' }, { $numberInt: '1' }, { $numberInt: '2' }] }] });
      // $documents never opens another collection: $unionWith and $lookup stay system-only behind it.
      for (const stage of [{ $unionWith: 'items' }, { $lookup: { from: 'items', pipeline: [], as: 'x' } }, { $facet: { x: [{ $unionWith: { coll: 'other' } }] } }]) {
        expect(await aggregate([{ $documents: [{ a: 1 }] }, stage])).toMatchObject({ status: 400, body: { error_code: 'InvalidParameter' } });
      }
    });
  });

  describe("the datastore's wire server", () => {
    it('runs a database-level $documents aggregation as MongoDB does, refuses a $range beyond the memory limit, and stays up', async () => {
      const url = /mongodb:\/\/127\.0\.0\.1:\d+/.exec(server.stdout())?.[0];
      expect(url).toBeDefined();
      const client = new MongoClient(`${url}/?directConnection=true&serverSelectionTimeoutMS=5000`);
      try {
        const db = client.db('attack');
        await db.collection('secret').insertOne({ s: 'x' });
        // The datastore's wire server is the database itself (its own credentials, no app rules): MongoDB runs this.
        const united = await db.aggregate([{ $documents: [{ a: 1 }] }, { $unionWith: 'secret' }, { $project: { _id: 0 } }]).toArray();
        expect(united).toEqual([{ a: 1 }, { s: 'x' }]);
        await expect(db.aggregate([{ $match: {} }]).toArray()).rejects.toMatchObject({ code: 73 });
        await expect(db.collection('secret').aggregate([{ $unionWith: { pipeline: [{ $documents: { $map: { input: { $range: [0, 100_000_000] }, in: { x: '$$this' } } } }] } }]).toArray()).rejects.toMatchObject({ code: 146, codeName: 'ExceededMemoryLimit' });
        await expect(db.collection('secret').aggregate([{ $project: { r: { $range: [0, 10, 0] } } }]).toArray()).rejects.toMatchObject({ code: 2 });
        expect(await db.collection('secret').countDocuments()).toBe(1);
      } finally {
        await client.close();
      }
    });
  });
});
