import { request as httpRequest } from 'node:http';
import { anonymousLogin, makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';
import { SignJWT } from 'jose';
import { AdminSession } from '../admin-api/admin-session';
import { appSigningKey, testSigningKey, claimsOf, expiredCopy, failureOf, lastMail, Realm, realmApp } from './realm-helpers';

const tokenSecret = 'e2e-custom-token-secret-0123456789';

/** An app directory, as pushed with the admin API. */
function appFiles(name: string, providers: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): Map<string, string> {
  const files = new Map<string, string>();
  files.set('config.json', JSON.stringify({ name, config_version: 20210101, security: { allowed_request_origins: ['https://good.example'] }, ...extra }));
  for (const provider of providers) files.set(`auth_providers/${String(provider['name'])}.json`, JSON.stringify(provider));
  files.set('functions/echo/config.json', JSON.stringify({ name: 'echo', private: false }));
  files.set('functions/echo/source.js', 'exports = function (...args) { return args; };');
  files.set('functions/authenticate/config.json', JSON.stringify({ name: 'authenticate', private: true }));
  files.set('functions/authenticate/source.js', 'exports = function (payload) { return `ext-${payload.username}`; };');
  files.set('services/mongodb-atlas/config.json', JSON.stringify({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'E2ECluster' } }));
  files.set('services/mongodb-atlas/default_rule.json', JSON.stringify({ roles: [{ name: 'owner', apply_when: {}, document_filters: { read: { owner: '%%user.id' }, write: { owner: '%%user.id' } }, read: true, write: true, insert: true, delete: true, search: true }] }));
  files.set('services/mongodb-atlas/rules/todo.board.json', JSON.stringify({ database: 'todo', collection: 'board', roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] }));
  files.set('secrets.json', JSON.stringify({ tokenKey: tokenSecret }));
  return files;
}

async function postJson(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string | null; body: { error?: string; error_code?: string } }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type'), body: text ? (JSON.parse(text) as { error?: string; error_code?: string }) : {} };
}

