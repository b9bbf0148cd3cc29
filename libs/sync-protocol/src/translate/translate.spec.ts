import { type Binary, Decimal128, Double, Int32, Long, ObjectId, UUID } from 'bson';
import type { Instruction, PrimaryKey } from '../changeset/types';
import { parsePartitionValue } from '../wire/partition';
import { ObjectStore } from '../state/object-store';
import { documentPartition, objectInstructions, type Partitioning, translateDocumentChange } from './changes';
import { applyToDocuments, type DocumentSet, objectKey, type PartitionBinding, partitionViolation, touchedObjects } from './documents';
import { checkSchemaChanges, columnOf, schemaInstructions, type SyncSchema } from './schema';
import { canonicalBson, decimalFromBson, decimalToBson, mixedPayload, partitionValueFromBson, payloadToBson, scalarPayload } from './values';


const dogSchemaInstructions: Instruction[] = [
  { type: 'AddTable', table: 'Dog', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'ObjectId', pkNullable: false } },
  { type: 'AddTable', table: 'Address', spec: { kind: 'Embedded' } },
  columnOf('Address', 'street', 'String'),
  columnOf('Dog', '_partition', 'String', { nullable: true }),
  columnOf('Dog', 'name', 'String'),
  columnOf('Dog', 'age', 'Int', { nullable: true }),
  columnOf('Dog', 'toys', 'String', { collectionType: 'List' }),
  columnOf('Dog', 'tags', 'String', { collectionType: 'Set' }),
  columnOf('Dog', 'marks', 'Int', { collectionType: 'Dictionary', keyType: 'String' }),
  columnOf('Dog', 'address', 'Link', { nullable: true, linkTargetTable: 'Address' }),
  columnOf('Dog', 'homes', 'Link', { collectionType: 'List', linkTargetTable: 'Address' }),
  columnOf('Dog', 'friend', 'Link', { nullable: true, linkTargetTable: 'Dog' }),
  columnOf('Dog', 'extra', 'Null', { nullable: true }),
];

function dogSchema(): SyncSchema {
  const result = checkSchemaChanges(new Map(), dogSchemaInstructions, true);
  if (!result.ok) throw new Error(result.message);
  return result.schema;
}

const id = new ObjectId('65f0a1b2c3d4e5f601020304');
const pk: PrimaryKey = { type: 'ObjectId', value: id.toHexString() };
const p1 = parsePartitionValue('"p1"');
const binding: PartitionBinding = { key: '_partition', value: p1, bson: 'p1' };
const partitioning: Partitioning = { key: '_partition', type: 'string', required: false };

function update(field: string, value: Extract<Instruction, { type: 'Update' }>['value'], path: (string | number)[] = [], priorSize = 0): Instruction {
  return { type: 'Update', table: 'Dog', object: pk, field, path, value, isDefault: false, priorSize };
}

function applied(instructions: Instruction[], existing: Record<string, unknown> | null = null): Record<string, unknown> | null {
  const docs: DocumentSet = new Map(touchedObjects(instructions).map((o) => [o.key, { table: o.table, object: o.object, doc: existing }]));
  applyToDocuments(instructions, docs, binding);
  return docs.get(objectKey('Dog', pk))?.doc ?? null;
}

