import fc from 'fast-check';
import { SyncProtocolError } from '../errors';
import { loadConformance } from '../conformance-frames.test';
import { encodeChangeset, parseChangeset } from '../changeset/codec';
import { formatInstruction } from '../changeset/debug';
import type { Instruction, PathElement, Payload, PrimaryKey } from '../changeset/types';
import { decodeClientMessage, decodeServerMessage, type DownloadMessage, type UploadMessage } from '../wire/messages';
import { type ObjectStore } from '../state/object-store';
import { baseChangeset, generate, storeWith, type Step } from './scenario.test';
import { cloneInstructions, mergeChangesets, survivingInstructions, type TransformableChangeset } from './transform';

const pk1: PrimaryKey = { type: 'Int', value: 1 };
const str = (value: string): Payload => ({ type: 'String', value });
const update = (field: string, value: Payload, path: PathElement[] = [], extra: Partial<{ isDefault: boolean; priorSize: number }> = {}): Instruction => ({
  type: 'Update',
  table: 'Item',
  object: pk1,
  field,
  path,
  value,
  isDefault: false,
  priorSize: 0,
  ...extra,
});
const insert = (index: number, value: string | Payload, priorSize: number, field = 'tags'): Instruction => ({
  type: 'ArrayInsert',
  table: 'Item',
  object: pk1,
  field,
  path: [index],
  value: typeof value === 'string' ? str(value) : value,
  priorSize,
});
const erase = (index: number, priorSize: number, field = 'tags'): Instruction => ({ type: 'ArrayErase', table: 'Item', object: pk1, field, path: [index], priorSize });
const move = (from: number, to: number, priorSize: number): Instruction => ({ type: 'ArrayMove', table: 'Item', object: pk1, field: 'tags', path: [from], ndx2: to, priorSize });
const clear = (field: string, collectionType: 'List' | 'Set' | 'Dictionary'): Instruction => ({ type: 'Clear', table: 'Item', object: pk1, field, path: [], collectionType });
const setOp = (type: 'SetInsert' | 'SetErase', value: string): Instruction => ({ type, table: 'Item', object: pk1, field: 'labels', path: [], value: str(value) });
const addInt = (value: number): Instruction => ({ type: 'AddInteger', table: 'Item', object: pk1, field: 'count', path: [], value });
const eraseObject: Instruction = { type: 'EraseObject', table: 'Item', object: pk1 };
const createObject: Instruction = { type: 'CreateObject', table: 'Item', object: pk1 };

/** Merges `a` (made at time ta by file 2) with `b` (time tb, file 3); returns what survives, formatted. */
function merge2(a: Instruction[], b: Instruction[], ta = 100, tb = 200): { a: string[]; b: string[] } {
  const ours: TransformableChangeset = { originTimestamp: ta, originFileIdent: 2, instructions: cloneInstructions(a) };
  const theirs: TransformableChangeset = { originTimestamp: tb, originFileIdent: 3, instructions: cloneInstructions(b) };
  mergeChangesets([ours], [theirs]);
  return { a: survivingInstructions(ours).map(formatInstruction), b: survivingInstructions(theirs).map(formatInstruction) };
}

/** Both application orders of a merged pair reach the same state; returns it. */
function converge(base: Instruction[], a: Instruction[][], b: Instruction[][], ta = 100, tb = 200): string {
  const ours = a.map((instructions, i): TransformableChangeset => ({ originTimestamp: ta + i, originFileIdent: 2, instructions: cloneInstructions(instructions) }));
  const theirs = b.map((instructions, i): TransformableChangeset => ({ originTimestamp: tb + i, originFileIdent: 3, instructions: cloneInstructions(instructions) }));
  mergeChangesets(ours, theirs);
  const first = storeWith(base, ...a, ...theirs.map((c) => c.instructions));
  const second = storeWith(base, ...b, ...ours.map((c) => c.instructions));
  expect(first.snapshot()).toBe(second.snapshot());
  return first.snapshot();
}

// Items 1..3 exist; item 1 has tags ["a", "b", "c"].
const base = baseChangeset([]).concat([insert(0, 'a', 0), insert(1, 'b', 1), insert(2, 'c', 2)]);

