// Where each resource lives in the current layout. The writer and the validator's default locations
// share these, so a violation on an in-memory app names the file the writer would produce.

import { show } from './json';
import { type AppFunction, type AppService, type CollectionRule, type ServiceRule, type Webhook } from './model';

/** A file or directory name for a resource name; '/' is kept only where names may nest (functions). */
export function segment(name: unknown, fallback: unknown, allowSlash = false): string {
  const raw = typeof name === 'string' && name !== '' ? name : show(fallback ?? 'unnamed');
  const cleaned = raw.replace(allowSlash ? /[\\:*?"<>|\p{Cc}]/gu : /[\\/:*?"<>|\p{Cc}]/gu, '_');
  return cleaned
    .split('/')
    .map((s) => (s === '.' || s === '..' || s === '' ? '_' : s))
    .join('/');
}

export const layoutPaths = {
  settings: 'config.json',
  secrets: 'secrets.json',
  hostingMetadata: 'hosting/metadata.json',
  sync: 'sync/config.json',
  graphqlConfig: 'graphql/config.json',
  authProvider: (p: { name?: unknown; id?: unknown }) => `auth_providers/${segment(p.name, p.id)}.json`,
  functionDir: (f: AppFunction) => `functions/${segment(f.config.name, f.config.id, true)}`,
  serviceDir: (s: AppService) => `services/${segment(s.config.name, s.config.id)}`,
  collectionRule: (s: AppService, r: CollectionRule) =>
    `${layoutPaths.serviceDir(s)}/rules/${segment(`${String(r.database)}.${String(r.collection)}`, r.id)}.json`,
  serviceRule: (s: AppService, r: ServiceRule) => `${layoutPaths.serviceDir(s)}/rules/${segment(r.name, r.id)}.json`,
  webhookDir: (s: AppService, w: Webhook) => `${layoutPaths.serviceDir(s)}/incoming_webhooks/${segment(w.config.name, w.config.id)}`,
  trigger: (t: { name?: unknown; id?: unknown }) => `triggers/${segment(t.name, t.id)}.json`,
  value: (v: { name?: unknown; id?: unknown }) => `values/${segment(v.name, v.id)}.json`,
  resolver: (key: string) => `graphql/custom_resolvers/${segment(key, 'resolver')}.json`,
};