describe('translate: values', () => {
  it('keeps a Decimal128 exactly through the changeset form', () => {
    for (const text of ['0', '1.5', '-123.456', '1E+10', '9999999999999999999999999999999999']) {
      const bson = Decimal128.fromString(text);
      expect(decimalToBson(decimalFromBson(bson)).toString()).toBe(bson.toString());
    }
  });

  it('stores ints as longs, doubles as doubles, dates at millisecond precision and UUIDs as binary subtype 4', () => {
    expect(payloadToBson({ type: 'Int', value: 5 })).toEqual(Long.fromNumber(5));
    expect(payloadToBson({ type: 'Double', value: 2 })).toEqual(new Double(2));
    expect(payloadToBson({ type: 'Timestamp', seconds: 10, nanoseconds: 5_000_000 })).toEqual(new Date(10_005));
    const uuid = payloadToBson({ type: 'UUID', value: '0123456789abcdef0123456789abcdef' }) as Binary;
    expect(uuid.sub_type).toBe(4);
  });

  it('reads numbers of every BSON width into Int and Double columns, and refuses other types', () => {
    expect(scalarPayload(new Int32(7), 'Int')).toEqual({ type: 'Int', value: 7 });
    expect(scalarPayload(Long.fromString('9007199254740993'), 'Int')).toEqual({ type: 'Int', value: 9007199254740993n });
    expect(scalarPayload(3, 'Double')).toEqual({ type: 'Double', value: 3 });
    expect(scalarPayload('3', 'Int')).toBeUndefined();
    expect(scalarPayload(42, 'String')).toBeUndefined();
  });

  it('gives a Mixed value the type of the BSON value', () => {
    expect(mixedPayload('x')).toEqual({ type: 'String', value: 'x' });
    expect(mixedPayload(1.5)).toEqual({ type: 'Double', value: 1.5 });
    expect(mixedPayload(new ObjectId(id.toHexString()))).toEqual({ type: 'ObjectId', value: id.toHexString() });
    expect(mixedPayload(new UUID('0123456789abcdef0123456789abcdef'))).toEqual({ type: 'UUID', value: '0123456789abcdef0123456789abcdef' });
    expect(mixedPayload({ a: 1 })).toBeUndefined();
  });

  it('reads a partition key value by the configured key type', () => {
    expect(partitionValueFromBson('p', 'string')).toEqual({ type: 'string', value: 'p' });
    expect(partitionValueFromBson(new Int32(4), 'long')).toEqual({ type: 'int', value: 4n });
    expect(partitionValueFromBson(undefined, 'string')).toEqual({ type: 'null' });
    expect(partitionValueFromBson(4, 'string')).toBeUndefined();
  });
});

describe('translate: schema', () => {
  it('accepts a schema that matches, in any mode', () => {
    const result = checkSchemaChanges(dogSchema(), dogSchemaInstructions, false);
    expect(result).toMatchObject({ ok: true, changed: false });
  });

  it('adds new tables and columns in development mode only', () => {
    const extra: Instruction[] = [columnOf('Dog', 'weight', 'Double')];
    expect(checkSchemaChanges(dogSchema(), extra, true)).toMatchObject({ ok: true, changed: true });
    expect(checkSchemaChanges(dogSchema(), extra, false)).toEqual({
      ok: false,
      message: 'non-breaking schema change: adding field "weight" to table "Dog", schema changes from clients are restricted when developer mode is disabled',
    });
  });

  it('refuses a column whose type changed, an other primary key, and erasures, even in development mode', () => {
    expect(checkSchemaChanges(dogSchema(), [columnOf('Dog', 'name', 'Int')], true)).toMatchObject({ ok: false, message: expect.stringContaining('"Dog.name" has been changed from "string" to "int"') });
    expect(checkSchemaChanges(dogSchema(), [{ type: 'AddTable', table: 'Dog', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'String', pkNullable: false } }], true)).toMatchObject({ ok: false });
    expect(checkSchemaChanges(dogSchema(), [{ type: 'EraseColumn', table: 'Dog', field: 'name' }], true)).toMatchObject({ ok: false });
    expect(checkSchemaChanges(dogSchema(), [{ type: 'EraseTable', table: 'Dog' }], true)).toMatchObject({ ok: false });
  });

  it('writes the schema of a table with the embedded tables it uses, tables first', () => {
    const instructions = schemaInstructions(dogSchema(), ['Dog']);
    expect(instructions.slice(0, 2).map((i) => i.type)).toEqual(['AddTable', 'AddTable']);
    expect(instructions).toHaveLength(dogSchemaInstructions.length);
  });
});

