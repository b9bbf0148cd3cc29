/**
 * GraphQL arguments to datastore arguments: `<T>QueryInput` to a MongoDB filter, `<T>SortByInput` to a
 * sort, `<T>InsertInput` to a document and `<T>UpdateInput` to an update document, with GraphQL field
 * names turned back into stored keys. Relationship members need the foreign collection: the caller's
 * `RelationPort` looks up foreign keys and inserts created documents, so this module never touches a store.
 */
import type { CollectionModel, FieldModel, GraphqlModel, ObjectModel } from './model';
import type { SortValue } from './build-schema';

type Doc = Record<string, unknown>;

export interface RelationPort {
  /** Values of the relationship's foreign key in the foreign documents matching `filter` (the caller's rules apply). */
  foreignKeys(field: FieldModel, target: CollectionModel, filter: Doc): Promise<unknown[]>;
  /** Inserts `documents` into the foreign collection; answers their foreign-key values in order. */
  create(field: FieldModel, target: CollectionModel, documents: Doc[]): Promise<unknown[]>;
}

const comparisons: Record<string, string> = { _ne: '$ne', _gt: '$gt', _gte: '$gte', _lt: '$lt', _lte: '$lte', _in: '$in', _nin: '$nin' };

export class ArgumentTranslator {
  private readonly byName: Map<string, CollectionModel>;

  constructor(
    model: GraphqlModel,
    private readonly relations: RelationPort,
  ) {
    this.byName = new Map(model.collections.map((c) => [c.name, c]));
  }

  /** A filter for `input`; `undefined` and `{}` match every document. */
  async filter(object: ObjectModel, input: unknown, prefix = ''): Promise<Doc> {
    if (input === undefined || input === null) return {};
    const members = input as Doc;
    const byField = new Map(object.fields.map((f) => [f.name, f]));
    const clauses: Doc[] = [];
    const merged: Doc = {};
    const put = (key: string, condition: unknown): void => {
      const path = prefix + key;
      if (!(path in merged)) {
        merged[path] = condition;
        return;
      }
      clauses.push({ [path]: condition });
    };
    for (const [member, value] of Object.entries(members)) {
      if (value === undefined) continue;
      if (member === 'AND' || member === 'OR') {
        const parts = await Promise.all((value as unknown[]).map((part) => this.filter(object, part, prefix)));
        clauses.push({ [member === 'AND' ? '$and' : '$or']: parts.length > 0 ? parts : [{}] });
        continue;
      }
      const [field, suffix] = splitMember(member, byField);
      if (!field) continue;
      if (suffix === '_exists') {
        put(field.key, value === true ? { $ne: null } : null);
        continue;
      }
      if (field.kind === 'relationship') {
        clauses.push(await this.relationshipFilter(field, suffix, value, prefix));
        continue;
      }
      if (field.kind === 'object') {
        const nested = field.object as ObjectModel;
        if (field.listDepth === 0) {
          const sub = await this.filter(nested, value, `${prefix}${field.key}.`);
          if (Object.keys(sub).length > 0) clauses.push(sub);
          continue;
        }
        const parts = await Promise.all((value as unknown[]).map((part) => this.filter(nested, part)));
        if (suffix === '') clauses.push(...parts.map((part) => ({ [prefix + field.key]: { $elemMatch: part } })));
        else if (suffix === '_in') put(field.key, { $elemMatch: { $or: parts.length ? parts : [{ _never: { $exists: true, $in: [] } }] } });
        else put(field.key, { $not: { $elemMatch: { $or: parts.length ? parts : [{ _never: { $exists: true, $in: [] } }] } } });
        continue;
      }
      if (suffix === '') {
        put(field.key, value);
        continue;
      }
      const operator = comparisons[suffix];
      const existing = merged[prefix + field.key];
      if (isOperatorObject(existing)) existing[operator] = value;
      else put(field.key, { [operator]: value });
    }
    if (clauses.length === 0) return merged;
    if (Object.keys(merged).length > 0) clauses.unshift(merged);
    return clauses.length === 1 ? clauses[0] : { $and: clauses };
  }

  private async relationshipFilter(field: FieldModel, suffix: string, value: unknown, prefix: string): Promise<Doc> {
    const relationship = field.relationship as NonNullable<FieldModel['relationship']>;
    const target = this.target(relationship.target);
    const path = prefix + field.key;
    const keysOf = async (inputs: unknown[]): Promise<unknown[]> => {
      const filters = await Promise.all(inputs.map((input) => this.filter(target, input)));
      return this.relations.foreignKeys(field, target, filters.length === 1 ? filters[0] : { $or: filters.length ? filters : [{}] });
    };
    if (!relationship.isList) return { [path]: { $in: await keysOf([value]) } };
    const inputs = value as unknown[];
    if (suffix === '_in') return { [path]: { $in: await keysOf(inputs) } };
    if (suffix === '_nin') return { [path]: { $nin: await keysOf(inputs) } };
    // Plain `f: [q...]`: every listed query must be met by one of the linked documents.
    const each = await Promise.all(inputs.map(async (input) => ({ [path]: { $in: await keysOf([input]) } })));
    return each.length === 1 ? each[0] : { $and: each };
  }

