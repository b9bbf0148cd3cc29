/**
 * A small in-memory object store that applies changesets the way realm-core's InstructionApplier does,
 * strictly: missing objects, bad list indices and `prior_size` mismatches are errors (a client would
 * answer them with a bad-changeset error). It exists to check merges and compaction by comparing the
 * states that different histories reach; `snapshot()` gives a canonical JSON form of the state.
 */
import { SyncProtocolError } from '../errors';
import type { AddColumn, AddTable, Instruction, PathElement, PathInstruction, Payload, PrimaryKey } from '../changeset/types';
import { isPathInstruction } from '../changeset/types';
import { normalizeInt64 } from '../changeset/varint';
import { primaryKeyString } from '../merge/compare';
import { formatPayload } from '../changeset/debug';

export class EmbeddedValue {
  readonly fields = new Map<string, Value>();
  constructor(readonly table: string) {}
}
export class DictValue {
  readonly entries = new Map<string, Value>();
}
export class SetValue {
  readonly members = new Set<string>();
}
/** Scalars are kept as their canonical text (see `scalarKey`). */
export type Value = string | EmbeddedValue | DictValue | SetValue | Value[];

interface TableSchema {
  spec: AddTable['spec'];
  columns: Map<string, AddColumn>;
}

function fail(message: string): never {
  throw new SyncProtocolError('bad_changeset', message);
}

export function scalarKey(p: Payload): string {
  if (p.type === 'Int') return `Int(${String(p.value)})`;
  if (p.type === 'Null') return 'null';
  return formatPayload(p);
}

type Parent = { kind: 'object'; obj: EmbeddedValue } | { kind: 'list'; list: Value[] } | { kind: 'dict'; dict: DictValue };

export class ObjectStore {
  private readonly tables = new Map<string, TableSchema>();
  private readonly objects = new Map<string, Map<string, EmbeddedValue>>();

  applyChangeset(instructions: readonly (Instruction | null)[]): void {
    for (const instr of instructions) if (instr) this.apply(instr);
  }

  apply(instr: Instruction): void {
    if (isPathInstruction(instr)) {
      this.applyPath(instr);
      return;
    }
    switch (instr.type) {
      case 'AddTable': {
        const existing = this.tables.get(instr.table);
        if (existing) {
          if (JSON.stringify(existing.spec) !== JSON.stringify(instr.spec)) fail(`AddTable: The existing table '${instr.table}' has different properties`);
          return;
        }
        this.tables.set(instr.table, { spec: instr.spec, columns: new Map() });
        this.objects.set(instr.table, new Map());
        return;
      }
      case 'EraseTable':
        this.tables.delete(instr.table);
        this.objects.delete(instr.table);
        return;
      case 'AddColumn': {
        const t = this.table(instr.table);
        const existing = t.columns.get(instr.field);
        if (existing) {
          const same =
            existing.valueType === instr.valueType &&
            existing.nullable === instr.nullable &&
            existing.collectionType === instr.collectionType &&
            existing.keyType === instr.keyType &&
            existing.linkTargetTable === instr.linkTargetTable;
          if (!same) fail(`AddColumn: '${instr.table}.${instr.field}' has different properties`);
          return;
        }
        t.columns.set(instr.field, instr);
        return;
      }
      case 'EraseColumn':
        this.table(instr.table).columns.delete(instr.field);
        for (const objs of this.objects.values()) for (const o of objs.values()) eraseField(o, instr.table, instr.field);
        return;
      case 'CreateObject': {
        const t = this.table(instr.table);
        if (t.spec.kind === 'Embedded') fail(`CreateObject: '${instr.table}' is embedded`);
        const objs = this.objects.get(instr.table) ?? fail('no table');
        const key = primaryKeyString(instr.object);
        if (!objs.has(key)) objs.set(key, new EmbeddedValue(instr.table));
        return;
      }
      case 'EraseObject':
        this.objects.get(instr.table)?.delete(primaryKeyString(instr.object));
        return;
    }
  }

  private table(name: string): TableSchema {
    return this.tables.get(name) ?? fail(`No such table: '${name}'`);
  }

  private column(table: string, field: string): AddColumn {
    return this.table(table).columns.get(field) ?? fail(`No such property: '${table}.${field}'`);
  }

