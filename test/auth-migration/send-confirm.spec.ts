import { type AppConfig, emptyApp } from '@tessera/app-config';
import { OutboxFileMailer } from '@tessera/graphql-gateway';
import * as Realm from 'realm-web';
import { AdminSession } from '../admin-api/admin-session';
import { failureOf, lastMail } from '../client-api/realm-helpers';
import { startTestHost, type TestHost } from '../support/test-host';

const ADMIN_PASSWORD = 'send-confirm-admin-password';
const PASSWORD = 'password-123';

/** Confirmation by email: the provider mails a link built on emailConfirmationUrl. */
function emailApp(): AppConfig {
  const app = emptyApp('by-email');
  app.authProviders.push({ name: 'local-userpass', type: 'local-userpass', config: { emailConfirmationUrl: 'https://app.example.com/confirm', resetPasswordUrl: 'https://app.example.com/reset' } });
  return app;
}

/** Confirmation by function: it records each call and decides `status`. */
function functionApp(status: 'pending' | 'success' | 'fail'): AppConfig {
  const app = emptyApp('by-function');
  app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'SendConfirm' } }, collectionRules: [], rules: [], webhooks: [] });
  app.functions.push({
    config: { name: 'confirmUser', private: true },
    source: `exports = async ({ username, token, tokenId }) => {
      await context.services.get('mongodb-atlas').db('audit').collection('confirmations').insertOne({ username, hasToken: typeof token === 'string' && typeof tokenId === 'string' });
      return { status: '${status}' };
    };`,
  });
  app.authProviders.push({ name: 'local-userpass', type: 'local-userpass', config: { runConfirmationFunction: true, confirmationFunctionName: 'confirmUser', resetPasswordUrl: 'https://app.example.com/reset' } });
  return app;
}

