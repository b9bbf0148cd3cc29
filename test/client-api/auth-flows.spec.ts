import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@tessera/testing';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startTestHost, type TestHost } from '../support/test-host';
import { claimsOf, failureOf, Realm, realmApp } from './realm-helpers';

// Confirmation and reset functions, custom user data, JWKS-verified custom tokens and disabled providers.
describe('client API account flows with realm-web', () => {
  let host: TestHost;
  let functionsApp: string;
  let customDataApp: { clientAppId: string; appId: string };
  let jwksServer: Server;
  let privateKey: CryptoKey;

  beforeAll(async () => {
    const keys = await generateKeyPair('RS256');
    privateKey = keys.privateKey as CryptoKey;
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwksServer = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((listening) => jwksServer.listen(0, '127.0.0.1', listening));
    const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;

    host = await startTestHost({
      services: ['graphql-gateway'],
      fakes: {
        functions: {
          // Confirms addresses of example.com at once, leaves example.org pending, refuses the rest.
          confirm: (args) => {
            const { username } = args[0] as { username: string };
            return { status: username.endsWith('@example.com') ? 'success' : username.endsWith('@example.org') ? 'pending' : 'fail' };
          },
          reset: (args) => {
            const [{ username }, question] = args as [{ username: string }, string | undefined];
            return { status: question === 'blue' ? 'success' : username.startsWith('pending') ? 'pending' : 'fail' };
          },
          whoAmI: (_args, request) => (request.caller.type === 'user' ? request.caller.user.custom_data ?? null : null),
        },
      },
    });
    ({ clientAppId: functionsApp } = await host.createApp('flows', (app) => {
      app.functions.push({ config: { name: 'confirm', private: true }, source: '' }, { config: { name: 'reset', private: true }, source: '' });
      app.authProviders.push(
        { name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: false, runConfirmationFunction: true, confirmationFunctionName: 'confirm', runResetFunction: true, resetFunctionName: 'reset' } },
        { name: 'custom-token', type: 'custom-token', config: { useJWKURI: true, jwkURI: jwksUrl, signingAlgorithm: 'RS256', audience: 'jwks-app' }, metadata_fields: [{ required: true, name: 'email' }] },
        { name: 'anon-user', type: 'anon-user', disabled: true },
      );
    }));
    customDataApp = await host.createApp('customdata', (app) => {
      app.functions.push({ config: { name: 'whoAmI' }, source: '' });
      app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
      app.services.push({ config: { id: 'svc1', name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'CustomDataCluster' } }, collectionRules: [], rules: [], webhooks: [] });
      app.settings.custom_user_data_config = { enabled: true, mongo_service_id: 'svc1', database_name: 'app', collection_name: 'profiles', user_id_field: 'userId' };
    });
  });

  afterAll(async () => {
    await host?.close();
    jwksServer?.close();
  });

  it('confirms through the confirmation function: success at once, pending until retried, fail refused', async () => {
    const app = realmApp(host.url, functionsApp);
    await app.emailPasswordAuth.registerUser({ email: 'now@example.com', password: 'password-1' });
    await app.logIn(Realm.Credentials.emailPassword('now@example.com', 'password-1'));

    await app.emailPasswordAuth.registerUser({ email: 'later@example.org', password: 'password-2' });
    expect(await failureOf(app.logIn(Realm.Credentials.emailPassword('later@example.org', 'password-2')))).toMatchObject({ errorCode: 'AuthError', error: 'confirmation required' });
    const pending = host.runs.filter((run) => run.functionName === 'confirm').pop();
    const { token, tokenId } = (pending?.args[0] ?? {}) as { token: string; tokenId: string };
    expect(pending).toMatchObject({ caller: { type: 'system' } });
    await app.emailPasswordAuth.confirmUser({ token, tokenId });
    await app.logIn(Realm.Credentials.emailPassword('later@example.org', 'password-2'));

    expect(await failureOf(app.emailPasswordAuth.registerUser({ email: 'never@example.net', password: 'password-3' }))).toMatchObject({ statusCode: 400 });
    expect(await failureOf(app.emailPasswordAuth.retryCustomConfirmation({ email: 'never@example.net' }))).toMatchObject({ statusCode: 404, errorCode: 'UserNotFound' });
    expect(await failureOf(app.emailPasswordAuth.retryCustomConfirmation({ email: 'now@example.com' }))).toMatchObject({ statusCode: 409, errorCode: 'UserAlreadyConfirmed' });
  });

  it('resets through the reset function with its extra arguments', async () => {
    const app = realmApp(host.url, functionsApp);
    await app.emailPasswordAuth.registerUser({ email: 'forgetful@example.com', password: 'original-1' });
    expect(await failureOf(app.emailPasswordAuth.callResetPasswordFunction({ email: 'forgetful@example.com', password: 'changed-1' }, 'red'))).toMatchObject({ statusCode: 400 });
    await app.emailPasswordAuth.callResetPasswordFunction({ email: 'forgetful@example.com', password: 'changed-1' }, 'blue');
    await app.logIn(Realm.Credentials.emailPassword('forgetful@example.com', 'changed-1'));
    const run = host.runs.filter((request) => request.functionName === 'reset').pop();
    expect(run?.args).toEqual([expect.objectContaining({ username: 'forgetful@example.com', password: 'changed-1' }), 'blue']);
  });

  it('leaves a pending reset to the token the function was given', async () => {
    const app = realmApp(host.url, functionsApp);
    await app.emailPasswordAuth.registerUser({ email: 'pending@example.com', password: 'original-2' });
    await app.emailPasswordAuth.callResetPasswordFunction({ email: 'pending@example.com', password: 'ignored-2' });
    await app.logIn(Realm.Credentials.emailPassword('pending@example.com', 'original-2'));
    const { token, tokenId } = host.runs.filter((request) => request.functionName === 'reset').pop()!.args[0] as { token: string; tokenId: string };
    await app.emailPasswordAuth.resetPassword({ token, tokenId, password: 'finally-2' });
    await app.logIn(Realm.Credentials.emailPassword('pending@example.com', 'finally-2'));
  });

  it('verifies custom tokens against the JWKS URL and requires the metadata fields', async () => {
    const sign = (claims: Record<string, unknown>, audience = 'jwks-app') => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject('jwks-user').setAudience(audience).setExpirationTime('5m').sign(privateKey);
    const app = realmApp(host.url, functionsApp);
    const user = await app.logIn(Realm.Credentials.jwt(await sign({ email: 'jwks@example.com' })));
    expect(user.profile.email).toBe('jwks@example.com');
    expect(await failureOf(app.logIn(Realm.Credentials.jwt(await sign({}))))).toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
    expect(await failureOf(app.logIn(Realm.Credentials.jwt(await sign({ email: 'x@example.com' }, 'other-app'))))).toMatchObject({ statusCode: 401, errorCode: 'AuthError' });
  });

  it('refuses logins with a disabled provider', async () => {
    expect(await failureOf(realmApp(host.url, functionsApp).logIn(Realm.Credentials.anonymous(false)))).toMatchObject({ statusCode: 404, errorCode: 'AuthProviderNotFound' });
  });

  it('reads custom user data into the access token, refreshCustomData and the function caller', async () => {
    const app = realmApp(host.url, customDataApp.clientAppId);
    const user = await app.logIn(Realm.Credentials.anonymous(false));
    expect(user.customData).toEqual({});
    expect(claimsOf(user.accessToken)['user_data']).toBeUndefined();
    await host.dataSources.forCluster('CustomDataCluster').db('app').collection('profiles').insertOne({ userId: user.id, favourite: 'tea', visits: 3 });
    expect(await user.refreshCustomData()).toMatchObject({ userId: user.id, favourite: 'tea', visits: 3 });
    expect(user.customData).toMatchObject({ favourite: 'tea' });
    expect(await user.callFunction('whoAmI')).toMatchObject({ favourite: 'tea', visits: 3 });
  });
});