describe('merge rules for conflicting pairs', () => {
  it('Update vs Update: the later write wins, whichever side it is on', () => {
    expect(merge2([update('name', str('A'))], [update('name', str('B'))])).toEqual({ a: [], b: ['Update Item[1].name = "B"'] });
    expect(merge2([update('name', str('A'))], [update('name', str('B'))], 300, 200)).toEqual({ a: ['Update Item[1].name = "A"'], b: [] });
    expect(converge(base, [[update('name', str('A'))]], [[update('name', str('B'))]])).toContain('"name":"\\"B\\""');
  });

  it('Update vs Update: equal timestamps are ordered by file ident', () => {
    expect(merge2([update('name', str('A'))], [update('name', str('B'))], 100, 100).b).toEqual(['Update Item[1].name = "B"']);
  });

  it('Update vs Update: a default value loses to a real write regardless of time', () => {
    expect(merge2([update('name', str('A'))], [update('name', str('B'), [], { isDefault: true })]).a).toEqual(['Update Item[1].name = "A"']);
  });

  it('Update vs Update: creating an embedded object loses to setting the field', () => {
    const r = merge2([update('address', { type: 'ObjectValue' })], [update('address', { type: 'Null' })], 300, 100);
    expect(r).toEqual({ a: [], b: ['Update Item[1].address = null'] });
  });

  it('Update vs Update of different fields does not conflict', () => {
    expect(merge2([update('name', str('A'))], [update('count', { type: 'Int', value: 1 })])).toEqual({ a: ['Update Item[1].name = "A"'], b: ['Update Item[1].count = 1'] });
  });

  it('AddInteger vs Update: a later add is folded into the set, an earlier one is dropped', () => {
    expect(merge2([addInt(5)], [update('count', { type: 'Int', value: 10 })], 300, 200)).toEqual({ a: ['AddInteger Item[1].count += 5'], b: ['Update Item[1].count = 15'] });
    expect(merge2([addInt(5)], [update('count', { type: 'Int', value: 10 })], 100, 200)).toEqual({ a: [], b: ['Update Item[1].count = 10'] });
    expect(merge2([addInt(5)], [update('count', { type: 'Null' })], 300, 200)).toEqual({ a: ['AddInteger Item[1].count += 5'], b: ['Update Item[1].count = null'] });
    expect(merge2([addInt(5)], [update('count', str('x'))], 300, 200)).toEqual({ a: [], b: ['Update Item[1].count = "x"'] });
    converge(base, [[update('count', { type: 'Int', value: 1 }), addInt(2)]], [[update('count', { type: 'Int', value: 10 })]], 300, 200);
  });

  it('EraseObject vs anything on the object: the erase wins', () => {
    expect(merge2([eraseObject], [update('name', str('B')), insert(3, 'd', 3), createObject], 100, 900)).toEqual({ a: ['EraseObject Item[1]'], b: [] });
    converge(base, [[eraseObject]], [[update('name', str('B')), insert(3, 'd', 3)]]);
  });

  it('EraseObject vs EraseObject: only the later erase survives', () => {
    expect(merge2([eraseObject], [eraseObject])).toEqual({ a: [], b: ['EraseObject Item[1]'] });
  });

  it('ArrayInsert vs ArrayInsert: indices shift, ties are ordered by timestamp, prior sizes grow', () => {
    expect(merge2([insert(1, 'A', 3)], [insert(2, 'B', 3)])).toEqual({ a: ['ArrayInsert Item[1].tags[1] = "A" (prior_size 4)'], b: ['ArrayInsert Item[1].tags[3] = "B" (prior_size 4)'] });
    expect(merge2([insert(1, 'A', 3)], [insert(1, 'B', 3)])).toEqual({ a: ['ArrayInsert Item[1].tags[1] = "A" (prior_size 4)'], b: ['ArrayInsert Item[1].tags[2] = "B" (prior_size 4)'] });
    expect(merge2([insert(1, 'A', 3)], [insert(1, 'B', 3)], 300, 200).a).toEqual(['ArrayInsert Item[1].tags[2] = "A" (prior_size 4)']);
    expect(converge(base, [[insert(1, 'A', 3)]], [[insert(1, 'B', 3)]])).toContain('"tags":["\\"a\\"","\\"A\\"","\\"B\\""');
  });

  it('ArrayInsert vs Update of an element: the update follows its element', () => {
    expect(merge2([insert(0, 'A', 3)], [update('tags', str('B'), [1], { priorSize: 3 })]).b).toEqual(['Update Item[1].tags[2] = "B" (prior_size 4)']);
    converge(base, [[insert(0, 'A', 3)]], [[update('tags', str('B'), [1], { priorSize: 3 })]]);
  });

  it('ArrayErase vs Update: an update of the erased element is dropped, others shift', () => {
    expect(merge2([erase(1, 3)], [update('tags', str('B'), [1], { priorSize: 3 })]).b).toEqual([]);
    expect(merge2([erase(0, 3)], [update('tags', str('B'), [2], { priorSize: 3 })]).b).toEqual(['Update Item[1].tags[1] = "B" (prior_size 2)']);
    converge(base, [[erase(0, 3)]], [[update('tags', str('B'), [2], { priorSize: 3 })]]);
  });

  it('ArrayMove vs Update: the update follows the moved element', () => {
    expect(merge2([move(0, 2, 3)], [update('tags', str('B'), [0], { priorSize: 3 })]).b).toEqual(['Update Item[1].tags[2] = "B" (prior_size 3)']);
    converge(base, [[move(0, 2, 3)]], [[update('tags', str('B'), [0], { priorSize: 3 })]]);
  });

  it('ArrayErase vs ArrayInsert and ArrayErase vs ArrayErase keep the list consistent', () => {
    expect(merge2([erase(1, 3)], [insert(1, 'B', 3)])).toEqual({ a: ['ArrayErase Item[1].tags[2] (prior_size 4)'], b: ['ArrayInsert Item[1].tags[1] = "B" (prior_size 2)'] });
    expect(merge2([erase(1, 3)], [erase(1, 3)])).toEqual({ a: [], b: [] });
    expect(merge2([erase(0, 3)], [erase(2, 3)])).toEqual({ a: ['ArrayErase Item[1].tags[0] (prior_size 2)'], b: ['ArrayErase Item[1].tags[1] (prior_size 2)'] });
    converge(base, [[erase(1, 3)]], [[insert(1, 'B', 3)]]);
  });

  it('ArrayMove vs ArrayInsert, ArrayMove and ArrayErase converge', () => {
    converge(base, [[move(0, 2, 3)]], [[insert(1, 'B', 3)]]);
    converge(base, [[move(0, 2, 3)]], [[move(0, 1, 3)]]);
    converge(base, [[move(0, 2, 3)]], [[move(2, 0, 3)]]);
    converge(base, [[move(0, 2, 3)]], [[erase(0, 3)]]);
    converge(base, [[move(1, 2, 3)]], [[erase(0, 3)]]);
    expect(merge2([move(0, 2, 3)], [erase(0, 3)])).toEqual({ a: [], b: ['ArrayErase Item[1].tags[2] (prior_size 3)'] });
  });

  it('Clear vs inner list operations: the clear wins over concurrent inserts', () => {
    expect(merge2([clear('tags', 'List')], [insert(1, 'B', 3), update('tags', str('C'), [0], { priorSize: 4 })], 100, 900)).toEqual({ a: ['Clear Item[1].tags[] (List)'.replace('[]', '')], b: [] });
    converge(base, [[clear('tags', 'List')]], [[insert(1, 'B', 3)]]);
  });

  it('Clear vs Clear, SetInsert and SetErase', () => {
    expect(merge2([clear('labels', 'Set')], [clear('labels', 'Set')]).a).toEqual([]);
    expect(merge2([clear('labels', 'Set')], [setOp('SetInsert', 'x')], 100, 900).b).toEqual([]);
    expect(merge2([clear('labels', 'Set')], [setOp('SetErase', 'x')], 900, 100).b).toEqual([]);
    expect(merge2([clear('count', 'List')], [addInt(1)]).b).toEqual([]);
  });

  it('Set operations on the same value keep the later one', () => {
    expect(merge2([setOp('SetInsert', 'x')], [setOp('SetInsert', 'x')])).toEqual({ a: [], b: ['SetInsert Item[1].labels "x"'] });
    expect(merge2([setOp('SetInsert', 'x')], [setOp('SetErase', 'x')])).toEqual({ a: [], b: ['SetErase Item[1].labels "x"'] });
    expect(merge2([setOp('SetErase', 'x')], [setOp('SetInsert', 'x')])).toEqual({ a: [], b: ['SetInsert Item[1].labels "x"'] });
    expect(merge2([setOp('SetErase', 'x')], [setOp('SetErase', 'x')], 300, 200)).toEqual({ a: ['SetErase Item[1].labels "x"'], b: [] });
    expect(merge2([setOp('SetInsert', 'x')], [setOp('SetErase', 'y')]).a).toHaveLength(1);
    converge(base, [[setOp('SetInsert', 'x')]], [[setOp('SetErase', 'x')]]);
  });

  it('SetErase vs SetErase of parsed changesets compares the values by position, as realm-core does', () => {
    const parsed = (instructions: Instruction[]): Instruction[] => parseChangeset(encodeChangeset({ instructions })).instructions;
    const erase = setOp('SetErase', 'x');
    // Same layout: the strings sit at the same offset, so realm-core sees equal values and keeps the later erase.
    expect(merge2(parsed([erase]), parsed([erase]))).toEqual({ a: [], b: ['SetErase Item[1].labels "x"'] });
    // Another string before it moves "x" in the string buffer: realm-core keeps both erasures.
    expect(merge2(parsed([erase]), parsed([update('name', str('zz')), erase]))).toEqual({
      a: ['SetErase Item[1].labels "x"'],
      b: ['Update Item[1].name = "zz"', 'SetErase Item[1].labels "x"'],
    });
    converge(base, [parsed([erase])], [parsed([update('name', str('zz')), erase])]);
  });

  it('dictionary writes and erasures of the same key: the later wins', () => {
    const put = update('attrs', str('v'), ['k']);
    const del = update('attrs', { type: 'Erased' }, ['k']);
    expect(merge2([put], [del])).toEqual({ a: [], b: ['Update Item[1].attrs["k"] = <erased>'] });
    converge(base, [[put]], [[del]]);
    converge(base, [[del]], [[put]]);
  });

  it('setting an embedded object field to null drops concurrent writes inside it', () => {
    const setNull = update('address', { type: 'Null' });
    const inner = update('address', str('Oslo'), ['city']);
    expect(merge2([setNull], [inner], 100, 900)).toEqual({ a: ['Update Item[1].address = null'], b: [] });
    // Re-creating the object is idempotent and keeps the inner writes.
    expect(merge2([update('address', { type: 'ObjectValue' })], [inner]).b).toEqual(['Update Item[1].address["city"] = "Oslo"']);
  });

  it('list operations shift paths into embedded objects in that list', () => {
    const inner = update('addresses', str('Oslo'), [1, 'city']);
    expect(merge2([insert(0, { type: 'ObjectValue' }, 2, 'addresses')], [inner]).b).toEqual(['Update Item[1].addresses[2]["city"] = "Oslo"']);
    expect(merge2([erase(0, 2, 'addresses')], [inner]).b).toEqual(['Update Item[1].addresses[0]["city"] = "Oslo"']);
    expect(merge2([erase(1, 2, 'addresses')], [inner]).b).toEqual([]);
  });

  it('schema instructions: matching AddTable/AddColumn collapse, mismatches are bad merges', () => {
    const t = (pkType: 'Int' | 'String'): Instruction => ({ type: 'AddTable', table: 'T', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType, pkNullable: false } });
    const c = (valueType: 'Int' | 'String'): Instruction => ({ type: 'AddColumn', table: 'T', field: 'f', valueType, nullable: false, collectionType: 'Single', keyType: 'Null' });
    expect(merge2([t('Int'), c('Int')], [t('Int'), c('Int')])).toEqual({ a: [], b: [] });
    expect(() => merge2([t('Int')], [t('String')])).toThrow(SyncProtocolError);
    expect(() => merge2([c('Int')], [c('String')])).toThrow(/Schema mismatch/);
    expect(() => merge2([t('Int')], [{ type: 'AddTable', table: 'T', spec: { kind: 'Embedded' } }])).toThrow(/primary key/);
  });

  it('schema erasures: EraseTable and EraseColumn dominate what they erase', () => {
    const eraseTable: Instruction = { type: 'EraseTable', table: 'Item' };
    const eraseColumn: Instruction = { type: 'EraseColumn', table: 'Item', field: 'name' };
    expect(merge2([eraseTable], [update('name', str('B'))])).toEqual({ a: ['EraseTable Item'], b: [] });
    expect(merge2([eraseTable], [update('name', str('B')), eraseTable])).toEqual({ a: [], b: [] });
    expect(merge2([eraseColumn], [update('name', str('B'))])).toEqual({ a: ['EraseColumn Item.name'], b: [] });
    expect(merge2([eraseColumn], [update('name', str('B')), eraseColumn])).toEqual({ a: [], b: [] });
    const linkColumn: Instruction = { type: 'AddColumn', table: 'Other', field: 'item', valueType: 'Link', nullable: true, collectionType: 'Single', keyType: 'Null', linkTargetTable: 'Item' };
    expect(merge2([eraseTable], [linkColumn])).toEqual({ a: ['EraseColumn Other.item', 'EraseTable Item'], b: [] });
    expect(merge2([linkColumn], [eraseTable])).toEqual({ a: [], b: ['EraseColumn Other.item', 'EraseTable Item'] });
  });

  it('rejects list operations whose prior sizes disagree', () => {
    expect(() => merge2([insert(0, 'A', 3)], [insert(0, 'B', 4)])).toThrow(/prior_size/);
  });
});

