import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OutboxFileMailer } from '@tessera/graphql-gateway';
import { makeTempDir } from '@tessera/testing';
import { SignJWT } from 'jose';
import * as Realm from 'realm-web';
import { AdminSession } from '../admin-api/admin-session';
import { tessera } from '../cli/tessera-cli';
import { startTestHost, type TestHost } from '../support/test-host';

const ADMIN_PASSWORD = 'import-test-password';
const TOKEN_SECRET = 'import-custom-token-secret-0123456789';
const SERVER_KEY = 'c0ffee'.repeat(11);
// Each step starts the CLI; on a loaded machine one start can take seconds.
const CLI_TIMEOUT_MS = 120_000;

/** Users as App Services' admin API listed them (`GET /groups/{g}/apps/{a}/users`), one per provider. */
const listing = [
  {
    _id: '6371a1b2c3d4e5f601020301',
    identities: [{ id: '6371a1b2c3d4e5f6010203aa', provider_type: 'local-userpass', provider_id: '5f1a000000000000000000aa', provider_data: { email: 'ada@example.com' } }],
    type: 'normal',
    data: { email: 'ada@example.com' },
    creation_date: 1668358578,
    last_authentication_date: 1700000000,
    disabled: false,
  },
  {
    _id: '6371a1b2c3d4e5f601020302',
    identities: [{ id: 'ext-grace', provider_type: 'custom-token', provider_id: '5f1a000000000000000000bb', provider_data: { name: 'Grace' } }],
    type: 'normal',
    data: { name: 'Grace' },
    creation_date: 1668358600,
    last_authentication_date: 1690000000,
    disabled: false,
  },
  {
    _id: '6371a1b2c3d4e5f601020303',
    identities: [{ id: 'fn-margaret', provider_type: 'custom-function', provider_id: '5f1a000000000000000000cc' }],
    type: 'normal',
    data: {},
    creation_date: 1668358700,
    last_authentication_date: 0,
    disabled: false,
  },
  {
    _id: '6371a1b2c3d4e5f601020304',
    identities: [{ id: '6371a1b2c3d4e5f6010203dd', provider_type: 'api-key', provider_id: '5f1a000000000000000000dd' }],
    type: 'server',
    data: { name: 'backend' },
    creation_date: 1668358800,
    last_authentication_date: 0,
    disabled: false,
    api_keys: [{ _id: '6371a1b2c3d4e5f6010203dd', name: 'backend', key: SERVER_KEY }],
  },
  {
    _id: '6371a1b2c3d4e5f601020305',
    identities: [{ id: '6371a1b2c3d4e5f6010203ee', provider_type: 'anon-user', provider_id: '5f1a000000000000000000ee' }],
    type: 'normal',
    data: {},
    creation_date: 1668358900,
    last_authentication_date: 1668358900,
    disabled: true,
  },
];