// Token lifetimes come from the settings the host validated at boot (accessTokenTtlSeconds, refreshTokenTtlSeconds).
describe('client API token lifetimes', () => {
  let host: TestHost;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ services: ['graphql-gateway'], overrides: { accessTokenTtlSeconds: 2, refreshTokenTtlSeconds: 3600 }, fakes: { functions: { ping: () => 'pong' } } });
    ({ clientAppId } = await host.createApp('lifetimes', (app) => {
      app.functions.push({ config: { name: 'ping' }, source: '' });
      app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
    }));
  });

  afterAll(async () => {
    await host?.close();
  });

  it('issues tokens with the configured lifetimes and refreshes once the access token has expired', async () => {
    const user = await realmApp(host.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
    const access = claimsOf(user.accessToken);
    const refresh = claimsOf(user.refreshToken);
    expect((access['exp'] as number) - (access['iat'] as number)).toBe(2);
    expect((refresh['exp'] as number) - (refresh['iat'] as number)).toBe(3600);
    const first = user.accessToken;
    const expiredAt = (access['exp'] as number) * 1000;
    await eventually(() => expect(Date.now()).toBeGreaterThan(expiredAt + 50), { timeoutMs: 5_000 });
    expect(await user.callFunction('ping')).toBe('pong');
    expect(user.accessToken).not.toBe(first);
  });
});
