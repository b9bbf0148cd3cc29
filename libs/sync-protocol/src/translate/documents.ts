/**
 * Integrated changesets applied to the documents of the synced collections (changeset -> documents), as
 * App Services stores synced objects: `_id` is the primary key, embedded objects and dictionaries are
 * subdocuments, lists and sets are arrays, links hold the target's primary key, Mixed holds the BSON value,
 * and the partition key field holds the bound partition value on every document.
 *
 * The history already accepted these changesets, so this is a projection that never refuses: an
 * instruction whose path does not exist in the document is skipped and counted, never thrown. Loading and
 * writing the documents is the caller's (only the objects `touchedObjects` names are needed).
 */
import { Int32, Long } from 'bson';
import type { Instruction, Payload, PrimaryKey } from '../changeset/types';
import { primaryKeyString } from '../merge/compare';
import { formatPartitionValue, type PartitionValue } from '../wire/partition';
import { canonicalBson, payloadToBson, primaryKeyToBson } from './values';

export type BsonDocument = Record<string, unknown>;

/** The partition a session is bound to: the key field and its value. */
export interface PartitionBinding {
  key: string;
  value: PartitionValue;
  /** The BSON value stored in the key field (`partitionValueToBson(value)`). */
  bson: unknown;
}

/** A top-level object of the partition and its document (null when there is none). */
export interface ObjectDocument {
  table: string;
  object: PrimaryKey;
  doc: BsonDocument | null;
}

export type DocumentSet = Map<string, ObjectDocument>;

export function objectKey(table: string, object: PrimaryKey): string {
  return `${table}\u0000${primaryKeyString(object)}`;
}

/** The top-level objects a changeset touches (embedded objects are addressed through their owner). */
export function touchedObjects(instructions: readonly Instruction[]): Array<{ key: string; table: string; object: PrimaryKey }> {
  const seen = new Map<string, { key: string; table: string; object: PrimaryKey }>();
  for (const instr of instructions) {
    if (!('object' in instr)) continue;
    const key = objectKey(instr.table, instr.object);
    if (!seen.has(key)) seen.set(key, { key, table: instr.table, object: instr.object });
  }
  return [...seen.values()];
}

function payloadPartition(p: Payload): PartitionValue | undefined {
  if (p.type === 'Null') return { type: 'null' };
  if (p.type === 'String') return { type: 'string', value: p.value };
  if (p.type === 'Int') return { type: 'int', value: BigInt(p.value) };
  if (p.type === 'ObjectId') return { type: 'objectId', value: p.value };
  if (p.type === 'UUID') return { type: 'uuid', value: p.value };
  return undefined;
}

/**
 * The error text when a changeset writes a partition key value other than the bound one (App Services
 * answers it with bad changeset, 212), undefined when every write keeps the partition.
 */
export function partitionViolation(instructions: readonly Instruction[], binding: PartitionBinding): string | undefined {
  const expected = formatPartitionValue(binding.value);
  for (const instr of instructions) {
    if (instr.type !== 'Update' || instr.field !== binding.key || instr.path.length > 0) continue;
    const found = payloadPartition(instr.value);
    const text = found ? formatPartitionValue(found) : instr.value.type;
    if (text !== expected) return `UPDATE instruction had incorrect partition value for key "${binding.key}" (expected ${expected}, found ${text})`;
  }
  return undefined;
}

function isPlainDocument(value: unknown): value is BsonDocument {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && !(value instanceof Uint8Array) && !('_bsontype' in value);
}

/** A set member read back from a store may be an int where sync wrote a long: compared by value. */
function sameValue(a: unknown, b: unknown): boolean {
  return canonicalBson(a) === canonicalBson(b);
}

type Slot = { parent: BsonDocument; key: string } | { parent: unknown[]; key: number };

/** The container and key an instruction's field + path lead to; missing containers are made when `create`. */
function slotOf(doc: BsonDocument, field: string, path: readonly (string | number)[], create: boolean): Slot | undefined {
  let parent: BsonDocument | unknown[] = doc;
  let key: string | number = field;
  for (const element of path) {
    let current: unknown = Array.isArray(parent) ? parent[key as number] : parent[key as string];
    if (current === undefined || current === null) {
      if (!create || Array.isArray(parent)) return undefined;
      current = typeof element === 'number' ? [] : {};
      parent[key as string] = current;
    }
    if (typeof element === 'number' ? !Array.isArray(current) : !isPlainDocument(current)) return undefined;
    parent = current as BsonDocument | unknown[];
    key = element;
  }
  if (Array.isArray(parent)) return typeof key === 'number' ? { parent, key } : undefined;
  return typeof key === 'string' ? { parent, key } : undefined;
}

