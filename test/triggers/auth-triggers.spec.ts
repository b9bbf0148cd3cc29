import { emptyApp, type AppConfig } from '@tessera/app-config';
import { AppRegistry, DeploymentStore, LogStore } from '@tessera/platform';
import { deployTestApp, eventually } from '@tessera/testing';
import * as Realm from 'realm-web';
// The real process host (every service in one process): realm-web logs in through the real HTTP server,
// the client API emits the auth event, and the function runtime runs the triggers in the sandbox.
import { AdminSession } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';

const password = 'auth-triggers-password';

// Records the auth event it received, one document per run.
const recordAuthEvent = `exports = async function (authEvent) {
  await context.services.get('mongodb-atlas').db('audit').collection('auth_events').insertOne({
    operationType: authEvent.operationType,
    providers: authEvent.providers,
    userId: authEvent.user.id,
    userType: authEvent.user.type,
    identities: authEvent.user.identities.map((identity) => identity.provider_type),
    email: authEvent.user.data.email === undefined ? null : authEvent.user.data.email,
    timeIsDate: authEvent.time instanceof Date,
    runAs: context.user.type,
  });
};`;

const failOnCreate = `exports = function () { throw new Error('the CREATE trigger failed'); };`;

// The custom user data's user creation function: writes the user's custom data document.
const onUserCreation = `exports = async function (user) {
  await context.services.get('mongodb-atlas').db('audit').collection('user_data').insertOne({ user_id: user.id, plan: 'free', providers: user.identities.map((identity) => identity.provider_type) });
};`;

function authApp(app: AppConfig): void {
  app.authProviders.push(
    { name: 'anon-user', type: 'anon-user' },
    { name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } },
    { name: 'api-key', type: 'api-key' },
  );
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'AuthCluster' } },
    defaultRule: { roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] },
    collectionRules: [],
    rules: [],
    webhooks: [],
  });
  app.settings.custom_user_data_config = { enabled: true, mongo_service_id: 'mongodb-atlas', database_name: 'audit', collection_name: 'user_data', user_id_field: 'user_id', on_user_creation_function_name: 'onUserCreation' };
  app.functions.push(
    { config: { name: 'recordAuthEvent', private: true }, source: recordAuthEvent },
    { config: { name: 'failOnCreate', private: true }, source: failOnCreate },
    { config: { name: 'onUserCreation', private: true }, source: onUserCreation },
  );
  const auth = (name: string, operation: string, providers: string[], functionName = 'recordAuthEvent', disabled = false) => ({ name, type: 'AUTHENTICATION', function_name: functionName, config: { operation_type: operation, providers }, disabled });
  app.triggers.push(
    auth('onCreate', 'CREATE', ['anon-user', 'local-userpass', 'api-key']),
    auth('onLogin', 'LOGIN', ['local-userpass', 'api-key']),
    auth('onDelete', 'DELETE', []),
    auth('createFails', 'CREATE', ['anon-user', 'local-userpass']),
    auth('switchedOff', 'LOGIN', ['anon-user'], 'recordAuthEvent', true),
  );
  app.triggers.find((trigger) => trigger.name === 'createFails')!.function_name = 'failOnCreate';
}