// The real realm-web package against the built server started as users start it (a child process).
describe('client API against the server process', () => {
  const dataDir = makeTempDir('tessera-client-e2e-');
  let server: ServerProcess;
  let clientAppId: string;
  let appId: string;
  let confirmingAppId: string;
  let api: string;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: 'admin-test-password', TESSERA_EXAMPLE_APP: '', TESSERA_SIGNING_KEY: testSigningKey.toString('base64') } });
    api = `${server.url}/api/client/v2.0`;
    const admin = await AdminSession.login(server, 'admin', 'admin-test-password');
    const created = await admin.createApp('e2e');
    ({ client_app_id: clientAppId, _id: appId } = created);
    const pushed = await admin.push(
      created._id,
      appFiles('e2e', [
        { name: 'anon-user', type: 'anon-user', disabled: false },
        { name: 'local-userpass', type: 'local-userpass', disabled: false, config: { autoConfirm: true, resetPasswordUrl: 'https://good.example/reset' } },
        { name: 'api-key', type: 'api-key', disabled: false },
        { name: 'custom-token', type: 'custom-token', disabled: false, config: { audience: 'e2e', signingAlgorithm: 'HS256', useJWKURI: false }, secret_config: { signingKeys: ['tokenKey'] }, metadata_fields: [{ required: false, name: 'name', field_name: 'name' }] },
        { name: 'custom-function', type: 'custom-function', disabled: true, config: { authFunctionName: 'authenticate' } },
      ]),
    );
    expect(pushed.status).toBe(204);
    const confirming = await admin.createApp('e2e-confirm');
    confirmingAppId = confirming.client_app_id;
    expect((await admin.push(confirming._id, appFiles('e2e-confirm', [{ name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: false, emailConfirmationUrl: 'https://good.example/confirm', resetPasswordUrl: 'https://good.example/reset' } }]))).status).toBe(204);
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it('logs in anonymously, with an API key and with a custom JWT', async () => {
    const app = realmApp(server.url, clientAppId);
    const anonymous = await app.logIn(Realm.Credentials.anonymous(false));
    expect(claimsOf(anonymous.accessToken)).toMatchObject({ sub: anonymous.id, typ: 'access' });
    const key = await anonymous.apiKeys.create('e2e-key');
    expect((await realmApp(server.url, clientAppId).logIn(Realm.Credentials.apiKey(key.key))).id).toBe(anonymous.id);
    expect((await anonymous.apiKeys.fetchAll()).map((listed) => listed.name)).toEqual(['e2e-key']);
    await anonymous.apiKeys.disable(key._id);
    await anonymous.apiKeys.delete(key._id);
    const jwt = await new SignJWT({ name: 'Jay' }).setProtectedHeader({ alg: 'HS256' }).setSubject('e2e-jwt').setAudience('e2e').setExpirationTime('5m').sign(new TextEncoder().encode(tokenSecret));
    const viaJwt = await app.logIn(Realm.Credentials.jwt(jwt));
    expect(viaJwt.profile.name).toBe('Jay');
  });

  it('refuses a disabled provider and an unknown one with AuthProviderNotFound', async () => {
    const app = realmApp(server.url, clientAppId);
    expect(await failureOf(app.logIn(Realm.Credentials.function({ username: 'x' })))).toMatchObject({ statusCode: 404, errorCode: 'AuthProviderNotFound' });
    const unknown = await postJson(`${api}/app/${clientAppId}/auth/providers/oauth2-nothing/login`, '{}');
    expect(unknown).toMatchObject({ status: 404, type: 'application/json', body: { error_code: 'AuthProviderNotFound' } });
  });

  it('registers, confirms by emailed token, resends, and resets a password', async () => {
    const app = realmApp(server.url, confirmingAppId);
    await app.emailPasswordAuth.registerUser({ email: 'e2e@example.com', password: 'first-pass' });
    expect(await failureOf(app.logIn(Realm.Credentials.emailPassword('e2e@example.com', 'first-pass')))).toMatchObject({ statusCode: 401, errorCode: 'AuthError', error: 'confirmation required' });
    await app.emailPasswordAuth.resendConfirmationEmail({ email: 'e2e@example.com' });
    const mail = await lastMail(dataDir.path, 'e2e@example.com', 'confirm');
    expect(mail?.link).toMatch(/^https:\/\/good\.example\/confirm\?token=[0-9a-f]+&tokenId=[0-9a-f]{24}$/);
    await app.emailPasswordAuth.confirmUser({ token: mail!.token, tokenId: mail!.tokenId });
    expect(await failureOf(app.emailPasswordAuth.resendConfirmationEmail({ email: 'e2e@example.com' }))).toMatchObject({ statusCode: 409, errorCode: 'UserAlreadyConfirmed' });
    const user = await app.logIn(Realm.Credentials.emailPassword('e2e@example.com', 'first-pass'));
    await app.emailPasswordAuth.sendResetPasswordEmail({ email: 'e2e@example.com' });
    const reset = await lastMail(dataDir.path, 'e2e@example.com', 'reset');
    await app.emailPasswordAuth.resetPassword({ token: reset!.token, tokenId: reset!.tokenId, password: 'second-pass' });
    expect((await realmApp(server.url, confirmingAppId).logIn(Realm.Credentials.emailPassword('e2e@example.com', 'second-pass'))).id).toBe(user.id);
  });

  it('refreshes an expired access token, logs out and deletes a user', async () => {
    const app = realmApp(server.url, clientAppId);
    const user = await app.logIn(Realm.Credentials.anonymous(false));
    user.accessToken = expiredCopy(user.accessToken!, appSigningKey(appId));
    await user.refreshProfile();
    expect(claimsOf(user.accessToken)['exp']).toBeGreaterThan(Date.now() / 1000);
    const { refreshToken } = user;
    await user.logOut();
    const again = await fetch(`${api}/auth/session`, { method: 'DELETE', headers: { authorization: `Bearer ${refreshToken}` } });
    expect(again.status).toBe(401);
    const doomed = await app.logIn(Realm.Credentials.anonymous(false));
    const token = doomed.accessToken;
    await app.deleteUser(doomed);
    expect((await fetch(`${api}/auth/profile`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it('answers CORS preflights for allowed origins and refuses other origins with 403 DomainNotAllowed', async () => {
    const preflight = await fetch(`${api}/app/${clientAppId}/auth/providers/anon-user/login`, { method: 'OPTIONS', headers: { origin: 'https://good.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://good.example');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const login = await postJson(`${api}/app/${clientAppId}/auth/providers/anon-user/login`, '{}', { origin: 'https://good.example' });
    expect(login.status).toBe(200);
    const refused = await postJson(`${api}/app/${clientAppId}/auth/providers/anon-user/login`, '{}', { origin: 'https://evil.example' });
    expect(refused).toMatchObject({ status: 403, type: 'application/json', body: { error_code: 'DomainNotAllowed' } });
  });

  it('serves the request shapes realm-core sends: provider key, device info, empty JSON bodies', async () => {
    const core = { 'content-type': 'application/json;charset=utf-8', accept: 'application/json' };
    const device = { appId: clientAppId, platform: 'Linux', platformVersion: '6', sdk: 'JS', sdkVersion: '12.15.0', cpuArch: 'x86_64', deviceName: '', deviceVersion: '', frameworkName: 'Node.js', frameworkVersion: 'v20', coreVersion: '14.14.0', bundleId: 'x' };
    const login = await fetch(`${api}/app/${clientAppId}/auth/providers/anon-user/login`, { method: 'POST', headers: core, body: JSON.stringify({ provider: 'anon-user', options: { device } }) });
    expect(login.status).toBe(200);
    expect(login.headers.get('content-type')).toBe('application/json');
    const tokens = (await login.json()) as Record<string, string>;
    expect(Object.keys(tokens).sort()).toEqual(['access_token', 'device_id', 'refresh_token', 'user_id']);
    for (const token of [tokens['access_token'], tokens['refresh_token']]) expect(claimsOf(token)).toEqual(expect.objectContaining({ exp: expect.any(Number), iat: expect.any(Number) }));
    const profile = await fetch(`${api}/auth/profile`, { headers: { ...core, authorization: `Bearer ${tokens['access_token']}` } });
    expect(await profile.json()).toMatchObject({ user_id: tokens['user_id'], identities: [{ provider_type: 'anon-user' }], data: {} });
    const key = await fetch(`${api}/auth/api_keys`, { method: 'POST', headers: { ...core, authorization: `Bearer ${tokens['refresh_token']}` }, body: JSON.stringify({ name: 'core-key' }) });
    expect(key.status).toBe(201);
    const created = (await key.json()) as { _id: unknown; name: string; disabled: boolean; key: string };
    expect(typeof created._id).toBe('string');
    const refreshed = await fetch(`${api}/auth/session`, { method: 'POST', headers: { ...core, authorization: `Bearer ${tokens['refresh_token']}` }, body: '' });
    expect(refreshed.status).toBe(201);
    const deleted = await fetch(`${api}/auth/delete`, { method: 'DELETE', headers: { ...core, authorization: `Bearer ${((await refreshed.json()) as { access_token: string }).access_token}` }, body: '' });
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get('content-type')).toBeNull();
  });

  it('calls a function through the function runtime', async () => {
    const user = await realmApp(server.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    expect(await user.callFunction('echo', 1, 'two', { three: 3 })).toEqual([1, 'two', { three: 3 }]);
    expect(await failureOf(user.callFunction('authenticate', {}))).toMatchObject({ statusCode: 403, errorCode: 'NotCallable' });
  });

  it('finds, inserts, updates, aggregates, counts and deletes under the rules, and watches', async () => {
    const alice = await realmApp(server.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    const bob = await realmApp(server.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    type Todo = { _id: unknown; owner: string; text: string; done: boolean };
    const asAlice = alice.mongoClient('mongodb-atlas').db('todo').collection<Todo>('items');
    const asBob = bob.mongoClient('mongodb-atlas').db('todo').collection<Todo>('items');
    await asAlice.insertMany([{ owner: alice.id, text: 'a1', done: false }, { owner: alice.id, text: 'a2', done: false }]);
    await asBob.insertOne({ owner: bob.id, text: 'b1', done: false });
    expect((await asAlice.find({}, { sort: { text: 1 } })).map((todo) => todo.text)).toEqual(['a1', 'a2']);
    expect(await asBob.count()).toBe(1);
    expect(await asAlice.updateMany({}, { $set: { done: true } })).toEqual({ matchedCount: 2, modifiedCount: 2 });
    expect(await asAlice.aggregate([{ $group: { _id: '$done', n: { $sum: 1 } } }])).toEqual([{ _id: true, n: 2 }]);
    expect(await asAlice.findOneAndUpdate({ text: 'a1' }, { $set: { text: 'A1' } }, { returnNewDocument: true })).toMatchObject({ text: 'A1' });
    expect(await asAlice.findOneAndDelete({ text: 'a2' })).toMatchObject({ text: 'a2' });
    expect(await asBob.deleteMany({})).toEqual({ deletedCount: 1 });
    expect(await asAlice.count()).toBe(1);

    const carol = await realmApp(server.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    const shared = carol.mongoClient('mongodb-atlas').db('todo').collection<Todo>('board').watch();
    const first = shared.next();
    let round = 0;
    const writes = setInterval(() => void bob.mongoClient('mongodb-atlas').db('todo').collection<Todo>('board').insertOne({ owner: bob.id, text: `from bob ${++round}`, done: false }), 100);
    try {
      const event = (await first).value as { operationType: string; fullDocument: Todo };
      expect(event).toMatchObject({ operationType: 'insert', fullDocument: { owner: bob.id } });
    } finally {
      clearInterval(writes);
      await shared.return(undefined);
    }
  });

  describe('bad input', () => {
    let accessToken: string;
    let refreshToken: string;

    beforeAll(async () => {
      ({ accessToken, refreshToken } = await anonymousLogin(server.url, clientAppId));
    });

    const profileWith = async (token: string) => {
      const response = await fetch(`${api}/auth/profile`, { headers: { authorization: `Bearer ${token}` } });
      return { status: response.status, type: response.headers.get('content-type'), body: (await response.json()) as { error: string; error_code: string } };
    };

    it('refuses a forged token (signed with another key) with 401 InvalidSession', async () => {
      const [header, payload] = accessToken.split('.');
      const forged = `${header}.${payload}.${Buffer.from('not the signature at all, not at all').toString('base64url')}`;
      expect(await profileWith(forged)).toEqual({ status: 401, type: 'application/json', body: { error: 'invalid session', error_code: 'InvalidSession' } });
      const claims = claimsOf(accessToken);
      const elevated = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: '000000000000000000000000' })).toString('base64url')}.${accessToken.split('.')[2]}`;
      expect((await profileWith(elevated)).status).toBe(401);
    });

    it("refuses an 'alg: none' token with 401 InvalidSession", async () => {
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${accessToken.split('.')[1]}.`;
      expect(await profileWith(none)).toMatchObject({ status: 401, body: { error_code: 'InvalidSession' } });
    });

    it('refuses an expired access token with the message that makes clients refresh', async () => {
      expect(await profileWith(expiredCopy(accessToken, appSigningKey(appId)))).toEqual({ status: 401, type: 'application/json', body: { error: 'invalid session: access token expired', error_code: 'InvalidSession' } });
    });

    it('refuses a refresh token where an access token is needed, and the reverse', async () => {
      expect((await profileWith(refreshToken)).status).toBe(401);
      expect((await fetch(`${api}/auth/session`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(401);
      expect((await profileWith('')).status).toBe(401);
    });

    it('refuses a token of one app on another app, and an unknown app id', async () => {
      const other = await postJson(`${api}/app/${confirmingAppId}/functions/call`, JSON.stringify({ name: 'echo', arguments: [] }), { authorization: `Bearer ${accessToken}` });
      expect(other).toMatchObject({ status: 401, body: { error_code: 'InvalidSession' } });
      const unknown = await postJson(`${api}/app/no-such-app-abcde/auth/providers/anon-user/login`, '{}');
      expect(unknown).toMatchObject({ status: 404, type: 'application/json', body: { error_code: 'AppNotFound' } });
    });

    it('refuses malformed JSON and malformed EJSON with 400 BadRequest', async () => {
      const url = `${api}/app/${clientAppId}/functions/call`;
      const auth = { authorization: `Bearer ${accessToken}` };
      expect(await postJson(url, '{"name": "echo", "arguments": [', auth)).toMatchObject({ status: 400, type: 'application/json', body: { error_code: 'BadRequest' } });
      expect(await postJson(url, JSON.stringify({ name: 'echo', arguments: [{ $oid: 'not-an-object-id' }] }), auth)).toMatchObject({ status: 400, body: { error_code: 'BadRequest' } });
      expect(await postJson(url, JSON.stringify({ name: 'echo', arguments: [{ $numberLong: 'twelve' }] }), auth)).toMatchObject({ status: 400, body: { error_code: 'BadRequest' } });
      expect(await postJson(url, JSON.stringify({ arguments: [] }), auth)).toMatchObject({ status: 400, body: { error_code: 'MissingParameter' } });
    });

    it('refuses watch streams without a valid token or request before any event is sent', async () => {
      const request = Buffer.from(JSON.stringify({ name: 'watch', service: 'mongodb-atlas', arguments: [{ database: 'todo', collection: 'board' }] })).toString('base64');
      const anonymous = await fetch(`${api}/app/${clientAppId}/functions/call?baas_request=${encodeURIComponent(request)}`, { headers: { accept: 'text/event-stream' } });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('content-type')).toBe('application/json');
      expect(((await anonymous.json()) as { error_code: string }).error_code).toBe('InvalidSession');
      const garbled = await fetch(`${api}/app/${clientAppId}/functions/call?baas_request=%%%&baas_at=${accessToken}`, { headers: { accept: 'text/event-stream' } });
      expect(garbled.status).toBe(400);
      const missing = await fetch(`${api}/app/${clientAppId}/functions/call?baas_at=${accessToken}`);
      expect(missing.status).toBe(400);
      expect(((await missing.json()) as { error_code: string }).error_code).toBe('MissingParameter');
    });

    it('refuses a body over the 18 MB request limit with 413', async () => {
      // The server answers as soon as it reads the declared length, then closes: sending all 19 MB would
      // race the close (EPIPE), so only the start of the body is written before the answer is read.
      const declared = 19 * 1024 * 1024;
      const response = await new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
        const request = httpRequest(`${api}/app/${clientAppId}/functions/call`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(declared), authorization: `Bearer ${accessToken}` } }, (reply) => {
          let text = '';
          reply.on('data', (chunk: Buffer) => (text += chunk.toString()));
          reply.on('end', () => {
            resolve({ status: reply.statusCode ?? 0, type: reply.headers['content-type'], body: text });
            request.destroy();
          });
        });
        request.on('error', reject);
        request.write(`{"name":"echo","arguments":["${'x'.repeat(1024 * 1024)}`);
      });
      expect(response.status).toBe(413);
      expect(response.type).toBe('application/json');
      expect((JSON.parse(response.body) as { error_code: string }).error_code).toBe('RequestTooLarge');
    });

    it('rate-limits failed password logins per identity with 429', async () => {
      const app = realmApp(server.url, clientAppId);
      await app.emailPasswordAuth.registerUser({ email: 'guessed@example.com', password: 'the-real-one' });
      const attempts: Array<{ statusCode: number; errorCode: string }> = [];
      for (let attempt = 0; attempt < 11; attempt++) attempts.push(await failureOf(app.logIn(Realm.Credentials.emailPassword('guessed@example.com', `guess-${attempt}`))));
      expect(attempts.slice(0, 10).every((failure) => failure.errorCode === 'InvalidPassword')).toBe(true);
      expect(attempts[10]).toMatchObject({ statusCode: 429, errorCode: 'TooManyRequests' });
      expect(await failureOf(app.logIn(Realm.Credentials.emailPassword('guessed@example.com', 'the-real-one')))).toMatchObject({ statusCode: 429 });
    });
  });
});
