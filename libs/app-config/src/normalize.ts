// Completes a model the same way every time: stable ids for resources that have none, a Content-Type
// attribute for every hosted file, a metadata item for every hosted file, and a fixed order of lists.
// Never random: the same app always gets the same ids, so a write after a read changes nothing.

import { createHash } from 'node:crypto';
import { lookup } from 'mime-types';
import { compareKeys, show } from './json';
import { type AppConfig, type Hosting, type HostingFileMetadata } from './model';

/** A 24-hex id (the shape of an ObjectId) derived from the app name, the resource kind and its name. */
export function stableId(appName: string, kind: string, name: string): string {
  return createHash('sha256').update(`${appName}\u0000${kind}\u0000${name}`).digest('hex').slice(0, 24);
}

/** The Content-Type for a hosted file path, from its extension. */
export function contentTypeFor(path: string): string {
  return lookup(path) || 'application/octet-stream';
}

function byName<T extends { name?: unknown }>(a: T, b: T): number {
  return compareKeys(show(a.name ?? ''), show(b.name ?? ''));
}

/**
 * Normalizes in place and returns the app: ids filled, hosting completed, lists of resources sorted
 * (each resource has its own file, so their order in the model is free). In place, so
 * the identity of resource objects (which origin maps key on) is kept; use cloneApp first for a copy.
 */
export function normalizeApp(app: AppConfig): AppConfig {
  const appName = typeof app.settings.name === 'string' ? app.settings.name : '';
  const withId = <T extends { id?: unknown }>(item: T, kind: string, name: string): T => {
    if (item.id !== undefined) return item;
    item.id = stableId(appName, kind, name);
    return item;
  };
  for (const p of app.authProviders) withId(p, 'auth_provider', String(p.name));
  for (const f of app.functions) withId(f.config, 'function', String(f.config.name));
  for (const s of app.services) {
    const svc = String(s.config.name);
    withId(s.config, 'service', svc);
    for (const r of s.collectionRules) withId(r, 'rule', `${svc}/${String(r.database)}.${String(r.collection)}`);
    for (const r of s.rules) withId(r, 'service_rule', `${svc}/${String(r.name)}`);
    for (const w of s.webhooks) withId(w.config, 'incoming_webhook', `${svc}/${String(w.config.name)}`);
    s.collectionRules.sort((a, b) => compareKeys(`${String(a.database)}.${String(a.collection)}`, `${String(b.database)}.${String(b.collection)}`));
    s.rules.sort(byName);
    s.webhooks.sort((a, b) => byName(a.config, b.config));
  }
  for (const t of app.triggers) withId(t, 'trigger', String(t.name));
  for (const v of app.values) withId(v, 'value', String(v.name));
  app.authProviders.sort(byName);
  app.functions.sort((a, b) => byName(a.config, b.config));
  app.services.sort((a, b) => byName(a.config, b.config));
  app.triggers.sort(byName);
  app.values.sort(byName);
  if (app.hosting) completeHosting(app.hosting);
  if (app.graphql) {
    app.graphql.customResolvers.sort((a, b) => compareKeys(resolverKey(a), resolverKey(b)));
  }
  return app;
}

export function resolverKey(r: { on_type?: unknown; field_name?: unknown }): string {
  return `${show(r.on_type ?? '').toLowerCase()}_${show(r.field_name ?? '')}`;
}

function completeHosting(hosting: Hosting): void {
  const known = new Set(hosting.metadata.map((m) => m.path));
  for (const path of hosting.files.keys()) {
    if (!known.has(path)) hosting.metadata.push({ path, attrs: [] });
  }
  for (const item of hosting.metadata) addContentType(item);
  // Not sorted here: violations name items by index, which must stay the index in the file read.
  // The writer sorts by path.
}

function addContentType(item: HostingFileMetadata): void {
  if (typeof item.path !== 'string') return;
  if (!Array.isArray(item.attrs)) item.attrs = [];
  const has = item.attrs.some((a) => typeof a?.name === 'string' && a.name.toLowerCase() === 'content-type');
  if (!has) item.attrs.push({ name: 'Content-Type', value: contentTypeFor(item.path) });
}

/** Deep copy of a model (files are copied by reference: they are treated as immutable). */
export function cloneApp(app: AppConfig): AppConfig {
  const copy = <T>(v: T): T => structuredClone(v);
  return {
    settings: copy(app.settings),
    authProviders: copy(app.authProviders),
    functions: copy(app.functions),
    services: copy(app.services),
    triggers: copy(app.triggers),
    values: copy(app.values),
    ...(app.hosting ? { hosting: { metadata: copy(app.hosting.metadata), files: new Map(app.hosting.files) } } : {}),
    ...(app.secrets ? { secrets: copy(app.secrets) } : {}),
    ...(app.sync ? { sync: copy(app.sync) } : {}),
    ...(app.graphql ? { graphql: copy(app.graphql) } : {}),
    extraFiles: new Map(app.extraFiles),
  };
}