describe('the recorded conflict (scenario d)', () => {
  it('transforms client B\'s upload exactly as the reference server did', () => {
    const { frames } = loadConformance();
    const d = frames.filter((f) => f.file.startsWith('d-'));
    const fromA = decodeServerMessage(d.find((f) => f.seq === 59)?.bytes ?? new Uint8Array()) as DownloadMessage;
    const fromB = decodeClientMessage(d.find((f) => f.seq === 62)?.bytes ?? new Uint8Array()) as UploadMessage;
    const toA = decodeServerMessage(d.find((f) => f.seq === 63)?.bytes ?? new Uint8Array()) as DownloadMessage;
    const ours = fromA.changesets.map((c): TransformableChangeset => ({
      originTimestamp: c.originTimestamp,
      originFileIdent: c.originFileIdent,
      instructions: parseChangeset(c.changeset).instructions,
    }));
    const theirs = fromB.changesets.map((c): TransformableChangeset => ({
      originTimestamp: c.originTimestamp,
      originFileIdent: 3,
      instructions: parseChangeset(c.changeset).instructions,
    }));
    mergeChangesets(ours, theirs);
    const expected = toA.changesets.map((c) => parseChangeset(c.changeset).instructions.map(formatInstruction));
    expect(theirs.map((c) => survivingInstructions(c).map(formatInstruction))).toEqual(expected);
    expect(expected[1]).toEqual([
      'ArrayInsert Item[ObjectId(0000000000000000000000d1)].tags[0] = "B-mid" (prior_size 3)',
      'ArrayInsert Item[ObjectId(0000000000000000000000d1)].tags[4] = "B-end" (prior_size 4)',
    ]);
  });
});