describe('translate: changesets to documents', () => {
  it('makes a document with _id, the partition key and every kind of field', () => {
    const doc = applied([
      { type: 'CreateObject', table: 'Dog', object: pk },
      update('name', { type: 'String', value: 'Rex' }),
      { type: 'ArrayInsert', table: 'Dog', object: pk, field: 'toys', path: [0], value: { type: 'String', value: 'ball' }, priorSize: 0 },
      { type: 'ArrayInsert', table: 'Dog', object: pk, field: 'toys', path: [0], value: { type: 'String', value: 'rope' }, priorSize: 1 },
      { type: 'SetInsert', table: 'Dog', object: pk, field: 'tags', path: [], value: { type: 'String', value: 'a' } },
      { type: 'SetInsert', table: 'Dog', object: pk, field: 'tags', path: [], value: { type: 'String', value: 'a' } },
      update('marks', { type: 'Int', value: 3 }, ['speed']),
      update('address', { type: 'ObjectValue' }),
      update('address', { type: 'String', value: 'Main' }, ['street']),
      { type: 'ArrayInsert', table: 'Dog', object: pk, field: 'homes', path: [0], value: { type: 'ObjectValue' }, priorSize: 0 },
      update('homes', { type: 'String', value: 'Elm' }, [0, 'street']),
      update('friend', { type: 'Link', table: 'Dog', key: { type: 'ObjectId', value: '65f0a1b2c3d4e5f601020305' } }),
      update('extra', { type: 'Double', value: 1.5 }),
    ]);
    expect(doc).toEqual({
      _id: id,
      _partition: 'p1',
      name: 'Rex',
      toys: ['rope', 'ball'],
      tags: ['a'],
      marks: { speed: Long.fromNumber(3) },
      address: { street: 'Main' },
      homes: [{ street: 'Elm' }],
      friend: new ObjectId('65f0a1b2c3d4e5f601020305'),
      extra: new Double(1.5),
    });
  });

  it('applies later edits to an existing document and deletes it on EraseObject', () => {
    const existing = { _id: id, _partition: 'p1', name: 'Rex', age: Long.fromNumber(2), toys: ['a', 'b', 'c'], marks: { x: Long.fromNumber(1) } };
    expect(
      applied(
        [
          { type: 'ArrayMove', table: 'Dog', object: pk, field: 'toys', path: [0], ndx2: 2, priorSize: 3 },
          { type: 'ArrayErase', table: 'Dog', object: pk, field: 'toys', path: [0], priorSize: 3 },
          { type: 'AddInteger', table: 'Dog', object: pk, field: 'age', path: [], value: 5 },
          update('marks', { type: 'Erased' }, ['x']),
        ],
        existing,
      ),
    ).toEqual({ _id: id, _partition: 'p1', name: 'Rex', age: Long.fromNumber(7), toys: ['c', 'a'], marks: {} });
    expect(applied([{ type: 'EraseObject', table: 'Dog', object: pk }], { _id: id })).toBeNull();
  });

  it('finds set members read back from a store by value, whatever int width the store returned', () => {
    const member = (type: 'SetInsert' | 'SetErase', value: number): Instruction => ({ type, table: 'Dog', object: pk, field: 'tags', path: [], value: { type: 'Int', value: BigInt(value) } });
    expect(applied([member('SetInsert', 3), member('SetInsert', 4)], { _id: id, tags: [new Int32(3)] })).toEqual({ _id: id, _partition: 'p1', tags: [new Int32(3), Long.fromNumber(4)] });
    expect(applied([member('SetErase', 3)], { _id: id, tags: [new Double(3), Long.fromNumber(5)] })).toEqual({ _id: id, _partition: 'p1', tags: [Long.fromNumber(5)] });
    expect(canonicalBson({ b: [Long.fromNumber(1)], a: new ObjectId(id.toHexString()) })).toBe(canonicalBson({ a: id, b: [1] }));
    expect(canonicalBson(Long.fromNumber(1))).not.toBe(canonicalBson('1'));
  });

  it('counts instructions that have no place in the document instead of failing', () => {
    const docs: DocumentSet = new Map([[objectKey('Dog', pk), { table: 'Dog', object: pk, doc: { _id: id, toys: [] } }]]);
    const { skipped } = applyToDocuments([{ type: 'ArrayErase', table: 'Dog', object: pk, field: 'toys', path: [4], priorSize: 5 }], docs, binding);
    expect(skipped).toBe(1);
  });

  it('finds a write of another partition value, and lets the bound value through', () => {
    expect(partitionViolation([update('_partition', { type: 'String', value: 'p1' })], binding)).toBeUndefined();
    expect(partitionViolation([update('_partition', { type: 'String', value: 'p2' })], binding)).toBe('UPDATE instruction had incorrect partition value for key "_partition" (expected "p1", found "p2")');
    expect(partitionViolation([update('_partition', { type: 'Int', value: 1 })], binding)).toContain('found 1');
  });
});

