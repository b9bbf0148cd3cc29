import { emptyApp, writeAppFiles } from '@tessera/app-config';
import { type AdminSession } from '../admin-api/admin-session';
import { partitionSync } from './sync-host';

/** An app created and deployed through the admin API with partition sync on `_partition` (string), as realm-cli pushes it. */
export async function createSyncApp(admin: AdminSession, name: string, sync: Record<string, unknown> = {}): Promise<{ appId: string; clientAppId: string }> {
  const app = await admin.createApp(name);
  const config = emptyApp(name);
  partitionSync(config, { read: true, write: true });
  config.services.push({ config: { id: 'svc1', name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'SyncLifecycleCluster' } }, collectionRules: [], rules: [], webhooks: [] });
  Object.assign(config.sync!, { service_name: 'mongodb-atlas' }, sync);
  const files = new Map([...writeAppFiles(config)].map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]));
  const pushed = await admin.push(app._id, files);
  if (pushed.status !== 204) throw new Error(`push ${name}: ${pushed.status} ${JSON.stringify(pushed.body)}`);
  return { appId: app._id, clientAppId: app.client_app_id };
}

/** The `sub` of an access token: the app user's id. */
export function userIdOf(access: string): string {
  return (JSON.parse(Buffer.from(access.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub: string }).sub;
}
