import { type AppConfig, type CollectionRule } from '@tessera/app-config';
import { ClientApps } from '@tessera/graphql-gateway';
import type { TestHost } from '../support/test-host';

/** Rules of `shop`: owners see and change only their own `items`; `catalog` is readable by everyone and writable by none. */
export function ownedItemsAndCatalog(): CollectionRule[] {
  return [
    { database: 'shop', collection: 'items', roles: [{ name: 'owner', apply_when: {}, document_filters: { read: { owner: '%%user.id' }, write: { owner: '%%user.id' } }, read: true, write: true, insert: true, delete: true, search: true }] },
    { database: 'shop', collection: 'catalog', roles: [{ name: 'reader', apply_when: {}, read: true, write: false, insert: false, delete: false, search: true }] },
  ];
}

/** One Data API answer as a client sees it. */
export interface DataApiAnswer {
  status: number;
  contentType: string | null;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: Record<string, unknown>;
}

export interface DataApiCall {
  /** Credential and format headers. */
  headers?: Record<string, string>;
  method?: string;
  version?: string;
  query?: string;
  /** The raw body; by default `JSON.stringify(body)`. */
  raw?: string;
}

/** POSTs (by default) a Data API action of the app over real HTTP. */
export async function dataApi(host: TestHost, clientAppId: string, action: string, body: unknown, call: DataApiCall = {}): Promise<DataApiAnswer> {
  const url = `${host.url}/app/${clientAppId}/endpoint/data/${call.version ?? 'v1'}/action/${action}${call.query ? `?${call.query}` : ''}`;
  const method = call.method ?? 'POST';
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...call.headers },
    ...(method === 'GET' ? {} : { body: call.raw ?? JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: the test reads `text`
  }
  return { status: response.status, contentType: response.headers.get('content-type'), text, body: parsed };
}

/** Adds a Data API configuration file to an app, as an export carries it. */
export function withDataApiConfig(app: AppConfig, config: Record<string, unknown>): void {
  app.extraFiles.set('http_endpoints/data_api_config.json', new TextEncoder().encode(JSON.stringify(config)));
}

/** A server API key of the app (its own server user), as the admin API makes one. */
export async function serverApiKey(host: TestHost, clientAppId: string, name: string): Promise<{ key: string; userId: string }> {
  const app = await host.nest.get(ClientApps, { strict: false }).byClientAppId(clientAppId);
  const created = await app.users.createServerApiKey(name);
  if (!created) throw new Error(`server API key '${name}' exists`);
  return { key: created.secret, userId: created.key.userId };
}

/** Logs in through the client API as an SDK does; answers the user id and access token. */
export async function clientLogin(host: TestHost, clientAppId: string, provider: string, credentials: Record<string, unknown>): Promise<{ userId: string; accessToken: string }> {
  const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/auth/providers/${provider}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) });
  if (response.status !== 200) throw new Error(`login: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { user_id: string; access_token: string };
  return { userId: body.user_id, accessToken: body.access_token };
}

/** Remote data access as realm-web calls it (`functions/call` with `service`), for comparison. */
export async function remoteDataAccess(host: TestHost, clientAppId: string, accessToken: string, name: string, args: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, service: 'mongodb-atlas', arguments: [args] }),
  });
  return { status: response.status, body: await response.json() };
}
