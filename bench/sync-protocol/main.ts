/**
 * Sync protocol benchmark (`npm run bench:sync-protocol`): parsing and encoding changesets of 1,000
 * instructions, and merging two concurrent changesets of 1,000 instructions on the same objects. The
 * baseline, in the same run, is JSON.parse / JSON.stringify of the same instructions as JSON (and, for the
 * merge, a JSON round trip of both changesets, the cheapest way to copy them). The last line gives the ratios.
 */
import {
  cloneInstructions,
  encodeChangeset,
  mergeChangesets,
  ObjectStore,
  parseChangeset,
  type Instruction,
  type Payload,
  type PrimaryKey,
  type TransformableChangeset,
} from '@tessera/sync-protocol';

const INSTRUCTIONS = 1_000;
const OBJECTS = 10;

const schema: Instruction[] = [
  { type: 'AddTable', table: 'Item', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'ObjectId', pkNullable: false } },
  { type: 'AddColumn', table: 'Item', field: 'name', valueType: 'String', nullable: true, collectionType: 'Single', keyType: 'Null' },
  { type: 'AddColumn', table: 'Item', field: 'count', valueType: 'Int', nullable: true, collectionType: 'Single', keyType: 'Null' },
  { type: 'AddColumn', table: 'Item', field: 'tags', valueType: 'String', nullable: false, collectionType: 'List', keyType: 'Null' },
  { type: 'AddColumn', table: 'Item', field: 'labels', valueType: 'String', nullable: false, collectionType: 'Set', keyType: 'Null' },
  { type: 'AddColumn', table: 'Item', field: 'attrs', valueType: 'Null', nullable: true, collectionType: 'Dictionary', keyType: 'String' },
];

const oid = (i: number): PrimaryKey => ({ type: 'ObjectId', value: (0x100000 + i).toString(16).padStart(24, '0') });
const text = (s: string): Payload => ({ type: 'String', value: s });

/** A deterministic pseudo-random sequence, so every run measures the same work. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function baseChangeset(): Instruction[] {
  const out = [...schema];
  for (let i = 0; i < OBJECTS; i++) {
    out.push({ type: 'CreateObject', table: 'Item', object: oid(i) });
    for (let t = 0; t < 5; t++) out.push({ type: 'ArrayInsert', table: 'Item', object: oid(i), field: 'tags', path: [t], value: text(`t${t}`), priorSize: t });
  }
  return out;
}

/** `count` valid instructions on the same OBJECTS items, made on `store` (which follows them). */
function writes(store: ObjectStore, seed: number, count: number): Instruction[] {
  const rnd = prng(seed);
  const out: Instruction[] = [];
  const size = new Map<number, number>();
  const tags = (i: number): number => size.get(i) ?? 5;
  while (out.length < count) {
    const i = Math.floor(rnd() * OBJECTS);
    const base = { table: 'Item', object: oid(i) };
    const op = Math.floor(rnd() * 7);
    let instr: Instruction;
    if (op === 0) instr = { type: 'Update', ...base, field: 'name', path: [], value: text(`name-${seed}-${out.length}`), isDefault: false, priorSize: 0 };
    else if (op === 1) instr = { type: 'Update', ...base, field: 'count', path: [], value: { type: 'Int', value: out.length }, isDefault: false, priorSize: 0 };
    else if (op === 2) {
      const n = tags(i);
      instr = { type: 'ArrayInsert', ...base, field: 'tags', path: [Math.floor(rnd() * (n + 1))], value: text(`x${out.length}`), priorSize: n };
      size.set(i, n + 1);
    } else if (op === 3 && tags(i) > 0) {
      const n = tags(i);
      instr = { type: 'ArrayErase', ...base, field: 'tags', path: [Math.floor(rnd() * n)], priorSize: n };
      size.set(i, n - 1);
    } else if (op === 4 && tags(i) > 0) {
      const n = tags(i);
      instr = { type: 'Update', ...base, field: 'tags', path: [Math.floor(rnd() * n)], value: text(`u${out.length}`), isDefault: false, priorSize: n };
    } else if (op === 5) instr = { type: 'SetInsert', ...base, field: 'labels', path: [], value: text(`l${Math.floor(rnd() * 20)}`) };
    else instr = { type: 'Update', ...base, field: 'attrs', path: [`k${Math.floor(rnd() * 10)}`], value: text(`v${out.length}`), isDefault: false, priorSize: 0 };
    store.apply(instr);
    out.push(instr);
  }
  return out;
}