// `tessera users import` (the CLI as a subprocess) against the real host: users keep their ids and log in
// with API keys, custom JWTs and custom functions; email/password users go through the reset flow first.
describe('importing App Services users', () => {
  const work = makeTempDir('tessera-user-import-');
  let host: TestHost;
  let admin: AdminSession;
  let env: Record<string, string>;
  let clientAppId: string;
  let appId: string;
  let resetClientAppId: string;
  const resetDecisions = new Map<string, 'success' | 'pending' | 'fail'>();
  const realm = (id = clientAppId): Realm.App => new Realm.App({ id, baseUrl: host.url });
  const file = (name: string, value: unknown): string => {
    const path = join(work.path, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };
  const importUsers = (path: string, remote = clientAppId): ReturnType<typeof tessera> => tessera(['users', 'import', '--remote', remote, '--file', path, '--json'], env);

  beforeAll(async () => {
    host = await startTestHost({
      settings: { TESSERA_ADMIN_PASSWORD: ADMIN_PASSWORD },
      fakes: {
        functions: {
          authenticate: (args) => ({ id: `fn-${(args[0] as { username: string }).username}` }),
          resetPassword: (args) => ({ status: resetDecisions.get((args[0] as { username: string }).username) ?? 'fail' }),
        },
      },
    });
    admin = await AdminSession.login(host, 'admin', ADMIN_PASSWORD);
    ({ clientAppId, appId } = await host.createApp(
      'importer',
      (app) => {
        app.functions.push({ config: { name: 'authenticate', private: true }, source: '' });
        app.authProviders.push(
          { name: 'local-userpass', type: 'local-userpass', config: { resetPasswordUrl: 'https://example.com/reset', emailConfirmationUrl: 'https://example.com/confirm' } },
          { name: 'custom-token', type: 'custom-token', config: { audience: ['importer'], signingAlgorithm: 'HS256', useJWKURI: false }, secret_config: { signingKeys: ['tokenKey'] } },
          { name: 'custom-function', type: 'custom-function', config: { authFunctionName: 'authenticate' } },
          { name: 'api-key', type: 'api-key' },
          { name: 'anon-user', type: 'anon-user' },
        );
      },
      { groupId: admin.groupId },
    ));
    await host.secrets.create(appId, 'tokenKey', TOKEN_SECRET);
    ({ clientAppId: resetClientAppId } = await host.createApp(
      'resetter',
      (app) => {
        app.functions.push({ config: { name: 'resetPassword', private: true }, source: '' });
        app.authProviders.push({ name: 'local-userpass', type: 'local-userpass', config: { runResetFunction: true, resetFunctionName: 'resetPassword', autoConfirm: true } });
      },
      { groupId: admin.groupId },
    ));
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
    const login = await tessera(['login', '--url', host.url, '--username', 'admin', '--password', ADMIN_PASSWORD], env);
    expect(login.code, login.stderr).toBe(0);
  }, CLI_TIMEOUT_MS);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  it(
    'creates every user with its id, identities, dates and state; a second import changes nothing',
    async () => {
      const path = file('users.json', listing);
      const run = await importUsers(path);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ created: 5, unchanged: 0, conflicts: 0, invalid: 0 });
      const users = await admin.request<Array<Record<string, unknown>>>('GET', admin.app(appId, '/users'));
      const byId = new Map(users.body.map((user) => [user['_id'], user]));
      for (const source of listing) {
        const { api_keys: _keys, ...expected } = source;
        // App Services' email/password identity had an internal id and the email in provider_data: Tessera keys it by the email.
        const identities = expected.identities.map((identity) => (identity.provider_type === 'local-userpass' ? { ...identity, id: 'ada@example.com' } : identity));
        expect(byId.get(source._id), source._id).toEqual({ ...expected, identities });
      }
      const again = await importUsers(path);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, unchanged: 5, conflicts: 0, invalid: 0 });
    },
    CLI_TIMEOUT_MS,
  );

  it('logs the custom JWT, custom function and API key users in as their imported ids', async () => {
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('ext-grace').setAudience('importer').setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(TOKEN_SECRET));
    expect((await realm().logIn(Realm.Credentials.jwt(jwt))).id).toBe('6371a1b2c3d4e5f601020302');
    expect((await realm().logIn(Realm.Credentials.function({ username: 'margaret' }))).id).toBe('6371a1b2c3d4e5f601020303');
    const server = await realm().logIn(Realm.Credentials.apiKey(SERVER_KEY));
    expect(server.id).toBe('6371a1b2c3d4e5f601020304');
    // A wrong key is still refused; the disabled user stays disabled.
    await expect(realm().logIn(Realm.Credentials.apiKey('f'.repeat(66)))).rejects.toMatchObject({ statusCode: 401 });
    const users = await admin.request<Array<{ _id: string; disabled: boolean }>>('GET', admin.app(appId, '/users?status=disabled'));
    expect(users.body.map((user) => user._id)).toEqual(['6371a1b2c3d4e5f601020305']);
  });

  it('sends an imported email/password user through the reset email on its first login, then logs it in as its id', async () => {
    const refused = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/local-userpass/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'ada@example.com', password: 'whatever-she-had' }),
    });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error_code: 'AuthError', error: expect.stringContaining('password reset required') });
    const mail = (await OutboxFileMailer.read(host.dataDir)).filter((message) => message.to === 'ada@example.com' && message.purpose === 'reset').pop();
    expect(mail?.link).toMatch(/^https:\/\/example\.com\/reset\?token=/);
    // realm-web: the user follows the link and sets a password; the login then works as the same user.
    const app = realm();
    await app.emailPasswordAuth.resetPassword({ token: mail!.token, tokenId: mail!.tokenId, password: 'a-new-password' });
    const user = await app.logIn(Realm.Credentials.emailPassword('ada@example.com', 'a-new-password'));
    expect(user.id).toBe('6371a1b2c3d4e5f601020301');
    await expect(realm().logIn(Realm.Credentials.emailPassword('ada@example.com', 'whatever-she-had'))).rejects.toMatchObject({ statusCode: 401, errorCode: 'InvalidPassword' });
  });

  it(
    "runs the app's reset function on the first login: success sets the attempted password, pending refuses",
    async () => {
      const users = [
        { _id: '6371a1b2c3d4e5f601020401', identities: [{ id: 'yes@example.com', provider_type: 'local-userpass', provider_id: 'x' }], type: 'normal', data: { email: 'yes@example.com' }, creation_date: 1668358578, disabled: false },
        { _id: '6371a1b2c3d4e5f601020402', identities: [{ id: 'later@example.com', provider_type: 'local-userpass', provider_id: 'x' }], type: 'normal', data: { email: 'later@example.com' }, creation_date: 1668358578, disabled: false },
      ];
      const run = await importUsers(file('reset-users.json', users), resetClientAppId);
      expect(run.code, run.stderr).toBe(0);
      resetDecisions.set('yes@example.com', 'success');
      resetDecisions.set('later@example.com', 'pending');
      const yes = await realm(resetClientAppId).logIn(Realm.Credentials.emailPassword('yes@example.com', 'chosen-password'));
      expect(yes.id).toBe('6371a1b2c3d4e5f601020401');
      // The reset is done: the function is not asked again and the password holds.
      resetDecisions.set('yes@example.com', 'fail');
      expect((await realm(resetClientAppId).logIn(Realm.Credentials.emailPassword('yes@example.com', 'chosen-password'))).id).toBe(yes.id);
      await expect(realm(resetClientAppId).logIn(Realm.Credentials.emailPassword('later@example.com', 'chosen-password'))).rejects.toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'reports conflicts and invalid users one by one and never overwrites an existing user',
    async () => {
      await realm().emailPasswordAuth.registerUser({ email: 'native@example.com', password: 'native-password' });
      const conflicting = [
        // The same id as Grace, other identities.
        { ...listing[1], identities: [{ id: 'ext-someone-else', provider_type: 'custom-token', provider_id: 'x' }] },
        // A new id claiming Grace's identity.
        { ...listing[1], _id: '6371a1b2c3d4e5f601020399' },
        // An email already registered here.
        { _id: '6371a1b2c3d4e5f601020398', identities: [{ id: 'native@example.com', provider_type: 'local-userpass', provider_id: 'x' }], type: 'normal', data: {}, disabled: false },
        // Not an App Services user.
        { _id: 'not-an-object-id', identities: [] },
        // One good user among them is imported.
        { _id: '6371a1b2c3d4e5f601020397', identities: [{ id: 'ext-new', provider_type: 'custom-token', provider_id: 'x' }], type: 'normal', data: {}, disabled: false },
      ];
      const run = await importUsers(file('conflicts.json', conflicting));
      expect(run.code).toBe(6);
      const summary = JSON.parse(run.stdout) as { created: number; conflicts: number; invalid: number; results: Array<{ index: number; status: string; error?: string }> };
      expect(summary).toMatchObject({ created: 1, conflicts: 3, invalid: 1 });
      expect(summary.results.map((result) => result.status)).toEqual(['conflict', 'conflict', 'conflict', 'invalid', 'created']);
      expect(summary.results[0].error).toMatch(/different user/);
      expect(summary.results[1].error).toMatch(/belongs to user 6371a1b2c3d4e5f601020302/);
      expect(summary.results[2].error).toMatch(/native@example.com/);
      expect(summary.results[3].error).toMatch(/_id/);
      const grace = await admin.request<{ identities: Array<{ id: string }> }>('GET', admin.app(appId, '/users/6371a1b2c3d4e5f601020302'));
      expect(grace.body.identities.map((identity) => identity.id)).toEqual(['ext-grace']);
      expect((await admin.request('GET', admin.app(appId, '/users/6371a1b2c3d4e5f601020399'))).status).toBe(404);
      // The native account is untouched: still waiting for its confirmation, not for a reset.
      await expect(realm().logIn(Realm.Credentials.emailPassword('native@example.com', 'native-password'))).rejects.toMatchObject({ statusCode: 401, message: expect.stringContaining('confirmation required') });
      expect((await admin.request('GET', admin.app(appId, '/users/6371a1b2c3d4e5f601020398'))).status).toBe(404);
    },
    CLI_TIMEOUT_MS,
  );

  it('refuses a body that is not a listing, and an oversized batch, with 400 InvalidParameter', async () => {
    const path = admin.app(appId, '/users/import');
    const notListing = await admin.request('POST', path, { hello: 'world' });
    expect(notListing.status).toBe(400);
    expect(notListing.body).toMatchObject({ error_code: 'InvalidParameter' });
    const huge = await admin.request('POST', path, Array.from({ length: 1001 }, () => ({})));
    expect(huge.status).toBe(400);
    expect(huge.body).toMatchObject({ error_code: 'InvalidParameter', error: expect.stringContaining('at most 1000') });
    const anonymous = await fetch(`${admin.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
    expect(anonymous.status).toBe(401);
  });
});