describe('authentication triggers (standalone)', () => {
  let host: TestHost;
  let clientAppId: string;
  let appId: string;
  let realm: Realm.App;
  let reader: Realm.User;
  let admin: AdminSession;

  const auditEvents = () => reader.mongoClient('mongodb-atlas').db('audit').collection('auth_events');
  const events = (userId: string) => auditEvents().find({ userId }, { sort: { _id: 1 } });

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    admin = await AdminSession.login(host, 'admin', password);
    // In the administrator's group, so the admin API reaches it.
    ({ appId, clientAppId } = await deployTestApp({ apps: host.nest.get(AppRegistry), deployments: host.nest.get(DeploymentStore) }, 'auth-triggers', authApp, { groupId: admin.groupId }));
    const config = emptyApp('auth-triggers');
    authApp(config);
    await host.redeploy(appId, config);
    realm = new Realm.App({ id: clientAppId, baseUrl: host.url });
    // Reads the audit collection (its own CREATE is recorded too, before the tests start).
    reader = await new Realm.App({ id: clientAppId, baseUrl: host.url }).logIn(Realm.Credentials.anonymous(false));
    await eventually(async () => expect(await events(reader.id)).toHaveLength(1));
  });

  afterAll(async () => {
    await host?.close();
  });

  it('fires CREATE for a new anonymous user, once, with the auth event; a failing CREATE trigger leaves the user', async () => {
    const user = await realm.logIn(Realm.Credentials.anonymous(false));
    const [created] = await eventually(async () => {
      const found = await events(user.id);
      expect(found.filter((event) => event['operationType'] === 'CREATE')).toHaveLength(1);
      return found;
    });
    expect(created).toMatchObject({ operationType: 'CREATE', providers: ['anon-user'], userId: user.id, userType: 'normal', identities: ['anon-user'], timeIsDate: true, runAs: 'system' });
    // The failing trigger ran (its run is in the logs, failed) and the user is still there and usable.
    await eventually(async () => {
      const logs = await host.nest.get(LogStore).list(appId, { types: ['AUTH_TRIGGER'] });
      expect(logs.some((entry) => entry.trigger_name === 'createFails' && typeof entry['error'] === 'string' && String(entry['error']).includes('the CREATE trigger failed'))).toBe(true);
    });
    await user.refreshProfile();
    expect(user.profile).toBeDefined();
    // The disabled LOGIN trigger for anonymous users never fired, and onLogin does not listen to anon-user.
    expect((await events(user.id)).filter((event) => event['operationType'] === 'LOGIN')).toEqual([]);
  });

  it('runs the user creation function with the new user: its custom user data is there on the next refresh', async () => {
    const user = await realm.logIn(Realm.Credentials.anonymous(false));
    await eventually(async () => {
      await user.refreshCustomData();
      expect(user.customData).toMatchObject({ user_id: user.id, plan: 'free', providers: ['anon-user'] });
    });
  });

  it('fires CREATE on the first email/password login and LOGIN on every login', async () => {
    await realm.emailPasswordAuth.registerUser({ email: 'ada@example.com', password: 'password-123' });
    const first = await realm.logIn(Realm.Credentials.emailPassword('ada@example.com', 'password-123'));
    await realm.logIn(Realm.Credentials.emailPassword('ada@example.com', 'password-123'));
    const found = await eventually(async () => {
      const all = await events(first.id);
      expect(all.map((event) => event['operationType']).sort()).toEqual(['CREATE', 'LOGIN', 'LOGIN']);
      return all;
    });
    expect(found.find((event) => event['operationType'] === 'CREATE')).toMatchObject({ providers: ['local-userpass'], identities: ['local-userpass'], email: 'ada@example.com' });
  });

  it('fires LOGIN for an API key login, and DELETE when the user deletes itself', async () => {
    await realm.emailPasswordAuth.registerUser({ email: 'bob@example.com', password: 'password-123' });
    const owner = await realm.logIn(Realm.Credentials.emailPassword('bob@example.com', 'password-123'));
    const key = await owner.apiKeys.create('laptop');
    const keyApp = new Realm.App({ id: clientAppId, baseUrl: host.url });
    const viaKey = await keyApp.logIn(Realm.Credentials.apiKey(key.key));
    expect(viaKey.id).toBe(owner.id);
    await eventually(async () => {
      const logins = (await events(owner.id)).filter((event) => event['operationType'] === 'LOGIN');
      expect(logins.map((event) => event['providers'])).toContainEqual(['api-key']);
    });
    await keyApp.deleteUser(viaKey);
    await eventually(async () => expect((await events(owner.id)).filter((event) => event['operationType'] === 'DELETE')).toMatchObject([{ providers: ['local-userpass'], identities: ['local-userpass'] }]));
  });

  it('fires DELETE when an administrator deletes the user through the admin API', async () => {
    const user = await realm.logIn(Realm.Credentials.anonymous(false));
    await eventually(async () => expect(await events(user.id)).toHaveLength(1));
    expect((await admin.request('DELETE', admin.app(appId, `/users/${user.id}`))).status).toBe(204);
    await eventually(async () => expect((await events(user.id)).filter((event) => event['operationType'] === 'DELETE')).toMatchObject([{ providers: ['anon-user'], identities: ['anon-user'], runAs: 'system' }]));
    // An unknown user is refused as App Services did.
    expect((await admin.request('DELETE', admin.app(appId, '/users/000000000000000000000000'))).status).toBe(404);
  });

  it('fires nothing for refused logins', async () => {
    const before = await auditEvents().count();
    await expect(realm.logIn(Realm.Credentials.emailPassword('ada@example.com', 'wrong-password'))).rejects.toMatchObject({ statusCode: 401 });
    const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/api-key/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: 'not-a-key' }) });
    expect(response.status).toBe(401);
    // A later event is handled (nothing is stuck): its CREATE is the only new record.
    const probe = await realm.logIn(Realm.Credentials.anonymous(false));
    await eventually(async () => expect(await events(probe.id)).toHaveLength(1));
    expect(await auditEvents().count()).toBe(before + 1);
  });
});
