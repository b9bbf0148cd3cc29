// Flexible sync configuration (sync/config.json with `type: "flexible"`, or the older `config.flexible_sync`
// of a cluster service) and the sync compatibility of the synced cluster's roles (spec 2.7: with flexible
// sync a role applies per collection per session, so `apply_when` cannot read the document, document
// filters may only use queryable fields and `read`/`write` are boolean literals). Pure: returns findings,
// the validator reports them: the sync configuration's as violations, the roles' as warnings (App Services
// accepts a role that is not sync compatible and denies the sync sessions it applies to). It must not
// refuse what App Services exported: members it does not model (the deprecated `permissions`) pass.

import { isPlainObject, jsonPath, type JsonObject } from './json';
import type { AppService, CollectionRule, DefaultRule, JsonSchema, Role } from './model';
import { layoutPaths as at } from './paths';

export interface FlexibleSyncFinding {
  resource: object;
  file: string;
  path: string;
  rule: string;
  message: string;
}

export interface FlexibleSyncSite {
  resource: object;
  file: string;
  /** Path of the sync document inside the file: '' for sync/config.json, 'config.flexible_sync' when embedded. */
  base: string;
  sync: JsonObject;
  service: AppService | undefined;
}

/** bsonTypes a queryable field may have (alone, or as the items of an array). */
const QUERYABLE_BSON_TYPES = ['string', 'int', 'long', 'double', 'float', 'decimal', 'number', 'bool', 'boolean', 'objectId', 'uuid', 'date', 'mixed', 'null'];
/** bsonTypes an indexed queryable field may have. */
const INDEXABLE_BSON_TYPES = ['string', 'int', 'long', 'objectId', 'uuid', 'null'];
const DOCUMENT_EXPANSIONS = ['%%root', '%%prevRoot', '%%prev', '%%this', '%%parent'];

function join(base: string, rest: string): string {
  return base === '' ? rest : `${base}.${rest}`;
}

/** The queryable fields a collection offers: global ones, its own, and `_id`. */
export function queryableFieldsOf(sync: JsonObject, collection: CollectionRule): Set<string> {
  const fields = new Set<string>(['_id']);
  const global = sync.queryable_fields_names;
  if (Array.isArray(global)) for (const f of global) if (typeof f === 'string') fields.add(f);
  const perCollection = sync.collection_queryable_fields_names;
  if (isPlainObject(perCollection)) {
    for (const name of [collection.schema?.title, collection.collection]) {
      const own = typeof name === 'string' ? perCollection[name] : undefined;
      if (Array.isArray(own)) for (const f of own) if (typeof f === 'string') fields.add(f);
    }
  }
  return fields;
}

function stringList(site: FlexibleSyncSite, key: string, out: FlexibleSyncFinding[], what: string): string[] | undefined {
  const value = site.sync[key];
  if (value === undefined) return undefined;
  const path = join(site.base, key);
  if (!Array.isArray(value)) {
    out.push({ resource: site.resource, file: site.file, path, rule: 'field.type', message: `${key} must be an array of ${what} names` });
    return undefined;
  }
  const seen = new Set<string>();
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string' || item === '' || item.startsWith('$')) {
      out.push({ resource: site.resource, file: site.file, path: `${path}[${i}]`, rule: `sync.${key}.value`, message: `${key}[${i}] must be a ${what} name (a non-empty string not starting with $)` });
    } else if (seen.has(item)) {
      out.push({ resource: site.resource, file: site.file, path: `${path}[${i}]`, rule: `sync.${key}.duplicate`, message: `${what} "${item}" is listed twice in ${key}` });
    } else seen.add(item);
  });
  return [...seen];
}

function bsonTypesOf(prop: unknown): string[] {
  if (!isPlainObject(prop)) return [];
  const bt = prop.bsonType;
  return (Array.isArray(bt) ? bt : [bt]).filter((t): t is string => typeof t === 'string');
}

/** Whether a schema property can be queried: an eligible scalar, or an array of them. */
function queryableType(prop: unknown, eligible: readonly string[]): boolean {
  const types = bsonTypesOf(prop);
  if (types.length === 0) return true; // no bsonType: nothing to check against
  return types.every((t) => {
    if (t === 'array') return isPlainObject(prop) && bsonTypesOf(prop.items).every((it) => eligible.includes(it) && it !== 'array');
    return eligible.includes(t);
  });
}

function syncedSchemas(service: AppService): Array<{ rule: CollectionRule; schema: JsonSchema }> {
  return service.collectionRules.filter((r) => isPlainObject(r.schema)).map((r) => ({ rule: r, schema: r.schema as JsonSchema }));
}