  /** Reads a field, creating the empty collection a collection column implies. */
  private field(obj: EmbeddedValue, field: string): Value | undefined {
    const existing = obj.fields.get(field);
    if (existing !== undefined) return existing;
    const col = this.column(obj.table, field);
    let created: Value | undefined;
    if (col.collectionType === 'List') created = [];
    else if (col.collectionType === 'Set') created = new SetValue();
    else if (col.collectionType === 'Dictionary') created = new DictValue();
    if (created !== undefined) obj.fields.set(field, created);
    return created;
  }

  private newValue(p: Payload, owner: Parent, key: string | number): Value | null {
    switch (p.type) {
      case 'ObjectValue': {
        const table = this.embeddedTarget(owner, key);
        return new EmbeddedValue(table);
      }
      case 'List':
        return [];
      case 'Dictionary':
        return new DictValue();
      case 'Set':
        return new SetValue();
      case 'Null':
        return null;
      case 'Erased':
        return fail('Erased outside a dictionary');
      case 'Int':
      case 'Bool':
      case 'String':
      case 'Binary':
      case 'Timestamp':
      case 'Float':
      case 'Double':
      case 'Decimal':
      case 'Link':
      case 'ObjectId':
      case 'UUID':
        return scalarKey(p);
    }
  }

  private embeddedTarget(owner: Parent, key: string | number): string {
    if (owner.kind === 'object' && typeof key === 'string') {
      const col = this.column(owner.obj.table, key);
      const target = col.linkTargetTable;
      if (col.valueType !== 'Link' || target === undefined || this.table(target).spec.kind !== 'Embedded') fail('ObjectValue for a non-embedded property');
      return target;
    }
    const target = (owner as { embeddedTable?: string }).embeddedTable;
    return target ?? fail('ObjectValue in a collection without an embedded target');
  }

  /** Walks `field` + `path` but the last element; returns the container and the last key. */
  private resolve(instr: PathInstruction): { parent: Parent & { embeddedTable?: string }; key: string | number } {
    const objs = this.objects.get(instr.table) ?? fail(`No such table: '${instr.table}'`);
    const obj = objs.get(primaryKeyString(instr.object)) ?? fail(`${instr.type}: No such object in class '${instr.table}'`);
    let parent: Parent & { embeddedTable?: string } = { kind: 'object', obj };
    let key: string | number = instr.field;
    for (const element of instr.path) {
      const current = this.readSlot(parent, key);
      parent = this.asParent(current, element, parent, key);
      key = element;
    }
    return { parent, key };
  }

  private collectionEmbeddedTarget(parent: Parent, key: string | number): string | undefined {
    if (parent.kind === 'object' && typeof key === 'string') {
      const col = this.column(parent.obj.table, key);
      if (col.valueType === 'Link' && col.linkTargetTable !== undefined && this.tables.get(col.linkTargetTable)?.spec.kind === 'Embedded') {
        return col.linkTargetTable;
      }
    }
    return undefined;
  }

  private asParent(value: Value | undefined, element: PathElement, owner: Parent, ownerKey: string | number): Parent & { embeddedTable?: string } {
    const embeddedTable = this.collectionEmbeddedTarget(owner, ownerKey);
    if (Array.isArray(value)) {
      if (typeof element !== 'number') fail('string path element into a list');
      return embeddedTable === undefined ? { kind: 'list', list: value } : { kind: 'list', list: value, embeddedTable };
    }
    if (value instanceof DictValue) {
      if (typeof element !== 'string') fail('index path element into a dictionary');
      return embeddedTable === undefined ? { kind: 'dict', dict: value } : { kind: 'dict', dict: value, embeddedTable };
    }
    if (value instanceof EmbeddedValue) {
      if (typeof element !== 'string') fail('index path element into an embedded object');
      return { kind: 'object', obj: value };
    }
    return fail('Invalid path (not a container or a null embedded object)');
  }

  private readSlot(parent: Parent, key: string | number): Value | undefined {
    switch (parent.kind) {
      case 'object':
        if (typeof key !== 'string') fail('index into an object');
        return this.field(parent.obj, key);
      case 'list':
        if (typeof key !== 'number' || key >= parent.list.length) fail(`list index ${String(key)} out of range`);
        return parent.list[key];
      case 'dict':
        return parent.dict.entries.get(String(key));
    }
  }