describe('convergence of random concurrent changesets', () => {
  const step = fc.record({ op: fc.nat(), a: fc.nat(), b: fc.nat(), c: fc.nat() });
  const steps = (max: number): fc.Arbitrary<Step[]> => fc.array(step, { maxLength: max });

  it('reaches the same state in both orders for thousands of random pairs', () => {
    let nonTrivial = 0;
    fc.assert(
      fc.property(steps(12), steps(10), steps(10), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }), (b, sa, sb, dt, na, nb) => {
        const baseCs = baseChangeset(b);
        const split = (store: ObjectStore, s: Step[], n: number): Instruction[][] => {
          const out: Instruction[][] = [];
          const size = Math.ceil(s.length / n) || 1;
          for (let i = 0; i < s.length; i += size) out.push(generate(store, s.slice(i, i + size)));
          return out.length ? out : [[]];
        };
        const a = split(storeWith(baseCs), sa, na);
        const bb = split(storeWith(baseCs), sb, nb);
        if (a.flat().length && bb.flat().length) nonTrivial++;
        // Timestamps sometimes equal so that file idents break the ties.
        converge(baseCs, a, bb, 1000, 1000 + dt);
        converge(baseCs, bb, a, 1000 + dt, 1000);
      }),
      { numRuns: 2500 },
    );
    expect(nonTrivial).toBeGreaterThan(1500);
  });
});
