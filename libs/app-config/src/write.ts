// Writes the model as an app directory in the current layout (spec 2.1), deterministically: sorted JSON
// keys, 2-space indent and a trailing newline, files in path order, ids and hosting attributes completed
// by normalizeApp. Reading a directory this wrote and writing it again gives the same bytes.

import { compareKeys, show, stringifyJson, textToBytes } from './json';
import { CONFIG_VERSION, type AppConfig, type AppFiles } from './model';
import { cloneApp, normalizeApp, resolverKey } from './normalize';
import { layoutPaths as at } from './paths';

export function writeAppFiles(input: AppConfig): AppFiles {
  const app = normalizeApp(cloneApp(input));
  const files: Array<[string, Uint8Array]> = [];
  const json = (path: string, value: unknown) => files.push([path, textToBytes(stringifyJson(value))]);
  const text = (path: string, value: string) => files.push([path, textToBytes(value)]);

  json(at.settings, { ...app.settings, config_version: CONFIG_VERSION });
  if (app.secrets) json(at.secrets, app.secrets);
  for (const p of app.authProviders) json(at.authProvider(p), p);
  for (const f of app.functions) {
    json(`${at.functionDir(f)}/config.json`, f.config);
    text(`${at.functionDir(f)}/source.js`, f.source);
  }
  for (const s of app.services) {
    json(`${at.serviceDir(s)}/config.json`, s.config);
    if (s.defaultRule) json(`${at.serviceDir(s)}/default_rule.json`, s.defaultRule);
    for (const r of s.collectionRules) json(at.collectionRule(s, r), r);
    for (const r of s.rules) json(at.serviceRule(s, r), r);
    for (const w of s.webhooks) {
      json(`${at.webhookDir(s, w)}/config.json`, w.config);
      text(`${at.webhookDir(s, w)}/source.js`, w.source);
    }
  }
  for (const t of app.triggers) json(at.trigger(t), t);
  for (const v of app.values) json(at.value(v), v);
  if (app.hosting) {
    json(at.hostingMetadata, [...app.hosting.metadata].sort((a, b) => compareKeys(show(a.path), show(b.path))));
    for (const [path, bytes] of app.hosting.files) files.push([`hosting/files/${path.replace(/^\/+/, '')}`, bytes]);
  }
  if (app.sync) json(at.sync, app.sync);
  if (app.graphql) {
    if (app.graphql.config) json(at.graphqlConfig, app.graphql.config);
    for (const r of app.graphql.customResolvers) json(at.resolver(resolverKey(r)), r);
  }
  const written = new Set(files.map(([p]) => p));
  for (const [path, bytes] of app.extraFiles) if (!written.has(path)) files.push([path, bytes]);

  files.sort(([a], [b]) => compareKeys(a, b));
  return new Map(files);
}
