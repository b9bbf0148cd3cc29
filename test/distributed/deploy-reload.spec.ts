import { DEPLOYMENT_RECHECK_INTERVAL_MS } from '@tessera/platform';
import { eventually, findNatsServer, natsSkipReason, type ServerProcess } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { adminPassword, anonymousLogin, callFunction, Cluster, distributedApp } from './cluster';
import { TcpProxy } from './tcp-proxy';

// A push announced while one process is cut off from NATS never reaches that process (apps.deployment.changed
// is a core NATS broadcast). Decision 0023: the process compares its cached deployments with the live
// stamps in the platform database when its connection comes back, so it serves the new configuration.
describe.skipIf(!findNatsServer())(`deploy reload after a missed announcement${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let cluster: Cluster;
  let proxy: TcpProxy;
  let runtime: ServerProcess;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;

  beforeAll(async () => {
    cluster = await Cluster.start({ runtimes: 0 });
    // The only function runtime reaches NATS through a relay the test can cut; every other process directly.
    proxy = await TcpProxy.start(cluster.nats.port);
    runtime = await cluster.startService('function-runtime', { NATS_URL: proxy.url, LOG_LEVEL: 'info' });
    admin = await AdminSession.login(cluster.one('admin-api'), 'admin', adminPassword);
    ({ _id: appId, client_app_id: clientAppId } = await admin.createApp('reload'));
    expect((await admin.push(appId, distributedApp('reload', 'hello'))).status).toBe(204);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await proxy?.close();
  });

  const ready = async (process: ServerProcess): Promise<number> => (await fetch(`${process.url}/readyz`)).status;

  it('serves the pushed configuration from a runtime that was disconnected during the push, once it reconnects', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const user = await anonymousLogin(gateway, clientAppId);
    const greet = async (): Promise<unknown> => (await callFunction(gateway, clientAppId, user.access_token, 'greet', ['ada'])).body;
    // The runtime has the app's first deployment cached.
    await eventually(async () => expect(await greet()).toEqual({ greeting: 'hello, ada' }), { timeoutMs: 20_000 });

    await proxy.cut();
    await eventually(async () => expect(await ready(runtime)).toBe(503), { timeoutMs: 10_000, intervalMs: 100 });
    expect((await admin.push(appId, distributedApp('reload', 'bonjour'))).status).toBe(204);
    await proxy.restore();
    const restored = Date.now();

    await eventually(async () => expect(await greet()).toEqual({ greeting: 'bonjour, ada' }), { timeoutMs: 15_000, intervalMs: 200 });
    // The reconnect reconciled it, not the periodic check.
    expect(Date.now() - restored).toBeLessThan(DEPLOYMENT_RECHECK_INTERVAL_MS);
    const reloads = runtime
      .output()
      .split('\n')
      .filter((line) => line.includes('whose deployment changed'))
      .map((line) => JSON.parse(line) as { apps?: string[]; reason?: string });
    expect(reloads).toContainEqual(expect.objectContaining({ apps: [appId], reason: 'message transport reconnected' }));
    // Each of its connections (bus, handlers, durable events) reconnects on its own schedule.
    await eventually(async () => expect(await ready(runtime)).toBe(200), { timeoutMs: 15_000, intervalMs: 200 });
  }, 90_000);
});
