import { AppUserStore } from '@tessera/platform';
import { SignJWT } from 'jose';
import { startTestHost, type TestHost } from '../support/test-host';
import { appSigningKey, testSigningKey, claimsOf, expiredCopy, failureOf, lastMail, Realm, realmApp } from './realm-helpers';

// Every provider's login and the session lifecycle, driven through the real realm-web 2.0.1 package.
describe('client API auth with realm-web', () => {
  let host: TestHost;
  let clientAppId: string;
  let appId: string;
  const tokenSecret = 'custom-token-secret-0123456789abcdef';

  beforeAll(async () => {
    host = await startTestHost({
      services: ['graphql-gateway'],
      settings: { TESSERA_SIGNING_KEY: testSigningKey.toString('base64') },
      fakes: {
        functions: {
          echo: (args) => args,
          whoAmI: (_args, request) => (request.caller.type === 'user' ? request.caller.user : null),
          authenticate: (args) => {
            const payload = args[0] as { username?: string };
            if (payload.username === 'refuse-me') throw new Error('no such person');
            return { id: `ext-${payload.username}`, name: payload.username };
          },
        },
      },
    });
    ({ clientAppId, appId } = await host.createApp('authapp', (app) => {
      app.functions.push({ config: { name: 'echo' }, source: '' }, { config: { name: 'whoAmI' }, source: '' }, { config: { name: 'authenticate', private: true }, source: '' });
      app.authProviders.push(
        { name: 'anon-user', type: 'anon-user' },
        { name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } },
        { name: 'api-key', type: 'api-key' },
        {
          name: 'custom-token',
          type: 'custom-token',
          config: { audience: ['tessera-tests'], signingAlgorithm: 'HS256', useJWKURI: false },
          secret_config: { signingKeys: ['tokenKey'] },
          metadata_fields: [
            { required: true, name: 'email', field_name: 'email' } as { required: boolean; name: string },
            { required: false, name: 'profile.nick', field_name: 'name' } as { required: boolean; name: string },
          ],
        },
        { name: 'custom-function', type: 'custom-function', config: { authFunctionName: 'authenticate' } },
      );
      app.services.push({ config: { name: 'gcm', type: 'gcm', config: {} }, collectionRules: [], rules: [], webhooks: [] });
    }));
    await host.secrets.create(appId, 'tokenKey', tokenSecret);
  });

  afterAll(async () => {
    await host?.close();
  });

  it('logs in anonymously with 3-part tokens carrying the claims the SDKs read', async () => {
    const app = realmApp(host.url, clientAppId);
    const user = await app.logIn(Realm.Credentials.anonymous(false));
    const access = claimsOf(user.accessToken);
    const refresh = claimsOf(user.refreshToken);
    expect(access).toMatchObject({ sub: user.id, typ: 'access', baas_device_id: user.deviceId });
    expect((access['exp'] as number) - (access['iat'] as number)).toBe(30 * 60);
    expect((refresh['exp'] as number) - (refresh['iat'] as number)).toBe(60 * 24 * 60 * 60);
    expect(user.identities).toEqual([expect.objectContaining({ providerType: 'anon-user' })]);
    expect(user.providerType).toBe('anon-user');
    const second = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    expect(second.id).not.toBe(user.id);
  });

  it('registers with email and password, logs in, and refuses a wrong password with 401 InvalidPassword', async () => {
    const app = realmApp(host.url, clientAppId);
    await app.emailPasswordAuth.registerUser({ email: 'ada@example.com', password: 'correct-horse' });
    const user = await app.logIn(Realm.Credentials.emailPassword('ada@example.com', 'correct-horse'));
    expect(user.profile.email).toBe('ada@example.com');
    const again = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.emailPassword('ada@example.com', 'correct-horse'));
    expect(again.id).toBe(user.id);
    expect(await failureOf(app.logIn(Realm.Credentials.emailPassword('ada@example.com', 'wrong-horse')))).toMatchObject({ statusCode: 401, errorCode: 'InvalidPassword' });
    expect(await failureOf(app.emailPasswordAuth.registerUser({ email: 'ada@example.com', password: 'another-one' }))).toMatchObject({ statusCode: 409, errorCode: 'AccountNameInUse' });
    expect(await failureOf(app.emailPasswordAuth.registerUser({ email: 'short@example.com', password: '123' }))).toMatchObject({ statusCode: 400, errorCode: 'InvalidParameter' });
  });

  it('resets a password with the emailed token, once', async () => {
    const app = realmApp(host.url, clientAppId);
    await app.emailPasswordAuth.registerUser({ email: 'reset@example.com', password: 'old-password' });
    await app.emailPasswordAuth.sendResetPasswordEmail({ email: 'reset@example.com' });
    const mail = await lastMail(host.dataDir, 'reset@example.com', 'reset');
    expect(mail?.link).toContain(`tokenId=${mail?.tokenId}`);
    await app.emailPasswordAuth.resetPassword({ token: mail!.token, tokenId: mail!.tokenId, password: 'new-password' });
    await app.logIn(Realm.Credentials.emailPassword('reset@example.com', 'new-password'));
    expect(await failureOf(app.logIn(Realm.Credentials.emailPassword('reset@example.com', 'old-password')))).toMatchObject({ errorCode: 'InvalidPassword' });
    expect(await failureOf(app.emailPasswordAuth.resetPassword({ token: mail!.token, tokenId: mail!.tokenId, password: 'third-password' }))).toMatchObject({ statusCode: 400, errorCode: 'UserpassTokenInvalid' });
    expect(await failureOf(app.emailPasswordAuth.sendResetPasswordEmail({ email: 'nobody@example.com' }))).toMatchObject({ statusCode: 404, errorCode: 'UserNotFound' });
  });

  it('creates, lists, disables, enables and deletes user API keys; a key logs in as its owner', async () => {
    const app = realmApp(host.url, clientAppId);
    await app.emailPasswordAuth.registerUser({ email: 'keys@example.com', password: 'key-owner' });
    const owner = await app.logIn(Realm.Credentials.emailPassword('keys@example.com', 'key-owner'));
    const created = await owner.apiKeys.create('laptop');
    expect(created).toMatchObject({ name: 'laptop', disabled: false });
    expect(String(created._id)).toMatch(/^[0-9a-f]{24}$/);
    expect(created.key).toMatch(/^[0-9a-f]{64}$/);
    const fetched = await owner.apiKeys.fetch(created._id);
    expect(fetched).toEqual({ _id: created._id, name: 'laptop', disabled: false });
    expect(await owner.apiKeys.fetchAll()).toHaveLength(1);
    expect(await failureOf(owner.apiKeys.create('laptop'))).toMatchObject({ statusCode: 409, errorCode: 'APIKeyAlreadyExists' });

    const viaKey = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.apiKey(created.key));
    expect(viaKey.id).toBe(owner.id);

    await owner.apiKeys.disable(created._id);
    expect((await owner.apiKeys.fetch(created._id)).disabled).toBe(true);
    expect(await failureOf(realmApp(host.url, clientAppId).logIn(Realm.Credentials.apiKey(created.key)))).toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
    await owner.apiKeys.enable(created._id);
    await realmApp(host.url, clientAppId).logIn(Realm.Credentials.apiKey(created.key));
    await owner.apiKeys.delete(created._id);
    expect(await owner.apiKeys.fetchAll()).toEqual([]);
    expect(await failureOf(owner.apiKeys.fetch(created._id))).toMatchObject({ statusCode: 404, errorCode: 'APIKeyNotFound' });
  });

  it('logs in with a custom JWT signed with the configured key, mapping metadata fields into the profile', async () => {
    const sign = (claims: Record<string, unknown>, secret = tokenSecret, audience = 'tessera-tests') =>
      new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('jwt-user-1').setAudience(audience).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(secret));
    const app = realmApp(host.url, clientAppId);
    const user = await app.logIn(Realm.Credentials.jwt(await sign({ email: 'jwt@example.com', profile: { nick: 'J' } })));
    expect(user.profile).toMatchObject({ email: 'jwt@example.com', name: 'J' });
    expect(user.identities).toEqual([expect.objectContaining({ id: 'jwt-user-1', providerType: 'custom-token' })]);
    const again = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.jwt(await sign({ email: 'jwt@example.com' })));
    expect(again.id).toBe(user.id);
    expect(await failureOf(app.logIn(Realm.Credentials.jwt(await sign({ email: 'x@example.com' }, 'the-wrong-secret-0123456789abcdef'))))).toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
    expect(await failureOf(app.logIn(Realm.Credentials.jwt(await sign({ email: 'x@example.com' }, tokenSecret, 'another-audience'))))).toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
    expect(await failureOf(app.logIn(Realm.Credentials.jwt(await sign({}))))).toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
  });

  it('logs in through a custom function (private, run as system) that returns the external id', async () => {
    const app = realmApp(host.url, clientAppId);
    const user = await app.logIn(Realm.Credentials.function({ username: 'grace' }));
    expect(user.identities).toEqual([expect.objectContaining({ id: 'ext-grace', providerType: 'custom-function' })]);
    const run = host.runs.filter((request) => request.functionName === 'authenticate').pop();
    expect(run).toMatchObject({ appId, caller: { type: 'system' }, args: [{ username: 'grace' }] });
    expect((await realmApp(host.url, clientAppId).logIn(Realm.Credentials.function({ username: 'grace' }))).id).toBe(user.id);
    expect(await failureOf(app.logIn(Realm.Credentials.function({ username: 'refuse-me' })))).toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
  });

  it('links an email/password identity to an anonymous user', async () => {
    const app = realmApp(host.url, clientAppId);
    await app.emailPasswordAuth.registerUser({ email: 'linked@example.com', password: 'link-me-up' });
    const user = await app.logIn(Realm.Credentials.anonymous(false));
    await user.linkCredentials(Realm.Credentials.emailPassword('linked@example.com', 'link-me-up'));
    await user.refreshProfile();
    expect(user.identities.map((identity) => identity.providerType).sort()).toEqual(['anon-user', 'local-userpass']);
    const viaPassword = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.emailPassword('linked@example.com', 'link-me-up'));
    expect(viaPassword.id).toBe(user.id);
  });

  it('refuses to link an identity that belongs to another user, and to link an anonymous identity', async () => {
    const app = realmApp(host.url, clientAppId);
    await app.emailPasswordAuth.registerUser({ email: 'owned@example.com', password: 'owned-one' });
    await app.logIn(Realm.Credentials.emailPassword('owned@example.com', 'owned-one'));
    const other = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    expect(await failureOf(other.linkCredentials(Realm.Credentials.emailPassword('owned@example.com', 'owned-one')))).toMatchObject({ statusCode: 409 });
    const person = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.function({ username: 'linker' }));
    expect(await failureOf(person.linkCredentials(Realm.Credentials.anonymous(false)))).toMatchObject({ statusCode: 400 });
  });

  it('refreshes an expired access token and retries the call', async () => {
    const app = realmApp(host.url, clientAppId);
    const user = await app.logIn(Realm.Credentials.anonymous(false));
    const expired = expiredCopy(user.accessToken!, appSigningKey(appId));
    user.accessToken = expired;
    const response = await fetch(`${host.url}/api/client/v2.0/auth/profile`, { headers: { authorization: `Bearer ${expired}` } });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ error: 'invalid session: access token expired', error_code: 'InvalidSession' });
    expect(await user.functions['echo'](1, 'two')).toEqual([1, 'two']);
    expect(user.accessToken).not.toBe(expired);
    expect(claimsOf(user.accessToken)['exp']).toBeGreaterThan(Date.now() / 1000);
  });

  it('logs out by revoking the refresh token; a second logout finds no refresh token', async () => {
    const app = realmApp(host.url, clientAppId);
    const user = await app.logIn(Realm.Credentials.anonymous(false));
    const { refreshToken, accessToken } = user;
    await user.logOut();
    expect(user.isLoggedIn).toBe(false);
    const again = await fetch(`${host.url}/api/client/v2.0/auth/session`, { method: 'DELETE', headers: { authorization: `Bearer ${refreshToken}` } });
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: string }).error).toContain('failed to find refresh token');
    const refresh = await fetch(`${host.url}/api/client/v2.0/auth/session`, { method: 'POST', headers: { authorization: `Bearer ${refreshToken}` } });
    expect(refresh.status).toBe(401);
    expect((await fetch(`${host.url}/api/client/v2.0/auth/profile`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(401);
  });

  it('refreshes with 201 and an empty JSON-typed body, as realm-core sends it', async () => {
    const user = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    const response = await fetch(`${host.url}/api/client/v2.0/auth/session`, { method: 'POST', body: '', headers: { authorization: `Bearer ${user.refreshToken}`, 'content-type': 'application/json;charset=utf-8' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(claimsOf(((await response.json()) as { access_token: string }).access_token)['sub']).toBe(user.id);
  });

  it('deletes a user: its tokens stop working and its email can register again', async () => {
    const app = realmApp(host.url, clientAppId);
    await app.emailPasswordAuth.registerUser({ email: 'gone@example.com', password: 'delete-me' });
    const user = await app.logIn(Realm.Credentials.emailPassword('gone@example.com', 'delete-me'));
    const { accessToken } = user;
    await app.deleteUser(user);
    expect((await fetch(`${host.url}/api/client/v2.0/auth/profile`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(401);
    expect(await failureOf(app.logIn(Realm.Credentials.emailPassword('gone@example.com', 'delete-me')))).toMatchObject({ errorCode: 'InvalidPassword' });
    await app.emailPasswordAuth.registerUser({ email: 'gone@example.com', password: 'back-again' });
  });

  it('logs in with a server API key as its server user, and refuses a disabled user at once', async () => {
    const store = new AppUserStore(host.dataSources.platform(), appId);
    const created = await store.createServerApiKey('backend');
    const app = realmApp(host.url, clientAppId);
    const server = await app.logIn(Realm.Credentials.apiKey(created!.secret));
    expect(server.id).toBe(created!.key.userId);
    const profile = (await (await fetch(`${host.url}/api/client/v2.0/auth/profile`, { headers: { authorization: `Bearer ${server.accessToken}` } })).json()) as { type: string };
    expect(profile.type).toBe('server');

    const person = await app.logIn(Realm.Credentials.function({ username: 'to-be-disabled' }));
    await store.setUserDisabled(person.id, true);
    expect((await fetch(`${host.url}/api/client/v2.0/auth/profile`, { headers: { authorization: `Bearer ${person.accessToken}` } })).status).toBe(401);
    expect(await failureOf(realmApp(host.url, clientAppId).logIn(Realm.Credentials.function({ username: 'to-be-disabled' })))).toMatchObject({ statusCode: 401, errorCode: 'UserDisabled' });
    await store.setUserDisabled(person.id, false);
    await realmApp(host.url, clientAppId).logIn(Realm.Credentials.function({ username: 'to-be-disabled' }));
    expect(await store.deleteServerApiKey(created!.key._id)).toBe(true);
    expect(await failureOf(realmApp(host.url, clientAppId).logIn(Realm.Credentials.apiKey(created!.secret)))).toMatchObject({ statusCode: 401 });
  });

  it('registers and drops push device tokens as realm-core does, for known services only', async () => {
    const user = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    const url = (service: string) => `${host.url}/api/client/v2.0/app/${clientAppId}/push/providers/${service}/registration`;
    const headers = { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json;charset=utf-8' };
    const put = await fetch(url('gcm'), { method: 'PUT', headers, body: JSON.stringify({ registrationToken: 'device-token' }) });
    expect(put.status).toBe(204);
    expect(put.headers.get('content-type')).toBeNull();
    expect((await fetch(url('gcm'), { method: 'DELETE', headers, body: '' })).status).toBe(204);
    const unknown = await fetch(url('nothing'), { method: 'PUT', headers, body: JSON.stringify({ registrationToken: 'x' }) });
    expect(unknown.status).toBe(404);
  });

  it('passes the caller to functions as the user with its identities', async () => {
    const user = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.function({ username: 'caller' }));
    const seen = await user.callFunction<{ id: string; identities: Array<{ provider_type: string }> }>('whoAmI');
    expect(seen.id).toBe(user.id);
    // The one caller identity, as context.user shows it (App Services spells the key provider_type there).
    expect(seen.identities).toEqual([{ id: 'ext-caller', provider_type: 'custom-function' }]);
  });
});
