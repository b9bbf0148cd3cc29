import { type AppConfig, type AppFiles, emptyApp, writeAppFiles } from '@tessera/app-config';

/** The group every test app is created in (tests need one; the bootstrap's own group id is random). */
export const testGroupId = '000000000000000000000001';

/**
 * The platform stores an app is made with, by shape: this library sits below the platform library (whose
 * own specs use it), so it names what it calls rather than importing the classes.
 */
export interface TestAppStores {
  apps: { create(app: { name: string; groupId: string }): Promise<{ _id: string; client_app_id: string }> };
  deployments: { deploy(appId: string, files: AppFiles, meta: { origin: string }): Promise<{ _id: string; version: number }> };
}

export interface TestApp {
  groupId: string;
  appId: string;
  clientAppId: string;
  /** The deployment made: announce it (`apps.deployment.changed`) where running services must reload. */
  deployment: { _id: string; version: number };
}

/**
 * An app as the admin API makes one: registered in the test group (or `groupId`, where the admin API must
 * reach it), then `config` deployed (or `emptyApp(name)` after `config` changed it).
 */
export async function deployTestApp(stores: TestAppStores, name: string, config: AppConfig | ((app: AppConfig) => void), options: { groupId?: string } = {}): Promise<TestApp> {
  const groupId = options.groupId ?? testGroupId;
  const record = await stores.apps.create({ name, groupId });
  const deployment = await stores.deployments.deploy(record._id, writeAppFiles(appConfig(name, config)), { origin: 'test' });
  return { appId: record._id, clientAppId: record.client_app_id, groupId, deployment };
}

function appConfig(name: string, config: AppConfig | ((app: AppConfig) => void)): AppConfig {
  if (typeof config !== 'function') return config;
  const app = emptyApp(name);
  config(app);
  return app;
}

export interface TestLogin {
  accessToken: string;
  refreshToken: string;
  userId: string;
}

/** A new anonymous user of the app, through the client API's login as an SDK makes it. */
export async function anonymousLogin(baseUrl: string, clientAppId: string): Promise<TestLogin> {
  const response = await fetch(`${baseUrl}/api/client/v2.0/app/${clientAppId}/auth/providers/anon-user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  if (response.status !== 200) throw new Error(`anonymous login: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { access_token: string; refresh_token: string; user_id: string };
  return { accessToken: body.access_token, refreshToken: body.refresh_token, userId: body.user_id };
}