  private applyPath(instr: PathInstruction): void {
    const { parent, key } = this.resolve(instr);
    switch (instr.type) {
      case 'Update': {
        // Setting a Mixed value to a collection it already holds keeps that collection (realm-core makes
        // this idempotent so that concurrent creations of the same nested collection converge).
        if (instr.value.type === 'List' || instr.value.type === 'Dictionary' || instr.value.type === 'Set') {
          const existing = parent.kind === 'list' && typeof key === 'number' ? parent.list[key] : parent.kind === 'dict' ? parent.dict.entries.get(String(key)) : parent.kind === 'object' ? parent.obj.fields.get(String(key)) : undefined;
          const kind = instr.value.type;
          if ((kind === 'List' && Array.isArray(existing)) || (kind === 'Dictionary' && existing instanceof DictValue) || (kind === 'Set' && existing instanceof SetValue)) {
            if (parent.kind === 'list' && instr.priorSize !== parent.list.length) fail(`Update: Invalid prior_size (list size = ${parent.list.length}, prior_size = ${instr.priorSize})`);
            return;
          }
        }
        if (parent.kind === 'list') {
          const list = parent.list;
          if (typeof key !== 'number' || key >= list.length) fail(`Update: Invalid index ${String(key)} (list size ${list.length})`);
          if (instr.priorSize !== list.length) fail(`Update: Invalid prior_size (list size = ${list.length}, prior_size = ${instr.priorSize})`);
          if (instr.value.type === 'ObjectValue') return; // idempotent inside lists
          const v = this.newValue(instr.value, parent, key);
          list[key] = v ?? 'null';
          return;
        }
        if (parent.kind === 'dict') {
          if (instr.value.type === 'Erased') {
            parent.dict.entries.delete(String(key));
            return;
          }
          parent.dict.entries.set(String(key), this.newValue(instr.value, parent, key) ?? 'null');
          return;
        }
        const field = String(key);
        this.column(parent.obj.table, field);
        if (instr.value.type === 'ObjectValue' && parent.obj.fields.get(field) instanceof EmbeddedValue) return;
        const v = this.newValue(instr.value, parent, field);
        if (v === null) parent.obj.fields.delete(field);
        else parent.obj.fields.set(field, v);
        return;
      }
      case 'AddInteger': {
        const current = this.readSlot(parent, key);
        if (current === undefined || current === 'null') return;
        const m = typeof current === 'string' ? /^Int\((-?\d+)\)$/.exec(current) : null;
        if (!m?.[1]) fail('AddInteger: not an integer');
        const sum = normalizeInt64(BigInt.asIntN(64, BigInt(m[1]) + BigInt(instr.value)));
        this.write(parent, key, `Int(${String(sum)})`);
        return;
      }
      case 'ArrayInsert':
      case 'ArrayMove':
      case 'ArrayErase': {
        if (parent.kind !== 'list' || typeof key !== 'number') return fail(`${instr.type}: not a list`);
        const list = parent.list;
        if (instr.priorSize !== list.length) fail(`${instr.type}: Invalid prior_size (list size = ${list.length}, prior_size = ${instr.priorSize})`);
        if (instr.type === 'ArrayInsert') {
          if (key > list.length) fail(`ArrayInsert: Invalid insertion index (index = ${key}, prior_size = ${instr.priorSize})`);
          list.splice(key, 0, this.newValue(instr.value, parent, key) ?? 'null');
        } else if (instr.type === 'ArrayErase') {
          if (key >= list.length) fail(`ArrayErase: Invalid index (index = ${key}, prior_size = ${instr.priorSize})`);
          list.splice(key, 1);
        } else {
          if (key >= list.length || instr.ndx2 >= list.length) fail('ArrayMove: Invalid index');
          const [moved] = list.splice(key, 1);
          list.splice(instr.ndx2, 0, moved ?? 'null');
        }
        return;
      }
      case 'Clear': {
        // In a Mixed slot, Clear also sets the collection type: the slot becomes an empty collection of that
        // type whatever it held before (a Set there is an error), as realm-core's applier does.
        const mixedSlot =
          parent.kind !== 'object' ||
          (() => {
            const col = this.column(parent.obj.table, String(key));
            return col.valueType === 'Null' && col.collectionType === 'Single';
          })();
        if (mixedSlot) {
          const current = this.readSlot(parent, key);
          if (current instanceof SetValue) fail('Clear: Mixed value is a Set');
          if (parent.kind === 'dict' && current === undefined) fail(`Clear: Key '${String(key)}' not found`);
          const empty: Value = instr.collectionType === 'Dictionary' ? new DictValue() : instr.collectionType === 'Set' ? new SetValue() : [];
          this.write(parent, key, empty);
          return;
        }
        const target = this.readSlot(parent, key);
        if (Array.isArray(target)) target.length = 0;
        else if (target instanceof DictValue) target.entries.clear();
        else if (target instanceof SetValue) target.members.clear();
        else fail('Clear: not a collection');
        return;
      }
      case 'SetInsert':
      case 'SetErase': {
        const target = this.readSlot(parent, key);
        if (!(target instanceof SetValue)) return fail(`${instr.type}: not a set`);
        if (instr.type === 'SetInsert') target.members.add(scalarKey(instr.value));
        else target.members.delete(scalarKey(instr.value));
        return;
      }
    }
  }

