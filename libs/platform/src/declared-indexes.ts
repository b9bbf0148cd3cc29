/**
 * The indexes an app declares beside its collections' rules (`indexes` in a collection rule file), made real
 * on the clusters its data sources link when the app deploys: each declared index is created (an identical
 * one already there is left as it is), and one the previous deployment declared and this one no longer does
 * is dropped. Indexes made some other way (the wire protocol, MongoDB's tools) are never touched.
 *
 * Flexible sync declares indexes too, as App Services made them: while flexible sync is enabled, every synced
 * collection (a collection rule with an object schema on the sync's cluster) gets an ascending single-field
 * index on each queryable field its schema has at the top level (`queryable_fields_names`, the collection's
 * `collection_queryable_fields_names`, and so `indexed_queryable_fields_names`, which must be queryable).
 * Subscriptions filter on nothing else, so a selective session's bootstrap and the write-path lookups read
 * through an index instead of the whole collection. Such an index is skipped where an index of the same key
 * already exists under another name, and dropped when its field stops being queryable or sync is disabled.
 */
import { type AppConfig, type DeclaredIndex, defaultIndexName, effectiveSyncConfig, isDataSourceType, isFederatedType } from '@tessera/app-config';
import { type DataSourceClient, isDatastoreError } from '@tessera/datastore';

/** One collection's declared indexes, by the cluster its service links. */
export interface DeclaredCollectionIndexes {
  service: string;
  cluster: string;
  database: string;
  collection: string;
  indexes: (DeclaredIndex & { name: string })[];
  /** 'sync': made for flexible sync's queryable fields (an index of the same key under another name serves instead). */
  origin?: 'rules' | 'sync';
}

/** Every declared index of an app, per collection (federated data sources have none). */
export function declaredIndexes(app: AppConfig): DeclaredCollectionIndexes[] {
  const out: DeclaredCollectionIndexes[] = [];
  for (const service of app.services) {
    if (!isDataSourceType(service.config.type) || isFederatedType(service.config.type)) continue;
    const cluster = String(service.config.config?.clusterName ?? service.config.name);
    for (const rule of service.collectionRules) {
      if (!Array.isArray(rule.indexes) || rule.indexes.length === 0) continue;
      out.push({
        service: service.config.name,
        cluster,
        database: rule.database,
        collection: rule.collection,
        indexes: rule.indexes.map((index) => ({ ...index, name: index.name ?? defaultIndexName(index.key) })),
      });
    }
  }
  return [...out, ...syncIndexes(app, out)];
}