  sort(value: unknown): Record<string, 1 | -1> | undefined {
    if (value === undefined || value === null) return undefined;
    const sort = value as SortValue;
    return { [sort.key]: sort.direction };
  }

  /** A stored document from an InsertInput; relation inputs link or create foreign documents. */
  async document(object: ObjectModel, input: unknown): Promise<Doc> {
    const document: Doc = {};
    const byField = new Map(object.fields.map((f) => [f.name, f]));
    for (const [member, value] of Object.entries((input ?? {}) as Doc)) {
      const field = byField.get(member);
      if (!field || value === undefined) continue;
      document[field.key] = await this.value(field, value);
    }
    return document;
  }

  private async value(field: FieldModel, value: unknown): Promise<unknown> {
    if (value === null) return null;
    switch (field.kind) {
      case 'scalar':
        return value;
      case 'object':
        return this.nestedValue(field.object as ObjectModel, value, field.listDepth);
      case 'relationship':
        return this.relate(field, value as Doc);
    }
  }

  private async nestedValue(object: ObjectModel, value: unknown, depth: number): Promise<unknown> {
    if (value === null) return null;
    if (depth === 0) return this.document(object, value);
    return Promise.all((value as unknown[]).map((item) => this.nestedValue(object, item, depth - 1)));
  }

  /** `create` wins over `link` (reference A.5). */
  private async relate(field: FieldModel, input: Doc): Promise<unknown> {
    const relationship = field.relationship as NonNullable<FieldModel['relationship']>;
    const target = this.target(relationship.target);
    if (input['create'] !== undefined && input['create'] !== null) {
      const created = relationship.isList ? (input['create'] as unknown[]) : [input['create']];
      const documents = await Promise.all(created.map((item) => this.document(target, item)));
      const keys = await this.relations.create(field, target, documents);
      return relationship.isList ? keys : keys[0];
    }
    return input['link'] ?? null;
  }

  /** An update document from an UpdateInput: `$set`, `$unset` and `$inc`, embedded objects by dotted path. */
  async update(object: ObjectModel, input: unknown): Promise<Doc> {
    const update: { $set: Doc; $unset: Doc; $inc: Doc } = { $set: {}, $unset: {}, $inc: {} };
    await this.collectUpdate(object, (input ?? {}) as Doc, '', update);
    const out: Doc = {};
    for (const operator of ['$set', '$unset', '$inc'] as const) if (Object.keys(update[operator]).length > 0) out[operator] = update[operator];
    return out;
  }

  private async collectUpdate(object: ObjectModel, input: Doc, prefix: string, update: { $set: Doc; $unset: Doc; $inc: Doc }): Promise<void> {
    const byField = new Map(object.fields.map((f) => [f.name, f]));
    for (const [member, value] of Object.entries(input)) {
      if (value === undefined) continue;
      const [field, suffix] = splitMember(member, byField);
      if (!field) continue;
      const path = prefix + field.key;
      if (suffix === '_unset') {
        if (value === true) update.$unset[path] = '';
      } else if (suffix === '_inc') {
        update.$inc[path] = value;
      } else if (field.kind === 'object' && field.listDepth === 0 && value !== null) {
        await this.collectUpdate(field.object as ObjectModel, value as Doc, `${path}.`, update);
      } else {
        update.$set[path] = await this.value(field, value);
      }
    }
  }

  target(name: string): CollectionModel {
    const target = this.byName.get(name);
    if (!target) throw new Error(`relationship to unknown type ${name}`);
    return target;
  }
}

const suffixes = ['_exists', '_unset', '_inc', '_nin', '_ne', '_gte', '_gt', '_lte', '_lt', '_in'];

/** `title_gte` -> [title field, '_gte']; a field whose own name ends like an operator wins. */
function splitMember(member: string, byField: Map<string, FieldModel>): [FieldModel | undefined, string] {
  const direct = byField.get(member);
  if (direct) return [direct, ''];
  for (const suffix of suffixes) {
    if (member.endsWith(suffix)) {
      const field = byField.get(member.slice(0, -suffix.length));
      if (field) return [field, suffix];
    }
  }
  return [undefined, ''];
}

function isOperatorObject(value: unknown): value is Doc {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => k.startsWith('$')) && !('_bsontype' in value);
}