/** Everything wrong with one flexible sync document, on its own and against the synced schemas. */
export function checkFlexibleSyncSite(site: FlexibleSyncSite): FlexibleSyncFinding[] {
  const out: FlexibleSyncFinding[] = [];
  const { resource, file, base, sync } = site;
  if (sync.partition !== undefined) {
    out.push({ resource, file, path: join(base, 'partition'), rule: 'sync.flexible.partition', message: 'flexible sync has no partition key: remove "partition", or use type "partition"' });
  }
  const queryable = stringList(site, 'queryable_fields_names', out, 'field') ?? [];
  const indexed = stringList(site, 'indexed_queryable_fields_names', out, 'field') ?? [];
  stringList(site, 'asymmetric_tables', out, 'collection');
  if (indexed.length > 1) {
    out.push({ resource, file, path: join(base, 'indexed_queryable_fields_names'), rule: 'sync.indexed_queryable_fields_names.count', message: 'sync supports only one indexed queryable field' });
  }
  for (const [i, field] of indexed.entries()) {
    if (!queryable.includes(field)) {
      out.push({ resource, file, path: `${join(base, 'indexed_queryable_fields_names')}[${i}]`, rule: 'sync.indexed_queryable_fields_names.not_queryable', message: `the indexed queryable field "${field}" must also be in queryable_fields_names` });
    }
  }
  const perCollection = sync.collection_queryable_fields_names;
  if (perCollection !== undefined) {
    if (!isPlainObject(perCollection)) {
      out.push({ resource, file, path: join(base, 'collection_queryable_fields_names'), rule: 'field.type', message: 'collection_queryable_fields_names must map collection names to arrays of field names' });
    } else {
      for (const [collection, fields] of Object.entries(perCollection)) {
        const ok = Array.isArray(fields) && fields.every((f) => typeof f === 'string' && f !== '' && !f.startsWith('$'));
        if (!ok) out.push({ resource, file, path: jsonPath(join(base, 'collection_queryable_fields_names'), collection), rule: 'sync.collection_queryable_fields_names.value', message: `the queryable fields of "${collection}" must be an array of field names` });
      }
    }
  }
  if (sync.permissions !== undefined && !isPlainObject(sync.permissions)) {
    out.push({ resource, file, path: join(base, 'permissions'), rule: 'field.type', message: 'permissions (deprecated) must be an object' });
  }
  if (site.service) out.push(...checkQueryableFieldTypes(site.service, sync, indexed[0]));
  return out;
}

/** Queryable fields that a synced schema defines must have a queryable type; the indexed one must be in every schema with one type. */
function checkQueryableFieldTypes(service: AppService, sync: JsonObject, indexedField: string | undefined): FlexibleSyncFinding[] {
  const out: FlexibleSyncFinding[] = [];
  const indexedTypes: Array<{ rule: CollectionRule; file: string; type: string }> = [];
  for (const { rule, schema } of syncedSchemas(service)) {
    const file = at.collectionRule(service, rule);
    const props = isPlainObject(schema.properties) ? (schema.properties as JsonObject) : {};
    for (const field of queryableFieldsOf(sync, rule)) {
      const prop = props[field];
      if (prop === undefined || field === '_id') continue;
      if (!queryableType(prop, QUERYABLE_BSON_TYPES)) {
        out.push({ resource: rule, file, path: jsonPath('schema.properties', field) + '.bsonType', rule: 'sync.queryable_fields_names.type', message: `the queryable field "${field}" of ${rule.database}.${rule.collection} must be a boolean, number, string, date, ObjectId or UUID, or an array of them` });
      }
    }
    if (indexedField === undefined) continue;
    const prop = props[indexedField];
    if (prop === undefined) {
      out.push({ resource: rule, file, path: 'schema.properties', rule: 'sync.indexed_queryable_fields_names.schema', message: `the indexed queryable field "${indexedField}" must be defined in the schema of every synced collection; ${rule.database}.${rule.collection} lacks it` });
      continue;
    }
    if (!queryableType(prop, INDEXABLE_BSON_TYPES) || bsonTypesOf(prop).includes('array')) {
      out.push({ resource: rule, file, path: jsonPath('schema.properties', indexedField) + '.bsonType', rule: 'sync.indexed_queryable_fields_names.type', message: `the indexed queryable field "${indexedField}" must be a string, int, long, ObjectId or UUID` });
    }
    indexedTypes.push({ rule, file, type: bsonTypesOf(prop).filter((t) => t !== 'null').map((t) => (t === 'int' ? 'long' : t)).join('|') });
  }
  // One type everywhere: the collections that differ from the most common type are the ones at fault.
  const counts = new Map<string, number>();
  for (const { type } of indexedTypes) counts.set(type, (counts.get(type) ?? 0) + 1);
  const common = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  for (const { rule, file, type } of indexedTypes) {
    if (type === common || indexedField === undefined) continue;
    out.push({ resource: rule, file, path: jsonPath('schema.properties', indexedField), rule: 'sync.indexed_queryable_fields_names.type', message: `the indexed queryable field "${indexedField}" must have one type in every synced collection: ${type} in ${rule.database}.${rule.collection}, ${String(common)} elsewhere` });
  }
  return out;
}

