import { AppWireService } from '@tessera/server';
import { eventually } from '@tessera/testing';
import { MongoClient, MongoServerError } from 'mongodb';
import { AdminSession } from '../admin-api/admin-session';
import { clientLogin } from '../data-api/data-api-support';
import { startTestHost, type TestHost } from '../support/test-host';
import { withWireUsers } from './wire-app';

// A user who loses access loses its open wire connections too (apps.user.changed, as sync does): a driver
// authenticated before an admin disabled or deleted the user, or revoked its sessions, sees its connections
// closed, and a disabled or deleted user cannot authenticate again. Other users' connections stay open.
describe('app wire connections of a user who loses access', () => {
  const password = 'wire-user-access-admin';
  let host: TestHost;
  let admin: AdminSession;
  let app: { appId: string; clientAppId: string };
  let port: number;
  const clients: MongoClient[] = [];

  /** Registers a user and connects the official driver as that user; counts the connections it saw close. */
  const connectAs = async (email: string) => {
    const secret = `${email}-password`;
    const registered = await fetch(`${host.url}/api/client/v2.0/app/${app.clientAppId}/auth/providers/local-userpass/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: secret }) });
    expect(registered.status).toBe(201);
    const { userId } = await clientLogin(host, app.clientAppId, 'local-userpass', { username: email, password: secret });
    const client = new MongoClient(
      `mongodb://${encodeURIComponent(email)}:${encodeURIComponent(secret)}@127.0.0.1:${port}/?authMechanism=PLAIN&authSource=%24external&appName=${encodeURIComponent(`${app.clientAppId}:mongodb-atlas:local-userpass`)}&serverSelectionTimeoutMS=2000&retryReads=false`,
    );
    clients.push(client);
    const closed: string[] = [];
    client.on('connectionClosed', (event) => closed.push(event.reason));
    await client.connect();
    const items = client.db('shop').collection('items');
    await items.insertOne({ owner: userId, name: email });
    expect(await items.countDocuments()).toBe(1);
    return { userId, items, closed };
  };

  const failure = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );

  beforeAll(async () => {
    host = await startTestHost({ services: ['graphql-gateway', 'admin-api'], settings: { TESSERA_WIRE_PORT: '0', TESSERA_ADMIN_PASSWORD: password } });
    port = host.nest.get(AppWireService).port ?? 0;
    admin = await AdminSession.login(host, 'admin', password);
    app = await host.createApp('wireusers', withWireUsers, { groupId: admin.groupId });
  });

  afterAll(async () => {
    for (const client of clients) await client.close(true);
    await host?.close();
  });

  it('closes the connections of a disabled user, and the user cannot authenticate again', async () => {
    const ada = await connectAs('ada@example.com');
    const bystander = await connectAs('bob@example.com');
    expect((await admin.request('PUT', admin.app(app.appId, `/users/${ada.userId}/disable`))).status).toBe(204);
    await eventually(() => expect(ada.closed).not.toEqual([]));
    const refused = await failure(ada.items.countDocuments());
    expect(refused).toBeInstanceOf(Error);
    // The driver reconnects and authenticates again: refused as an unknown user would be.
    expect(String((refused as Error).message)).toMatch(/Authentication failed|connection|closed/i);
    expect(await failure(ada.items.countDocuments())).toBeInstanceOf(Error);
    // Another user's connection was never touched.
    expect(bystander.closed).toEqual([]);
    expect(await bystander.items.countDocuments()).toBe(1);
  });

  it('closes the connections of a deleted user', async () => {
    const cy = await connectAs('cy@example.com');
    expect((await admin.request('DELETE', admin.app(app.appId, `/users/${cy.userId}`))).status).toBe(204);
    await eventually(() => expect(cy.closed).not.toEqual([]));
    const refused = await failure(cy.items.countDocuments());
    expect(refused).toBeInstanceOf(Error);
    const again = await failure(cy.items.countDocuments());
    expect(again).toBeInstanceOf(MongoServerError);
    expect((again as MongoServerError).code).toBe(18);
  });

  it('closes the connections of a user whose sessions an admin revoked: the next command authenticates anew', async () => {
    const dee = await connectAs('dee@example.com');
    expect((await admin.request('PUT', admin.app(app.appId, `/users/${dee.userId}/logout`))).status).toBe(204);
    await eventually(() => expect(dee.closed).not.toEqual([]));
    // The password still holds: the driver's new connection authenticates and carries on.
    await eventually(async () => expect(await dee.items.countDocuments()).toBe(1));
  });
});