function read(slot: Slot): unknown {
  return Array.isArray(slot.parent) ? slot.parent[slot.key as number] : (slot.parent)[slot.key as string];
}

function write(slot: Slot, value: unknown): void {
  if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = value;
  else (slot.parent)[slot.key as string] = value;
}

/** The stored form of a payload; a collection or embedded object keeps what the slot holds when of that kind. */
function storedValue(p: Payload, existing: unknown): unknown {
  if (p.type === 'ObjectValue' || p.type === 'Dictionary') return isPlainDocument(existing) ? existing : {};
  if (p.type === 'List' || p.type === 'Set') return Array.isArray(existing) ? existing : [];
  return payloadToBson(p);
}

function addInteger(current: unknown, delta: bigint): unknown {
  if (current instanceof Long) return Long.fromBigInt(BigInt.asIntN(64, current.toBigInt() + delta));
  if (current instanceof Int32) return Long.fromBigInt(BigInt(current.value) + delta);
  if (typeof current === 'number' && Number.isInteger(current)) return Long.fromBigInt(BigInt(current) + delta);
  return undefined;
}

/**
 * Applies integrated instructions to the partition's documents in `docs` (which must hold every object
 * `touchedObjects` names). Returns how many instructions found no place to apply.
 */
export function applyToDocuments(instructions: readonly Instruction[], docs: DocumentSet, binding?: PartitionBinding): { skipped: number } {
  let skipped = 0;
  for (const instr of instructions) {
    if (!('object' in instr)) continue;
    const entry = docs.get(objectKey(instr.table, instr.object));
    if (!entry) {
      skipped++;
      continue;
    }
    if (instr.type === 'CreateObject') {
      entry.doc ??= { _id: primaryKeyToBson(instr.object), ...(binding ? { [binding.key]: binding.bson } : {}) };
      continue;
    }
    if (instr.type === 'EraseObject') {
      entry.doc = null;
      continue;
    }
    const doc = entry.doc;
    if (!doc || !applyPath(doc, instr, binding)) skipped++;
  }
  if (binding) for (const entry of docs.values()) if (entry.doc) entry.doc[binding.key] = binding.bson;
  return { skipped };
}

function applyPath(doc: BsonDocument, instr: Exclude<Instruction, { type: 'AddTable' | 'EraseTable' | 'AddColumn' | 'EraseColumn' | 'CreateObject' | 'EraseObject' }>, binding: PartitionBinding | undefined): boolean {
  // The key field always holds the bound value (a client cannot move an object: that is checked before).
  if (binding && instr.field === binding.key && instr.path.length === 0) return true;
  const endsInIndex = typeof instr.path[instr.path.length - 1] === 'number';
  const slot = slotOf(doc, instr.field, instr.path, true);
  if (!slot) return false;
  switch (instr.type) {
    case 'Update': {
      if (instr.value.type === 'Erased') {
        if (Array.isArray(slot.parent)) return false;
        delete (slot.parent)[slot.key as string];
        return true;
      }
      if (Array.isArray(slot.parent) && (slot.key as number) >= slot.parent.length) return false;
      write(slot, storedValue(instr.value, read(slot)));
      return true;
    }
    case 'AddInteger': {
      const sum = addInteger(read(slot), BigInt(instr.value));
      if (sum === undefined) return false;
      write(slot, sum);
      return true;
    }
    case 'ArrayInsert': {
      if (!endsInIndex || !Array.isArray(slot.parent) || (slot.key as number) > slot.parent.length) return false;
      slot.parent.splice(slot.key as number, 0, storedValue(instr.value, undefined));
      return true;
    }
    case 'ArrayMove': {
      const list = slot.parent;
      if (!Array.isArray(list) || (slot.key as number) >= list.length || instr.ndx2 >= list.length) return false;
      const [moved] = list.splice(slot.key as number, 1);
      list.splice(instr.ndx2, 0, moved);
      return true;
    }
    case 'ArrayErase': {
      const list = slot.parent;
      if (!Array.isArray(list) || (slot.key as number) >= list.length) return false;
      list.splice(slot.key as number, 1);
      return true;
    }
    case 'Clear':
      write(slot, instr.collectionType === 'Dictionary' ? {} : []);
      return true;
    case 'SetInsert':
    case 'SetErase': {
      let members = read(slot);
      if (!Array.isArray(members)) {
        members = [];
        write(slot, members);
      }
      const list = members as unknown[];
      const value = payloadToBson(instr.value);
      const at = list.findIndex((member) => sameValue(member, value));
      if (instr.type === 'SetInsert' && at < 0) list.push(value);
      if (instr.type === 'SetErase' && at >= 0) list.splice(at, 1);
      return true;
    }
  }
}
