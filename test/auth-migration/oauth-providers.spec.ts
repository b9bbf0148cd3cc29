import * as Realm from 'realm-web';
import { startTestHost, type TestHost } from '../support/test-host';
import { OAuthStandIn } from './oauth-stand-in';

const GOOGLE_CLIENT = 'google-client-id.apps.googleusercontent.com';
const APPLE_CLIENT = 'com.example.tessera';
const GOOGLE_ISS = 'https://accounts.google.com';
const APPLE_ISS = 'https://appleid.apple.com';
const CLIENT_REDIRECT = 'http://localhost:3000/callback';
/** realm-web's transport option (its own fetch type). */
type RealmFetch = NonNullable<Realm.AppConfiguration['fetch']>;

// oauth2-google, oauth2-apple and oauth2-facebook logins through the real realm-web client, against a local
// stand-in for the providers (a real HTTP server publishing key sets and answering the Graph API).
describe('OAuth 2.0 providers', () => {
  const provider = new OAuthStandIn();
  let host: TestHost;
  let clientAppId: string;
  const realm = (): Realm.App => new Realm.App({ id: clientAppId, baseUrl: host.url });
  const login = (providerName: string, body: Record<string, unknown>, query = '', headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/${providerName}/login${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  beforeAll(async () => {
    await provider.start();
    host = await startTestHost({ services: ['graphql-gateway'], settings: provider.settings() });
    let appId: string;
    ({ clientAppId, appId } = await host.createApp('oauthapp', (app) => {
      app.authProviders.push(
        { name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } },
        {
          name: 'oauth2-google',
          type: 'oauth2-google',
          config: { clientId: GOOGLE_CLIENT, openId: true },
          secret_config: { clientSecret: 'googleSecret' },
          metadata_fields: [
            { required: true, name: 'email' },
            { required: false, name: 'name' },
            { required: false, name: 'first_name' },
          ],
          redirect_uris: [CLIENT_REDIRECT],
        },
        { name: 'oauth2-apple', type: 'oauth2-apple', config: { clientId: APPLE_CLIENT }, secret_config: { clientSecret: 'appleSecret' }, redirect_uris: [CLIENT_REDIRECT] },
        {
          name: 'oauth2-facebook',
          type: 'oauth2-facebook',
          config: { clientId: 'facebook-app-id' },
          secret_config: { clientSecret: 'facebookSecret' },
          redirect_uris: [CLIENT_REDIRECT],
          metadata_fields: [
            { required: false, name: 'name' },
            { required: false, name: 'email' },
          ],
        },
      );
    }));
    await host.secrets.create(appId, 'googleSecret', 'google-client-secret');
    await host.secrets.create(appId, 'appleSecret', 'apple-client-secret');
    await host.secrets.create(appId, 'facebookSecret', 'facebook-client-secret');
  });

  afterAll(async () => {
    await host?.close();
    await provider.stop();
  });

  const googleToken = (claims: Record<string, unknown> = {}, options: Parameters<OAuthStandIn['idToken']>[1] = {}): string =>
    provider.idToken({ iss: GOOGLE_ISS, aud: GOOGLE_CLIENT, sub: '1100220033', email: 'grace@example.com', email_verified: true, name: 'Grace Hopper', given_name: 'Grace', family_name: 'Hopper', ...claims }, options);

  it('logs in with a Google id token through realm-web, copying metadata_fields into the user data', async () => {
    const user = await realm().logIn(Realm.Credentials.google({ idToken: googleToken() }));
    expect(user.providerType).toBe('oauth2-google');
    expect(user.profile).toMatchObject({ email: 'grace@example.com', name: 'Grace Hopper', firstName: 'Grace' });
    const profile = (await (await fetch(`${host.url}/api/client/v2.0/auth/profile`, { headers: { authorization: `Bearer ${user.accessToken}` } })).json()) as { identities: Array<Record<string, unknown>>; data: Record<string, unknown> };
    expect(profile.identities).toEqual([{ id: '1100220033', provider_type: 'oauth2-google', provider_id: expect.any(String), provider_data: { email: 'grace@example.com', name: 'Grace Hopper', first_name: 'Grace' } }]);
    expect(profile.data).toEqual({ email: 'grace@example.com', name: 'Grace Hopper', first_name: 'Grace' });
    // The same subject is the same user; a later token's changed metadata is copied again.
    const again = await realm().logIn(Realm.Credentials.google({ idToken: googleToken({ name: 'Rear Admiral Hopper' }) }));
    expect(again.id).toBe(user.id);
    expect(again.profile.name).toBe('Rear Admiral Hopper');
    // Another subject is another user.
    const other = await realm().logIn(Realm.Credentials.google({ idToken: googleToken({ sub: '99887766', email: 'ada@example.com' }) }));
    expect(other.id).not.toBe(user.id);
    // The key set was fetched once and cached.
    expect(provider.hits.get('/google/certs')).toBe(1);
  });

  it('logs in with a Google server auth code exchanged at the token endpoint with the client secret', async () => {
    provider.googleCodes.set('4/auth-code-1', googleToken({ sub: 'code-user-1', email: 'code@example.com' }));
    // realm-web sends `{ authCode }` as is.
    const user = await realm().logIn(Realm.Credentials.google({ authCode: '4/auth-code-1' }));
    expect(user.profile.email).toBe('code@example.com');
    expect(user.identities).toEqual([{ id: 'code-user-1', providerType: 'oauth2-google' }]);
    // A code is single-use at the provider: replaying it is refused.
    const replay = await login('oauth2-google', { authCode: '4/auth-code-1' });
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ error_code: 'AuthError', error: expect.stringContaining('invalid_grant') });
  });

  it('logs in with an Apple id token through realm-web', async () => {
    const token = provider.idToken({ iss: APPLE_ISS, aud: APPLE_CLIENT, sub: '001234.abcdef.0042', email: 'tim@privaterelay.appleid.com' }, { key: provider.keys[0] });
    const user = await realm().logIn(Realm.Credentials.apple(token));
    expect(user.providerType).toBe('oauth2-apple');
    expect(user.identities).toEqual([{ id: '001234.abcdef.0042', providerType: 'oauth2-apple' }]);
    const again = await realm().logIn(Realm.Credentials.apple(provider.idToken({ iss: APPLE_ISS, aud: APPLE_CLIENT, sub: '001234.abcdef.0042' })));
    expect(again.id).toBe(user.id);
  });

  it('logs in with a Facebook access token checked with the Graph API, reading metadata from /me', async () => {
    provider.facebookTokens.set('EAAB-valid', { appId: 'facebook-app-id', userId: '10158', valid: true, profile: { name: 'Margaret Hamilton', email: 'margaret@example.com', birthday: '08/17/1936' } });
    const user = await realm().logIn(Realm.Credentials.facebook('EAAB-valid'));
    expect(user.providerType).toBe('oauth2-facebook');
    expect(user.profile).toMatchObject({ name: 'Margaret Hamilton', email: 'margaret@example.com' });
    expect(user.profile).not.toHaveProperty('birthday');
    provider.facebookTokens.set('EAAB-other-app', { appId: 'someone-elses-app', userId: '10158', valid: true, profile: {} });
    provider.facebookTokens.set('EAAB-expired', { appId: 'facebook-app-id', userId: '10158', valid: true, expiresAt: Math.floor(Date.now() / 1000) - 60, profile: {} });
    for (const [token, message] of [
      ['EAAB-other-app', 'issued to another app'],
      ['EAAB-expired', 'expired'],
      ['EAAB-unknown', 'invalid Facebook access token'],
    ] as const) {
      const response = await login('oauth2-facebook', { accessToken: token });
      expect(response.status, token).toBe(401);
      expect(await response.json()).toMatchObject({ error_code: 'AuthError', error: expect.stringContaining(message) });
    }
  });

  it.each([
    ['a wrong audience', () => googleToken({ aud: 'someone-elses-client' }), /aud/],
    ['a wrong issuer', () => googleToken({ iss: 'https://evil.example.com' }), /iss/],
    ['a signature by a key the provider does not publish', () => googleToken({}, { key: provider.foreignKey, header: { kid: provider.keys[1].kid } }), /signature/],
    ['a payload changed after signing', () => forge(googleToken(), { sub: '1100220033', email: 'mallory@example.com' }), /signature/],
    ['an expired token', () => googleToken({ exp: Math.floor(Date.now() / 1000) - 120 }), /exp/],
    ['a token not valid yet', () => googleToken({ nbf: Math.floor(Date.now() / 1000) + 3600 }), /nbf/],
    ['an unsigned token', () => unsigned(googleToken()), /alg|signature|JWS/i],
    ['an Apple token at the Google provider', () => provider.idToken({ iss: APPLE_ISS, aud: GOOGLE_CLIENT, sub: '1100220033' }), /iss/],
    ['a token without the required email', () => googleToken({ email: undefined }), /email/],
  ])('refuses %s with 401 AuthError', async (_what, token, detail) => {
    const response = await login('oauth2-google', { id_token: token() });
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: string; error_code: string };
    expect(body.error_code).toBe('AuthError');
    expect(body.error).toMatch(detail);
    // realm-web surfaces the same refusal.
    await expect(realm().logIn(Realm.Credentials.google({ idToken: token() }))).rejects.toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
    // A success clears this address's failure count (the next case starts afresh).
    expect((await login('oauth2-google', { id_token: googleToken() })).status).toBe(200);
  });

  it('refuses an Apple token for another client id and a missing id token', async () => {
    const response = await login('oauth2-apple', { id_token: provider.idToken({ iss: APPLE_ISS, aud: 'com.other.app', sub: 'x' }) });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error_code: 'AuthError' });
    const missing = await login('oauth2-apple', {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error_code: 'InvalidParameter' });
  });

  it('links a Google identity to a signed-in user with ?link=true, and refuses one owned by another user', async () => {
    const app = realm();
    await app.emailPasswordAuth.registerUser({ email: 'linker@example.com', password: 'linker-password' });
    const user = await app.logIn(Realm.Credentials.emailPassword('linker@example.com', 'linker-password'));
    await user.linkCredentials(Realm.Credentials.google({ idToken: googleToken({ sub: 'link-sub-1', email: 'linker@example.com' }) }));
    expect(user.identities.map((identity) => identity.providerType).sort()).toEqual(['local-userpass', 'oauth2-google']);
    const viaGoogle = await realm().logIn(Realm.Credentials.google({ idToken: googleToken({ sub: 'link-sub-1', email: 'linker@example.com' }) }));
    expect(viaGoogle.id).toBe(user.id);
    // Grace's subject already belongs to Grace's user.
    const refused = await login('oauth2-google', { id_token: googleToken() }, '?link=true', { authorization: `Bearer ${user.accessToken}` });
    expect(refused.status).toBe(409);
    // Linking needs a valid access token.
    const anonymous = await login('oauth2-google', { id_token: googleToken({ sub: 'link-sub-2' }) }, '?link=true');
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error_code: 'InvalidSession' });
  });

  describe('the redirect flow realm-web runs in a browser', () => {
    const environment = Realm.getEnvironment();
    /** The browser's cookies for Tessera (realm-web's own requests set them too, as in a browser with credentials). */
    const jar = new Map<string, string>();
    const keep = (response: Response): void => {
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const [name, ...value] = pair.split('=');
        if (value.join('=') === '') jar.delete(name);
        else jar.set(name, value.join('='));
      }
    };
    const cookieHeader = (): Record<string, string> => (jar.size > 0 ? { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') } : {});
    const browserFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const response = await fetch(input, init);
      keep(response);
      return response;
    };
    // The browser window realm-web opens: it follows the redirects (the provider signs the user in at once),
    // submits a provider's form post (Apple), and, on the client's redirect page, stores the hash's result as
    // realm-web's handleAuthRedirect() does.
    const browse = async (start: string, cookies = true): Promise<void> => {
      let url = start;
      let init: RequestInit = {};
      for (let hop = 0; hop < 6; hop++) {
        const toTessera = url.startsWith(host.url);
        const response = await fetch(url, { redirect: 'manual', ...init, headers: { ...(init.headers as Record<string, string> | undefined), ...(toTessera && cookies ? cookieHeader() : {}) } });
        if (toTessera) keep(response);
        init = {};
        const location = response.headers.get('location');
        if (!location && response.status === 200 && (response.headers.get('content-type') ?? '').startsWith('text/html')) {
          const page = await response.text();
          const action = /<form method="POST" action="([^"]+)"/.exec(page)?.[1] ?? '';
          const fields = [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, name, value]) => [name, value.replace(/&quot;/g, '"').replace(/&amp;/g, '&')]);
          url = action;
          init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() };
          continue;
        }
        if (!location) throw new Error(`no redirect from ${url}: ${response.status} ${await response.text()}`);
        if (location.startsWith(`${CLIENT_REDIRECT}#`)) {
          const hash = Object.fromEntries(location.split('#')[1].split('&').map((pair) => pair.split('=')).map(([key, value]) => [key, decodeURIComponent(value)]));
          const result = { appId: hash['_baas_client_app_id'], userAuth: hash['_baas_ua'], state: hash['_baas_state'], error: hash['_baas_error'] };
          lastError = result.error;
          environment.defaultStorage.prefix('oauth2').prefix(`state(${hash['_baas_state']})`).set('result', JSON.stringify(result));
          return;
        }
        url = new URL(location, url).toString();
      }
    };
    /** The `_baas_error` of the last redirect (realm-web only reports that it got no tokens). */
    let lastError: string | undefined;
    /** Opens realm-web's windows in the browser above; `cookies: false` is another browser (no cookies). */
    let withCookies = true;
    const browserApp = (): Realm.App => new Realm.App({ id: clientAppId, baseUrl: host.url, fetch: browserFetch as unknown as RealmFetch });

    beforeAll(() => Realm.setEnvironment({ ...environment, openWindow: (url: string) => (void browse(url, withCookies), null) }));
    afterAll(() => Realm.setEnvironment(environment));

    it('logs in with Google and Facebook through the provider\'s sign-in page and Tessera\'s callback', async () => {
      provider.signIn.google = googleToken({ sub: 'redirect-sub', email: 'redirect@example.com', name: 'Redirected' });
      const user = await realm().logIn(Realm.Credentials.google({ redirectUrl: CLIENT_REDIRECT }));
      expect(user.identities).toEqual([{ id: 'redirect-sub', providerType: 'oauth2-google' }]);
      expect(user.profile).toMatchObject({ email: 'redirect@example.com', name: 'Redirected' });
      // The same subject through the id-token flow is the same user.
      expect((await realm().logIn(Realm.Credentials.google({ idToken: googleToken({ sub: 'redirect-sub', email: 'redirect@example.com' }) }))).id).toBe(user.id);
      provider.facebookTokens.set('EAAB-redirected', { appId: 'facebook-app-id', userId: '20011', valid: true, profile: { name: 'Via Redirect' } });
      provider.signIn.facebook = 'EAAB-redirected';
      const facebook = await realm().logIn(Realm.Credentials.facebook(CLIENT_REDIRECT));
      expect(facebook.identities).toEqual([{ id: '20011', providerType: 'oauth2-facebook' }]);
      expect(facebook.profile.name).toBe('Via Redirect');
    });

    it('refuses a redirect URL the provider does not list, a forged state, and reports a denied sign-in in the hash', async () => {
      const login = (query: string) => fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/oauth2-google/login?${query}`, { redirect: 'manual' });
      const foreign = await login(`redirect=${encodeURIComponent('https://evil.example.com/steal')}&state=s1`);
      expect(foreign.status).toBe(400);
      expect(await foreign.json()).toMatchObject({ error_code: 'InvalidParameter' });
      const started = await login(`redirect=${encodeURIComponent(CLIENT_REDIRECT)}&state=s2`);
      expect(started.status).toBe(302);
      const signedState = new URL(started.headers.get('location')!).searchParams.get('state')!;
      const forged = forge(signedState, { redirect: 'https://evil.example.com/steal' });
      const callback = await fetch(`${host.url}/api/client/v2.0/auth/callback?code=x&state=${encodeURIComponent(forged)}`, { redirect: 'manual' });
      expect(callback.status).toBe(400);
      expect(callback.headers.get('location')).toBeNull();
      // The provider denies the sign-in: the client's page gets _baas_error with its state.
      const denied = await fetch(`${host.url}/api/client/v2.0/auth/callback?error=access_denied&state=${encodeURIComponent(signedState)}`, { redirect: 'manual' });
      expect(denied.status).toBe(302);
      expect(denied.headers.get('location')).toMatch(new RegExp(`^${CLIENT_REDIRECT}#_baas_error=.*access_denied.*&_baas_state=s2$`));
      // A code the provider never issued.
      const unknownCode = await fetch(`${host.url}/api/client/v2.0/auth/callback?code=made-up&state=${encodeURIComponent(signedState)}`, { redirect: 'manual' });
      expect(unknownCode.headers.get('location')).toMatch(/#_baas_error=.*invalid_grant/);
      // Apple's sign-in too only returns to a listed redirect URL.
      const apple = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/oauth2-apple/login?redirect=${encodeURIComponent('https://evil.example.com/steal')}&state=s3`, { redirect: 'manual' });
      expect(apple.status).toBe(400);
    });

    it('logs in with Apple through its sign-in page, which posts its answer to the callback as a form', async () => {
      const appleToken = provider.idToken({ iss: APPLE_ISS, aud: APPLE_CLIENT, sub: '000123.apple-redirect', email: 'tim@example.com' });
      provider.signIn.apple = appleToken;
      const user = await realm().logIn(Realm.Credentials.apple(CLIENT_REDIRECT));
      expect(user.identities).toEqual([{ id: '000123.apple-redirect', providerType: 'oauth2-apple' }]);
      // The same subject through the id-token flow is the same user.
      expect((await realm().logIn(Realm.Credentials.apple(provider.idToken({ iss: APPLE_ISS, aud: APPLE_CLIENT, sub: '000123.apple-redirect' })))).id).toBe(user.id);
      // A code exchanged once is spent; a forged form (a made-up code) ends in the error hash.
      const started = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/oauth2-apple/login?redirect=${encodeURIComponent(CLIENT_REDIRECT)}&state=s4`, { redirect: 'manual' });
      const target = new URL(started.headers.get('location')!);
      expect(target.searchParams.get('response_mode')).toBe('form_post');
      const posted = await fetch(`${host.url}/api/client/v2.0/auth/callback`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ code: 'made-up', state: target.searchParams.get('state')! }).toString() });
      expect(posted.status).toBe(302);
      expect(posted.headers.get('location')).toMatch(/#_baas_error=.*invalid_grant.*&_baas_state=s4$/);
    });

    it('links a Google identity to a logged-in user through the redirect flow (linkCredentials)', async () => {
      const app = browserApp();
      await app.emailPasswordAuth.registerUser({ email: 'redirect-linker@example.com', password: 'password-123' });
      const user = await app.logIn(Realm.Credentials.emailPassword('redirect-linker@example.com', 'password-123'));
      provider.signIn.google = googleToken({ sub: 'linked-by-redirect', email: 'redirect-linker@example.com' });
      withCookies = true;
      await user.linkCredentials(Realm.Credentials.google({ redirectUrl: CLIENT_REDIRECT }));
      expect(user.identities.map((identity) => identity.providerType).sort()).toEqual(['local-userpass', 'oauth2-google']);
      // The linked identity now logs in as that user; the user's refresh token still works.
      expect((await realm().logIn(Realm.Credentials.google({ idToken: googleToken({ sub: 'linked-by-redirect', email: 'redirect-linker@example.com' }) }))).id).toBe(user.id);
      await user.refreshAccessToken();
      expect(user.isLoggedIn).toBe(true);
    });

    it('refuses a link finished in another browser, one without a token, and an identity another user owns', async () => {
      const app = browserApp();
      await app.emailPasswordAuth.registerUser({ email: 'victim@example.com', password: 'password-123' });
      const victim = await app.logIn(Realm.Credentials.emailPassword('victim@example.com', 'password-123'));
      // The provider page reaches another browser (no cookie): nothing is linked.
      provider.signIn.google = googleToken({ sub: 'attacker-sub', email: 'attacker@example.com' });
      withCookies = false;
      try {
        await expect(victim.linkCredentials(Realm.Credentials.google({ redirectUrl: CLIENT_REDIRECT }))).rejects.toThrow(/authInfo/);
        expect(lastError).toMatch(/browser that started it/);
      } finally {
        withCookies = true;
      }
      await victim.refreshProfile();
      expect(victim.identities.map((identity) => identity.providerType)).toEqual(['local-userpass']);
      // Without the user's access token, linking does not start.
      const anonymous = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/oauth2-google/login?link=true&providerRedirectHeader=true&redirect=${encodeURIComponent(CLIENT_REDIRECT)}&state=s5`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ error_code: 'InvalidSession' });
      // An identity that already logs in as someone else is not moved.
      provider.signIn.google = googleToken({ sub: 'redirect-sub', email: 'redirect@example.com' });
      await expect(victim.linkCredentials(Realm.Credentials.google({ redirectUrl: CLIENT_REDIRECT }))).rejects.toThrow(/authInfo/);
      expect(lastError).toMatch(/different user/);
      await victim.refreshProfile();
      expect(victim.identities.map((identity) => identity.providerType)).toEqual(['local-userpass']);
      // A state whose linking user was changed is refused before any redirect.
      const started = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/oauth2-google/login?link=true&providerRedirectHeader=true&redirect=${encodeURIComponent(CLIENT_REDIRECT)}&state=s6`, { headers: { authorization: `Bearer ${victim.accessToken}` } });
      expect(started.status).toBe(200);
      const state = new URL(started.headers.get('x-baas-location')!).searchParams.get('state')!;
      const forged = await fetch(`${host.url}/api/client/v2.0/auth/callback?code=x&state=${encodeURIComponent(forge(state, { link: { user: 'someone-else', session: 'x', device: 'x', nonce: 'x' } }))}`, { redirect: 'manual' });
      expect(forged.status).toBe(400);
    });
  });

  it('throttles a flood of forged tokens from one address with 429, valid tokens included', async () => {
    // Earlier cases' failures from this address may already count: ten attempts reach the limit either way.
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      statuses.push((await login('oauth2-apple', { id_token: provider.idToken({ iss: APPLE_ISS, aud: APPLE_CLIENT, sub: 'x' }, { key: provider.foreignKey }) })).status);
    }
    expect(statuses[0]).toBe(401);
    expect(new Set(statuses)).toEqual(new Set(statuses.includes(429) ? [401, 429] : [401]));
    const valid = await login('oauth2-apple', { id_token: provider.idToken({ iss: APPLE_ISS, aud: APPLE_CLIENT, sub: 'x' }) });
    expect(valid.status).toBe(429);
    expect(await valid.json()).toMatchObject({ error_code: 'TooManyRequests' });
  });
});

/** The token with its payload replaced and its original signature kept. */
function forge(token: string, claims: Record<string, unknown>): string {
  const [header, payload, signature] = token.split('.');
  const original = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  return `${header}.${Buffer.from(JSON.stringify({ ...original, ...claims })).toString('base64url')}.${signature}`;
}

/** The token re-headed as `alg: none` with no signature. */
function unsigned(token: string): string {
  const [, payload] = token.split('.');
  return `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
}