describe('translate: documents to changesets', () => {
  const doc = {
    _id: id,
    _partition: 'p1',
    name: 'Rex',
    age: new Int32(3),
    toys: ['ball', 'rope'],
    tags: ['a'],
    marks: { speed: 2 },
    address: { street: 'Main' },
    homes: [{ street: 'Elm' }],
    extra: { nested: [1, 'two'] },
  };

  it('writes an object that a client applies to the same values', () => {
    const written = objectInstructions(dogSchema(), 'Dog', doc);
    if (!written.ok) throw new Error(written.reason);
    const store = new ObjectStore();
    store.applyChangeset([...schemaInstructions(dogSchema(), ['Dog']), ...written.instructions]);
    expect(store.read('Dog', pk, 'name')).toBe('"Rex"');
    expect(store.read('Dog', pk, 'age')).toBe('Int(3)');
    expect(store.read('Dog', pk, 'toys')).toEqual(['"ball"', '"rope"']);
    expect(store.read('Dog', pk, 'address', ['street'])).toBe('"Main"');
    expect(store.read('Dog', pk, 'homes', [0, 'street'])).toBe('"Elm"');
    expect(store.read('Dog', pk, 'marks', ['speed'])).toBe('Int(2)');
    expect(store.read('Dog', pk, 'extra', ['nested', 1])).toBe('"two"');
    // Written again over a client that holds other values, it converges to the document.
    const again = objectInstructions(dogSchema(), 'Dog', { ...doc, toys: ['bone'] });
    if (!again.ok) throw new Error(again.reason);
    store.applyChangeset(again.instructions);
    expect(store.read('Dog', pk, 'toys')).toEqual(['"bone"']);
  });

  it('says why a document does not fit the schema', () => {
    expect(objectInstructions(dogSchema(), 'Dog', { ...doc, name: 42 })).toEqual({ ok: false, reason: 'Dog.name: value does not fit the type String' });
    expect(objectInstructions(dogSchema(), 'Dog', { ...doc, _id: 'text' })).toMatchObject({ ok: false, reason: expect.stringContaining('_id') });
    expect(objectInstructions(dogSchema(), 'Dog', { ...doc, toys: 'ball' })).toMatchObject({ ok: false });
  });

  it('puts documents without a valid key in the null partition when the key is optional, and nowhere when it is required', () => {
    expect(documentPartition({ _partition: 'x' }, partitioning)).toBe('"x"');
    expect(documentPartition({}, partitioning)).toBe('null');
    expect(documentPartition({ _partition: 5 }, partitioning)).toBe('null');
    expect(documentPartition({}, { ...partitioning, required: true })).toBeUndefined();
    expect(documentPartition({ _partition: 5 }, { ...partitioning, required: true })).toBeUndefined();
  });

  it('treats a changed partition value as a delete from the old partition and an insert into the new one', () => {
    const { changesets } = translateDocumentChange(dogSchema(), partitioning, {
      operationType: 'update',
      table: 'Dog',
      id,
      before: { ...doc, _partition: 'p1' },
      after: { ...doc, _partition: 'p2' },
      updatedFields: ['_partition'],
    });
    expect([...changesets.keys()]).toEqual(['"p1"', '"p2"']);
    expect(changesets.get('"p1"')?.at(-1)).toEqual({ type: 'EraseObject', table: 'Dog', object: pk });
    expect(changesets.get('"p2"')?.some((i) => i.type === 'Update' && i.field === 'name')).toBe(true);
  });

  it('sends only the fields an update touched when the partition is unchanged, and erases on delete', () => {
    const { changesets } = translateDocumentChange(dogSchema(), partitioning, { operationType: 'update', table: 'Dog', id, before: doc, after: { ...doc, name: 'Max' }, updatedFields: ['name'] });
    const data = changesets.get('"p1"')?.filter((i) => i.type !== 'AddTable' && i.type !== 'AddColumn');
    expect(data).toEqual([{ type: 'CreateObject', table: 'Dog', object: pk }, update('name', { type: 'String', value: 'Max' })]);
    const deleted = translateDocumentChange(dogSchema(), partitioning, { operationType: 'delete', table: 'Dog', id, knownPartition: '"p1"' });
    expect(deleted.changesets.get('"p1"')?.at(-1)).toEqual({ type: 'EraseObject', table: 'Dog', object: pk });
  });

  it('skips a document that does not fit or has no valid required key, with the reason', () => {
    const misfit = translateDocumentChange(dogSchema(), partitioning, { operationType: 'insert', table: 'Dog', id, after: { ...doc, age: 'old' } });
    expect(misfit.changesets.size).toBe(0);
    expect(misfit.skipped).toContain('Dog.age');
    const keyless = translateDocumentChange(dogSchema(), { ...partitioning, required: true }, { operationType: 'insert', table: 'Dog', id, after: { _id: id, name: 'x' } });
    expect(keyless.changesets.size).toBe(0);
    expect(keyless.skipped).toContain('required partition key');
  });
});
