import { type AppConfig, emptyApp, writeAppFiles } from '@tessera/app-config';
import { AdminSession } from '../admin-api/admin-session';
import { partitionSync, startSyncHost, type SyncHost } from './sync-host';

/** An app created through the admin API and deployed with `configure(emptyApp(name))`, as realm-cli pushes it. */
export async function createConfiguredApp(admin: AdminSession, name: string, configure: (config: AppConfig) => void): Promise<{ appId: string; clientAppId: string }> {
  const app = await admin.createApp(name);
  const config = emptyApp(name);
  configure(config);
  const files = new Map([...writeAppFiles(config)].map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]));
  const pushed = await admin.push(app._id, files);
  if (pushed.status !== 204) throw new Error(`push ${name}: ${pushed.status} ${JSON.stringify(pushed.body)}`);
  return { appId: app._id, clientAppId: app.client_app_id };
}

/** An app created and deployed through the admin API with partition sync on `_partition` (string), as realm-cli pushes it. */
export function createSyncApp(admin: AdminSession, name: string, sync: Record<string, unknown> = {}): Promise<{ appId: string; clientAppId: string }> {
  return createConfiguredApp(admin, name, (config) => {
    partitionSync(config, { read: true, write: true });
    config.services.push({ config: { id: 'svc1', name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'SyncLifecycleCluster' } }, collectionRules: [], rules: [], webhooks: [] });
    Object.assign(config.sync!, { service_name: 'mongodb-atlas' }, sync);
  });
}

/** A sync host whose admin API takes `password`, with an admin logged in. */
export async function startAdminSyncHost(password: string): Promise<{ host: SyncHost; admin: AdminSession }> {
  const host = await startSyncHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
  return { host, admin: await AdminSession.login(host, 'admin', password) };
}

/** The `sub` of an access token: the app user's id. */
export function userIdOf(access: string): string {
  return (JSON.parse(Buffer.from(access.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub: string }).sub;
}