function measure(budgetMs: number, op: () => unknown): number {
  for (let i = 0; i < 3; i++) op(); // warm up
  const start = process.hrtime.bigint();
  let n = 0;
  for (;;) {
    op();
    n++;
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    if (elapsed >= budgetMs && n >= 5) return (n / elapsed) * 1000;
  }
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
}

function main(): void {
  const base = baseChangeset();
  const storeFor = (): ObjectStore => {
    const s = new ObjectStore();
    s.applyChangeset(base);
    return s;
  };
  const a = writes(storeFor(), 1, INSTRUCTIONS);
  const b = writes(storeFor(), 2, INSTRUCTIONS);

  const bytes = encodeChangeset({ instructions: a });
  const json = JSON.stringify(a);
  const parsed = parseChangeset(bytes);

  // The merged pair converges: both application orders give the same state.
  const ours: TransformableChangeset = { originTimestamp: 1000, originFileIdent: 2, instructions: cloneInstructions(a) };
  const theirs: TransformableChangeset = { originTimestamp: 1001, originFileIdent: 3, instructions: cloneInstructions(b) };
  mergeChangesets([ours], [theirs]);
  const first = storeFor();
  first.applyChangeset(a);
  first.applyChangeset(theirs.instructions);
  const second = storeFor();
  second.applyChangeset(b);
  second.applyChangeset(ours.instructions);
  if (first.snapshot() !== second.snapshot()) throw new Error('merged changesets do not converge');
  const discarded = ours.instructions.filter((i) => i === null).length + theirs.instructions.filter((i) => i === null).length;

  const budget = 1500;
  const parseRate = measure(budget, () => parseChangeset(bytes));
  const jsonParseRate = measure(budget, () => JSON.parse(json) as unknown);
  const encodeRate = measure(budget, () => encodeChangeset(parsed));
  const jsonStringifyRate = measure(budget, () => JSON.stringify(parsed.instructions));
  const mergeRate = measure(budget, () => {
    mergeChangesets(
      [{ originTimestamp: 1000, originFileIdent: 2, instructions: cloneInstructions(a) }],
      [{ originTimestamp: 1001, originFileIdent: 3, instructions: cloneInstructions(b) }],
    );
  });
  const pairJson = JSON.stringify([a, b]);
  const jsonCopyRate = measure(budget, () => JSON.parse(JSON.stringify(JSON.parse(pairJson) as unknown)) as unknown);

  console.log(`changeset: ${INSTRUCTIONS} instructions on ${OBJECTS} objects, ${bytes.length} bytes binary, ${json.length} bytes as JSON`);
  console.log(`parse:   ${fmt(parseRate)} changesets/s (${fmt(parseRate * INSTRUCTIONS)} instructions/s, ${fmt((parseRate * bytes.length) / 1e6)} MB/s)   JSON.parse: ${fmt(jsonParseRate)}/s`);
  console.log(`encode:  ${fmt(encodeRate)} changesets/s (${fmt(encodeRate * INSTRUCTIONS)} instructions/s)   JSON.stringify: ${fmt(jsonStringifyRate)}/s`);
  console.log(`merge:   ${fmt(mergeRate)} merges/s of two concurrent ${INSTRUCTIONS}-instruction changesets (${discarded} instructions discarded by conflicts; converged)   JSON copy of both: ${fmt(jsonCopyRate)}/s`);
  console.log(
    `ratio to JSON baseline: parse ${(parseRate / jsonParseRate).toFixed(2)}x, encode ${(encodeRate / jsonStringifyRate).toFixed(2)}x, merge ${(mergeRate / jsonCopyRate).toFixed(2)}x`,
  );
}

main();