/** The indexes flexible sync wants on its synced collections' queryable fields (none while it is disabled). */
function syncIndexes(app: AppConfig, declared: readonly DeclaredCollectionIndexes[]): DeclaredCollectionIndexes[] {
  const sync = effectiveSyncConfig(app);
  if (!sync || sync.type !== 'flexible' || !(sync.state === 'enabled' || sync.state === true)) return [];
  const clusters = app.services.filter((s) => isDataSourceType(s.config.type) && !isFederatedType(s.config.type));
  const service = sync.service_name ? clusters.find((s) => s.config.name === sync.service_name) : clusters[0];
  if (!service) return [];
  const cluster = String(service.config.config?.clusterName ?? service.config.name);
  const global = stringList(sync.queryable_fields_names);
  const out: DeclaredCollectionIndexes[] = [];
  for (const rule of service.collectionRules) {
    const properties = rule.schema?.bsonType === 'object' ? rule.schema.properties : undefined;
    if (!properties) continue;
    const type = rule.schema?.title ?? rule.collection;
    const fields = [...new Set([...global, ...stringList(sync.indexed_queryable_fields_names), ...stringList(sync.collection_queryable_fields_names?.[type])])];
    const taken = declared.filter((entry) => entry.database === rule.database && entry.collection === rule.collection && entry.cluster === cluster).flatMap((entry) => entry.indexes);
    const indexes = fields
      .filter((field) => field !== '_id' && Object.hasOwn(properties, field))
      .map((field): DeclaredIndex & { name: string } => ({ key: { [field]: 1 }, name: defaultIndexName({ [field]: 1 }) }))
      .filter((index) => !taken.some((other) => other.name === index.name || JSON.stringify(other.key) === JSON.stringify(index.key)));
    if (indexes.length > 0) out.push({ service: service.config.name, cluster, database: rule.database, collection: rule.collection, indexes, origin: 'sync' });
  }
  return out;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** Why a declared index could not be made: the collection, the index and MongoDB's message. */
export class DeclaredIndexError extends Error {
  constructor(
    readonly namespace: string,
    readonly indexName: string,
    cause: string,
  ) {
    super(`index "${indexName}" of ${namespace} could not be created: ${cause}`);
    this.name = 'DeclaredIndexError';
  }
}

/**
 * Creates `next`'s declared indexes and drops those only `previous` declared. Stops at the first index that
 * cannot be made (a unique index over duplicate values, a name already used by another key), throwing
 * DeclaredIndexError, so the caller can refuse the deployment; indexes created before it stay (harmless).
 */
export async function applyDeclaredIndexes(clientFor: (cluster: string) => DataSourceClient, previous: AppConfig | undefined, next: AppConfig): Promise<{ created: number; dropped: number }> {
  const wanted = declaredIndexes(next);
  const key = (entry: DeclaredCollectionIndexes, name: string) => `${entry.cluster}\u0000${entry.database}\u0000${entry.collection}\u0000${name}`;
  const before = new Set((previous ? declaredIndexes(previous) : []).flatMap((entry) => entry.indexes.map((index) => key(entry, index.name))));
  let created = 0;
  for (const entry of wanted) {
    const coll = clientFor(entry.cluster).db(entry.database).collection(entry.collection);
    const existing = new Map((await coll.listIndexes().catch(() => [])).map((index) => [index.name, index]));
    for (const index of entry.indexes) {
      const current = existing.get(index.name);
      if (current && sameIndex(current, index)) continue;
      // Sync's own index gives way to any index already there under its name or of its key.
      if (entry.origin === 'sync' && (current || [...existing.values()].some((other) => JSON.stringify(other.key) === JSON.stringify(index.key)))) continue;
      try {
        // A declaration that changed its key or options replaces the index it made; another's index of that name stays and is reported.
        if (current && before.has(key(entry, index.name))) await coll.dropIndex(index.name);
        await coll.createIndex(index.key, { name: index.name, ...(index.unique ? { unique: true } : {}), ...(index.sparse ? { sparse: true } : {}) });
        created++;
      } catch (error) {
        throw new DeclaredIndexError(`${entry.database}.${entry.collection}`, index.name, isDatastoreError(error) || error instanceof Error ? error.message : String(error));
      }
    }
  }
  let dropped = 0;
  const stillWanted = new Set(wanted.flatMap((entry) => entry.indexes.map((index) => key(entry, index.name))));
  for (const entry of previous ? declaredIndexes(previous) : []) {
    for (const index of entry.indexes) {
      if (stillWanted.has(key(entry, index.name))) continue;
      const coll = clientFor(entry.cluster).db(entry.database).collection(entry.collection);
      // Gone already (dropped by hand, or the collection was): nothing to do; sync leaves another's index of its name.
      const found = (await coll.listIndexes().catch(() => [])).find((candidate) => candidate.name === index.name);
      if (!found || (entry.origin === 'sync' && !sameIndex(found, index))) continue;
      await coll.dropIndex(index.name);
      dropped++;
    }
  }
  return { created, dropped };
}

function sameIndex(current: { key: Record<string, number>; unique?: boolean; sparse?: boolean }, wanted: DeclaredIndex): boolean {
  return JSON.stringify(current.key) === JSON.stringify(wanted.key) && (current.unique ?? false) === (wanted.unique ?? false) && (current.sparse ?? false) === (wanted.sparse ?? false);
}
