import { emptyApp, writeAppFiles } from '@tessera/app-config';
import { Subjects } from '@tessera/contracts';
import { MessageBus } from '@tessera/messaging';
import { AppRegistry, DeploymentStore } from '@tessera/platform';
// The real process host: realm-web over HTTP, the function runtime's sandbox, the embedded datastore.
import { startHost, type RunningHost } from '@tessera/server';
import { loadSettings } from '@tessera/settings';
import { eventually, makeTempDir } from '@tessera/testing';
import * as Realm from 'realm-web';

const notes = "context.services.get('mongodb-atlas').db('club').collection('notes')";
const ADMIN_PASSWORD = 'identity-admin-password';

// One caller identity from the HTTP edge to the rules: what a function sees as context.user, and the
// %%user the rules decide on in a function's data access and in the client's own remote data access.
// And one request's correlation id and trace context, from the HTTP edge to the execution log.
describe('the caller identity and the request correlation id (standalone, through realm-web)', () => {
  const dir = makeTempDir('tessera-caller-identity-');
  let host: RunningHost;
  let appId: string;
  let groupId: string;
  let user: Realm.User;

  beforeAll(async () => {
    host = await startHost(loadSettings({ PORT: '0', HOST: '127.0.0.1', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: '', LOG_LEVEL: 'silent', TESSERA_ADMIN_PASSWORD: ADMIN_PASSWORD }));
    groupId = host.bootstrap.groupId;
    const record = await host.nest.get(AppRegistry).create({ name: 'club', groupId });
    appId = record._id;
    const config = emptyApp('club');
    config.authProviders.push({ name: 'anon-user', type: 'anon-user' });
    config.services.push({
      config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'ClubCluster' } },
      // Only anonymous users (by their identity's provider type) may touch the notes, and only their own.
      defaultRule: {
        roles: [{ name: 'anonymous', apply_when: { '%%user.identities.providerType': 'anon-user' }, read: { owner: '%%user.id' }, write: { owner: '%%user.id' }, insert: true, delete: true, search: true }],
      },
      // A collection whose role asks an app function (a rule's %function runs it over the bus).
      collectionRules: [{ database: 'club', collection: 'gated', roles: [{ name: 'asked', apply_when: { '%%true': { '%function': { name: 'mayRead', arguments: [] } } }, read: true, write: true, insert: true, delete: true, search: true }] }],
      rules: [],
      webhooks: [],
    });
    config.functions.push(
      { config: { name: 'whoAmI' }, source: 'exports = () => context.user;' },
      { config: { name: 'myNotes' }, source: `exports = async () => (await ${notes}.find({}, { _id: 0, text: 1 }).toArray()).map((note) => note.text);` },
      { config: { name: 'readGated' }, source: "exports = async () => (await context.services.get('mongodb-atlas').db('club').collection('gated').find({}).toArray()).length;" },
      { config: { name: 'mayRead' }, source: 'exports = () => true;' },
      { config: { name: 'seed', run_as_system: true }, source: `exports = async (owner) => { await ${notes}.deleteMany({}); await ${notes}.insertMany([{ owner, text: 'mine' }, { owner: 'someone-else', text: 'theirs' }]); await ${notes.replace('notes', 'gated')}.insertOne({ text: 'asked' }); };` },
    );
    const deployed = await host.nest.get(DeploymentStore).deploy(record._id, writeAppFiles(config), { origin: 'test' });
    await host.nest.get(MessageBus).emit(Subjects.AppsDeploymentChanged, { appId: record._id, deploymentId: deployed._id, version: deployed.version });
    user = await new Realm.App({ id: record.client_app_id, baseUrl: host.url }).logIn(Realm.Credentials.anonymous(false));
    await user.callFunction('seed', user.id);
  });

  afterAll(async () => {
    await host?.close();
    dir.remove();
  });

  it('shows a function the caller as context.user, identities with id and provider_type', async () => {
    expect(await user.callFunction('whoAmI')).toEqual({ id: user.id, type: 'normal', data: {}, identities: [{ id: user.identities[0]?.id, provider_type: 'anon-user' }] });
  });

  it('gives the rules the same %%user in a function and in remote data access', async () => {
    expect(await user.callFunction('myNotes')).toEqual(['mine']);
    const remote = await user.mongoClient('mongodb-atlas').db('club').collection<{ _id: string; text: string }>('notes').find({}, { projection: { _id: 0, text: 1 } });
    expect(remote.map((note) => note.text)).toEqual(['mine']);
  });

  /** `functions/call` of a function without arguments over plain HTTP, with extra request headers. */
  const callOverHttp = (name: string, headers: Record<string, string>): Promise<Response> =>
    fetch(`${host.url}/api/client/v2.0/app/${user.app.id}/functions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ name, arguments: [] }),
    });

  /** The app's log entries the admin API lists for `query`, once `ready` finds what the test waits for. */
  async function listedLogs<T>(query: string, ready: (logs: T[]) => boolean): Promise<T[]> {
    const login = await fetch(`${host.url}/api/admin/v3.0/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }) });
    const { access_token: adminToken } = (await login.json()) as { access_token: string };
    return eventually(async () => {
      const listed = await fetch(`${host.url}/api/admin/v3.0/groups/${groupId}/apps/${appId}/logs?${query}`, { headers: { authorization: `Bearer ${adminToken}` } });
      const { logs } = (await listed.json()) as { logs: T[] };
      if (!ready(logs)) throw new Error(`the log entries of ${query} are not listed yet`);
      return logs;
    });
  }

  it('logs a call with the correlation id and trace id its HTTP request came with', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await callOverHttp('whoAmI', { 'x-request-id': 'identity-call-1', traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(response.status).toBe(200);
    const logs = await listedLogs<Record<string, unknown>>('co_id=identity-call-1', (listed) => listed.length > 0);
    expect(logs).toEqual([expect.objectContaining({ type: 'FUNCTION', function_name: 'whoAmI', co_id: 'identity-call-1', trace_id: traceId, user_id: user.id, remote_ip_address: '127.0.0.1' })]);
  });

  it('makes a correlation id at the edge when the request brings none, and logs each call under its own', async () => {
    await user.callFunction('whoAmI');
    await user.callFunction('whoAmI');
    const ofTheseCalls = (entry: { co_id?: string; function_name?: string }): boolean => entry.function_name === 'whoAmI' && entry.co_id !== 'identity-call-1';
    const logs = await listedLogs<{ co_id?: string; function_name?: string }>('type=FUNCTION&limit=2', (listed) => listed.filter(ofTheseCalls).length >= 2);
    const ids = logs.filter(ofTheseCalls).map((entry) => entry.co_id);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(2);
  });

  it("logs a rule's %function, run for a function's data access, under the correlation id of the client's request", async () => {
    const response = await callOverHttp('readGated', { 'x-request-id': 'identity-rule-1' });
    expect(response.status).toBe(200);
    const logs = await listedLogs<{ function_name?: string }>('co_id=identity-rule-1', (listed) => listed.length >= 2);
    expect(logs.map((entry) => entry.function_name).sort()).toEqual(['mayRead', 'readGated']);
    expect(await response.json()).toEqual({ $numberInt: '1' });
  });
});