// ---- roles --------------------------------------------------------------------------------------------

/** Field names a document filter reads (query keys, `%%root.x`-style references), through $and/$or/$nor. */
export function fieldsReadBy(filter: unknown, out = new Set<string>()): Set<string> {
  const fromExpansion = (text: string): void => {
    for (const prefix of DOCUMENT_EXPANSIONS) {
      if (text === prefix || text.startsWith(`${prefix}.`)) {
        const rest = text.slice(prefix.length + 1);
        if (rest !== '') out.add(rest.split('.')[0] ?? rest);
        return;
      }
    }
  };
  if (typeof filter === 'string') fromExpansion(filter);
  else if (Array.isArray(filter)) for (const item of filter) fieldsReadBy(item, out);
  else if (isPlainObject(filter)) {
    for (const [key, value] of Object.entries(filter)) {
      if (key === '$and' || key === '$or' || key === '$nor' || key === '%and' || key === '%or' || key === '%nor' || key === '%not') fieldsReadBy(value, out);
      else if (key.startsWith('%%')) {
        fromExpansion(key);
        fieldsReadBy(value, out);
      } else if (key.startsWith('$') || key.startsWith('%')) fieldsReadBy(value, out);
      else {
        out.add(key.split('.')[0] ?? key);
        fieldsReadBy(value, out);
      }
    }
  }
  return out;
}

function usesDocument(expression: unknown): boolean {
  if (typeof expression === 'string') return DOCUMENT_EXPANSIONS.some((p) => expression === p || expression.startsWith(`${p}.`));
  if (Array.isArray(expression)) return expression.some(usesDocument);
  if (isPlainObject(expression)) return Object.entries(expression).some(([k, v]) => usesDocument(k) || usesDocument(v));
  return false;
}

function roleFindings(role: Role, base: string, queryable: ReadonlySet<string> | undefined, resource: object, file: string, where: string): FlexibleSyncFinding[] {
  const out: FlexibleSyncFinding[] = [];
  const name = typeof role.name === 'string' ? role.name : '?';
  const say = (path: string, rule: string, reason: string): void => {
    out.push({ resource, file, path: `${base}.${path}`, rule, message: `role "${name}" of ${where} is not sync compatible (a sync session it applies to is denied): ${reason}` });
  };
  if (role.apply_when !== undefined && usesDocument(role.apply_when)) {
    say('apply_when', 'sync.role.apply_when.document', 'apply_when is evaluated once per collection when a sync session opens, so it cannot use document expansions (%%root, %%this, ...)');
  }
  const filters = role.document_filters;
  if (!isPlainObject(filters) || filters.read === undefined || filters.write === undefined) {
    say('document_filters', 'sync.role.document_filters.required', 'document_filters.read and document_filters.write must be defined (true, false, or a filter on queryable fields)');
  } else if (queryable) {
    for (const kind of ['read', 'write'] as const) {
      for (const field of fieldsReadBy(filters[kind])) {
        if (!queryable.has(field)) say(`document_filters.${kind}`, 'sync.role.document_filters.queryable', `document_filters.${kind} uses "${field}", which is not a queryable field`);
      }
    }
  }
  for (const kind of ['read', 'write'] as const) {
    if (role[kind] !== undefined && typeof role[kind] !== 'boolean') say(kind, `sync.role.${kind}.boolean`, `${kind} must be true or false`);
  }
  return out;
}

/** The roles of the synced data source that flexible sync cannot use while it is on, and why. */
export function checkSyncCompatibleRoles(service: AppService, sync: JsonObject): FlexibleSyncFinding[] {
  const out: FlexibleSyncFinding[] = [];
  for (const rule of service.collectionRules) {
    if (!Array.isArray(rule.roles)) continue;
    const queryable = queryableFieldsOf(sync, rule);
    const file = at.collectionRule(service, rule);
    rule.roles.forEach((role, i) => {
      if (isPlainObject(role)) out.push(...roleFindings(role, `roles[${i}]`, queryable, rule, file, `${rule.database}.${rule.collection}`));
    });
  }
  const def: DefaultRule | undefined = service.defaultRule;
  if (def && Array.isArray(def.roles)) {
    const global = new Set<string>(['_id', ...(Array.isArray(sync.queryable_fields_names) ? sync.queryable_fields_names.filter((f): f is string => typeof f === 'string') : [])]);
    const file = `${at.serviceDir(service)}/default_rule.json`;
    def.roles.forEach((role, i) => {
      if (isPlainObject(role)) out.push(...roleFindings(role, `roles[${i}]`, global, def, file, 'the default rule'));
    });
  }
  return out;
}