  private write(parent: Parent, key: string | number, value: Value): void {
    if (parent.kind === 'object') parent.obj.fields.set(String(key), value);
    else if (parent.kind === 'dict') parent.dict.entries.set(String(key), value);
    else parent.list[Number(key)] = value;
  }

  hasObject(table: string, pk: PrimaryKey): boolean {
    return this.objects.get(table)?.has(primaryKeyString(pk)) ?? false;
  }

  /** The value at `field` + `path` of an object, or undefined when absent. */
  read(table: string, pk: PrimaryKey, field: string, path: readonly PathElement[] = []): Value | undefined {
    const obj = this.objects.get(table)?.get(primaryKeyString(pk));
    if (!obj) return undefined;
    let v: Value | undefined = obj.fields.get(field);
    for (const e of path) {
      if (v === undefined) return undefined;
      if (Array.isArray(v)) v = typeof e === 'number' ? v[e] : undefined;
      else if (v instanceof DictValue) v = v.entries.get(String(e));
      else if (v instanceof EmbeddedValue) v = v.fields.get(String(e));
      else return undefined;
    }
    return v;
  }

  objectCount(table: string): number {
    return this.objects.get(table)?.size ?? 0;
  }

  /** Canonical JSON of the data (objects and values; empty collections and nulls count as absent). */
  snapshot(): string {
    const out: Record<string, Record<string, unknown>> = {};
    for (const [table, objs] of [...this.objects.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const rows: Record<string, unknown> = {};
      for (const [key, obj] of [...objs.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) rows[key] = dump(obj);
      out[table] = rows;
    }
    return JSON.stringify(out);
  }
}

function dump(v: Value): unknown {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(dump);
  if (v instanceof SetValue) return [...v.members].sort();
  const entries = v instanceof DictValue ? v.entries : v.fields;
  const out: Record<string, unknown> = {};
  for (const k of [...entries.keys()].sort()) {
    const x = entries.get(k);
    if (x === undefined) continue;
    if (v instanceof EmbeddedValue && (x === 'null' || isEmptyCollection(x))) continue;
    out[k] = dump(x);
  }
  return out;
}

function isEmptyCollection(v: Value): boolean {
  return (Array.isArray(v) && v.length === 0) || (v instanceof SetValue && v.members.size === 0) || (v instanceof DictValue && v.entries.size === 0);
}

function eraseField(obj: EmbeddedValue, table: string, field: string): void {
  if (obj.table === table) obj.fields.delete(field);
  for (const v of obj.fields.values()) walk(v, (e) => eraseField(e, table, field));
}

function walk(v: Value, visit: (e: EmbeddedValue) => void): void {
  if (v instanceof EmbeddedValue) visit(v);
  else if (Array.isArray(v)) v.forEach((x) => walk(x, visit));
  else if (v instanceof DictValue) for (const x of v.entries.values()) walk(x, visit);
}