// Sending a pending user's confirmation again, from the client API (`confirm/send`, realm-web's
// resendConfirmationEmail) and the admin API (`.../user_registrations/by_email/{email}/send_confirm`): the
// flow the provider is configured with runs, a confirmation email or the confirmation function.
describe('sending the confirmation again (send_confirm)', () => {
  let host: TestHost;
  let admin: AdminSession;
  let byEmail: { appId: string; clientAppId: string };
  let byFunction: { appId: string; clientAppId: string };
  const realm = (clientAppId: string) => new Realm.App({ id: clientAppId, baseUrl: host.url });
  const sendConfirm = (appId: string, email: string, token?: string) => admin.request('POST', admin.app(appId, `/user_registrations/by_email/${encodeURIComponent(email)}/send_confirm`), undefined, token === undefined ? {} : { token });
  const mails = async (to: string) => (await OutboxFileMailer.read(host.dataDir)).filter((mail) => mail.to === to && mail.purpose === 'confirm');
  const confirmations = (username: string) => host.dataSources.forCluster('SendConfirm').db('audit').collection('confirmations').countDocuments({ username, hasToken: true });

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: ADMIN_PASSWORD } });
    admin = await AdminSession.login(host, 'admin', ADMIN_PASSWORD);
    byEmail = await host.createApp('by-email', emailApp(), { groupId: admin.groupId });
    byFunction = await host.createApp('by-function', functionApp('pending'), { groupId: admin.groupId });
  });

  afterAll(async () => {
    await host?.close();
  });

  it('mails a new confirmation link from the client API; its token confirms the user, who then logs in', async () => {
    await realm(byEmail.clientAppId).emailPasswordAuth.registerUser({ email: 'dora@example.com', password: PASSWORD });
    expect(await mails('dora@example.com')).toHaveLength(1);
    await realm(byEmail.clientAppId).emailPasswordAuth.resendConfirmationEmail({ email: 'dora@example.com' });
    expect(await mails('dora@example.com')).toHaveLength(2);
    const mail = (await lastMail(host.dataDir, 'dora@example.com', 'confirm'))!;
    expect(mail.link).toContain('https://app.example.com/confirm?token=');
    await realm(byEmail.clientAppId).emailPasswordAuth.confirmUser({ token: mail.token, tokenId: mail.tokenId });
    expect((await realm(byEmail.clientAppId).logIn(Realm.Credentials.emailPassword('dora@example.com', PASSWORD))).id).toMatch(/^[0-9a-f]{24}$/);
    // Confirmed now: sending again is refused, as for an address nobody registered.
    expect(await failureOf(realm(byEmail.clientAppId).emailPasswordAuth.resendConfirmationEmail({ email: 'dora@example.com' }))).toMatchObject({ statusCode: 409, errorCode: 'UserAlreadyConfirmed' });
    expect(await failureOf(realm(byEmail.clientAppId).emailPasswordAuth.resendConfirmationEmail({ email: 'nobody@example.com' }))).toMatchObject({ statusCode: 404, errorCode: 'UserNotFound' });
  });

  it('mails a new confirmation link from the admin API (200); its token confirms the user', async () => {
    await realm(byEmail.clientAppId).emailPasswordAuth.registerUser({ email: 'eli@example.com', password: PASSWORD });
    const response = await sendConfirm(byEmail.appId, 'eli@example.com');
    expect(response.status).toBe(200);
    expect(await mails('eli@example.com')).toHaveLength(2);
    const mail = (await lastMail(host.dataDir, 'eli@example.com', 'confirm'))!;
    await realm(byEmail.clientAppId).emailPasswordAuth.confirmUser({ token: mail.token, tokenId: mail.tokenId });
    expect((await realm(byEmail.clientAppId).logIn(Realm.Credentials.emailPassword('eli@example.com', PASSWORD))).id).toMatch(/^[0-9a-f]{24}$/);
  });

  it('refuses an unknown address (404), a confirmed user (400), no session (401), without sending anything', async () => {
    const before = (await OutboxFileMailer.read(host.dataDir)).length;
    const unknown = await sendConfirm(byEmail.appId, 'nobody@example.com');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error_code: expect.any(String), error: expect.stringContaining('nobody@example.com') });
    const confirmed = await sendConfirm(byEmail.appId, 'eli@example.com');
    expect(confirmed.status).toBe(400);
    expect(confirmed.body).toMatchObject({ error: expect.stringContaining('already confirmed') });
    expect((await sendConfirm(byEmail.appId, 'eli@example.com', 'not-a-token')).status).toBe(401);
    const anonymous = await fetch(`${host.url}/api/admin/v3.0${admin.app(byEmail.appId, '/user_registrations/by_email/eli%40example.com/send_confirm')}`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    expect((await OutboxFileMailer.read(host.dataDir)).length).toBe(before);
  });

  it('runs the confirmation function instead where the provider uses one, from either API', async () => {
    const app = realm(byFunction.clientAppId);
    await app.emailPasswordAuth.registerUser({ email: 'fay@example.com', password: PASSWORD });
    await app.emailPasswordAuth.registerUser({ email: 'gus@example.com', password: PASSWORD });
    expect(await confirmations('fay@example.com')).toBe(1);
    await app.emailPasswordAuth.resendConfirmationEmail({ email: 'fay@example.com' });
    expect(await confirmations('fay@example.com')).toBe(2);
    expect((await sendConfirm(byFunction.appId, 'fay@example.com')).status).toBe(200);
    expect(await confirmations('fay@example.com')).toBe(3);
    // No email for a provider that confirms by function; still pending.
    expect(await mails('fay@example.com')).toEqual([]);
    expect(await failureOf(app.logIn(Realm.Credentials.emailPassword('fay@example.com', PASSWORD)))).toMatchObject({ statusCode: 401 });

    // The function now says success: the admin's send_confirm confirms the user.
    await host.redeploy(byFunction.appId, functionApp('success'));
    expect((await sendConfirm(byFunction.appId, 'fay@example.com')).status).toBe(200);
    expect((await app.logIn(Realm.Credentials.emailPassword('fay@example.com', PASSWORD))).id).toMatch(/^[0-9a-f]{24}$/);

    // A function that says fail: refused with its reason (400), the registration stays pending.
    await host.redeploy(byFunction.appId, functionApp('fail'));
    const failed = await sendConfirm(byFunction.appId, 'gus@example.com');
    expect(failed.status).toBe(400);
    expect(failed.body).toMatchObject({ error: expect.stringContaining('fail') });
    expect(await failureOf(app.logIn(Realm.Credentials.emailPassword('gus@example.com', PASSWORD)))).toMatchObject({ statusCode: 401 });
  });
});
