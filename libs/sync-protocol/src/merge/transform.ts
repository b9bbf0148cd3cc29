/**
 * Operational transform of concurrent changesets, following the merge rules of realm-core's
 * transform.cpp so that a server and realm clients resolve every conflict the same way.
 *
 * `mergeChangesets(ours, theirs)` transforms both sides in place: afterwards `theirs` applies on top of
 * `ours`, and `ours` (the reciprocal) applies on top of `theirs`, and both orders reach the same state.
 * Discarded instructions become `null` tombstones. Conflicts are ordered by the discriminant
 * (origin timestamp, then origin file ident). The walk visits every pair of instructions (ours in the outer
 * loop, theirs in order in the inner loop); realm-core narrows the inner loop to conflict groups of
 * instructions touching the same object or the schema, which only skips pairs whose rules are no-ops.
 */
import { SyncProtocolError } from '../errors';
import type {
  AddColumn,
  AddInteger,
  AddTable,
  ArrayErase,
  ArrayInsert,
  ArrayMove,
  Clear,
  EraseColumn,
  Instruction,
  PathElement,
  PathInstruction,
  Payload,
  Update,
} from '../changeset/types';
import { normalizeInt64 } from '../changeset/varint';
import { instructionTypeCodes, isPathInstruction } from '../changeset/types';
import { payloadPositions } from '../changeset/identity';
import { objectKeyOf, sameKey, samePath, samePayload } from './compare';

export interface TransformableChangeset {
  /** Milliseconds since 2015-01-01 of the original commit. */
  originTimestamp: number;
  /** The file ident of the client (or server) that made the change. */
  originFileIdent: number;
  /** Mutated by the merge; `null` marks a discarded instruction. */
  instructions: (Instruction | null)[];
  /** Set by the merge when it changed this changeset. */
  dirty?: boolean;
}

/** Object keys are asked for on every pair; instructions keep their table and object, so cache them. */
const objectKeys = new WeakMap<Instruction, string | null>();
function cachedObjectKey(instr: Instruction): string | null {
  let key = objectKeys.get(instr);
  if (key === undefined) {
    key = objectKeyOf(instr);
    objectKeys.set(instr, key);
  }
  return key;
}

function badMerge(message: string): never {
  throw new SyncProtocolError('bad_merge', message);
}

function pathLength(instr: Instruction): number {
  if (isPathInstruction(instr)) return 3 + instr.path.length;
  switch (instr.type) {
    case 'AddTable':
    case 'EraseTable':
      return 1;
    case 'AddColumn':
    case 'EraseColumn':
    case 'CreateObject':
    case 'EraseObject':
      return 2;
  }
}

function isPathInstr(instr: Instruction): instr is PathInstruction {
  return pathLength(instr) >= 3;
}

function indexOf(instr: PathInstruction): number {
  const last = instr.path[instr.path.length - 1];
  if (typeof last !== 'number') badMerge(`${instr.type} path does not end in an index`);
  return last;
}

function isArrayUpdate(instr: Update): boolean {
  return instr.path.length > 0 && typeof instr.path[instr.path.length - 1] === 'number';
}

class Side {
  cs!: TransformableChangeset;
  csIndex = 0;
  pos = 0;
  discarded = false;
  pathLen = 0;
  timestamp = 0;
  fileIdent = 0;
  objectKey: string | null = null;

  constructor(private readonly engine: Transformer) {}

  init(cs: TransformableChangeset, csIndex: number, pos: number): void {
    this.cs = cs;
    this.csIndex = csIndex;
    this.pos = pos;
    this.discarded = false;
    const instr = this.get();
    this.pathLen = pathLength(instr);
    this.timestamp = cs.originTimestamp;
    this.fileIdent = cs.originFileIdent;
    this.objectKey = cachedObjectKey(instr);
  }

  get(): Instruction {
    const instr = this.cs.instructions[this.pos];
    if (!instr) throw new Error('merge cursor on a discarded instruction');
    return instr;
  }

  /** True when this side's discriminant is lower than the other's. */
  before(other: Side): boolean {
    return this.timestamp === other.timestamp ? this.fileIdent < other.fileIdent : this.timestamp < other.timestamp;
  }

  discard(): void {
    this.cs.instructions[this.pos] = null;
    this.cs.dirty = true;
    this.discarded = true;
  }

  touch(): void {
    this.cs.dirty = true;
  }

  prepend(instr: Instruction): void {
    this.engine.prepend(this, instr);
  }
}

// ---- helpers over a pair of instructions ----

function sameField(a: PathInstruction, b: PathInstruction): boolean {
  return a.table === b.table && a.field === b.field && sameKey(a.object, b.object);
}

function samePathInstr(a: PathInstruction, b: PathInstruction): boolean {
  return sameField(a, b) && samePath(a.path, b.path);
}

function sameContainer(a: PathInstruction, b: PathInstruction): boolean {
  if (a.path.length !== b.path.length || !sameField(a, b)) return false;
  for (let i = 0; i < a.path.length - 1; i++) if (a.path[i] !== b.path[i]) return false;
  return true;
}

/** When `outer`'s path is a strict prefix of `inner`'s, the element of `inner` right after it. */
function prefixNext(outer: Instruction, inner: Instruction): PathElement | undefined {
  if (!isPathInstr(outer) || !isPathInstr(inner)) return undefined;
  if (outer.path.length >= inner.path.length || !sameField(outer, inner)) return undefined;
  for (let i = 0; i < outer.path.length; i++) if (outer.path[i] !== inner.path[i]) return undefined;
  return inner.path[outer.path.length];
}

function isContainerPrefixOf(outer: PathInstruction, inner: Instruction): boolean {
  if (!isPathInstr(inner)) return false;
  if (outer.path.length === 0 || outer.path.length >= inner.path.length || !sameField(outer, inner)) return false;
  for (let i = 0; i < outer.path.length - 1; i++) if (outer.path[i] !== inner.path[i]) return false;
  return true;
}

function correspondingIndex(outer: PathInstruction, inner: PathInstruction): number {
  const v = inner.path[outer.path.length - 1];
  if (typeof v !== 'number') badMerge('Inconsistent paths');
  return v;
}

function setCorrespondingIndex(outer: PathInstruction, inner: PathInstruction, value: number): void {
  inner.path[outer.path.length - 1] = value;
}

function setIndex(instr: PathInstruction, value: number): void {
  instr.path[instr.path.length - 1] = value;
}

/** realm-core's merge_get_vs_move: where element `get` ends up after moving `from` to `to`. */
function getVsMove(get: number, from: number, to: number): number {
  if (get === from) return to;
  let g = get;
  if (g > from) g -= 1;
  if (g >= to) g += 1;
  return g;
}

function targetOf(instr: PathInstruction): string {
  return `${instr.table}.${instr.field}${instr.path.map((p) => `[${String(p)}]`).join('')}`;
}

// ---- nested rules: `outer` has the strictly shorter path ----

function mergeNested(outerSide: Side, innerSide: Side): void {
  const outer = outerSide.get();
  const inner = innerSide.get();
  switch (outer.type) {
    case 'EraseTable':
      if (outer.table === inner.table) innerSide.discard();
      return;
    case 'EraseObject':
      if (isPathInstr(inner) && inner.table === outer.table && sameKey(inner.object, outer.object)) innerSide.discard();
      return;
    case 'Update': {
      if (outer.value.type === 'ObjectValue') return;
      const next = prefixNext(outer, inner);
      if (next === undefined) return;
      if (outer.value.type === 'List' && typeof next === 'number') return;
      if (outer.value.type === 'Dictionary' && typeof next === 'string') return;
      innerSide.discard();
      return;
    }
    case 'AddInteger':
    case 'Clear':
      if (prefixNext(outer, inner) !== undefined) innerSide.discard();
      return;
    case 'ArrayInsert':
      if (isContainerPrefixOf(outer, inner) && isPathInstr(inner)) {
        const index = correspondingIndex(outer, inner);
        if (index >= indexOf(outer)) {
          setCorrespondingIndex(outer, inner, index + 1);
          innerSide.touch();
        }
      }
      return;
    case 'ArrayMove':
      if (isContainerPrefixOf(outer, inner) && isPathInstr(inner)) {
        // realm-core passes the outer move's own index as the element to relocate (transform.cpp, nested
        // ArrayMove rule); clients do exactly this, so the server must too.
        const index = correspondingIndex(outer, inner);
        const moved = getVsMove(indexOf(outer), index, outer.ndx2);
        if (moved !== indexOf(outer)) {
          setIndex(outer, moved);
          outerSide.touch();
        }
      }
      return;
    case 'ArrayErase':
      if (prefixNext(outer, inner) !== undefined) {
        innerSide.discard();
      } else if (isContainerPrefixOf(outer, inner) && isPathInstr(inner)) {
        const index = correspondingIndex(outer, inner);
        if (indexOf(outer) < index) {
          setCorrespondingIndex(outer, inner, index - 1);
          innerSide.touch();
        }
      }
      return;
    case 'AddTable':
    case 'CreateObject':
    case 'AddColumn':
    case 'EraseColumn':
    case 'SetInsert':
    case 'SetErase':
      return;
  }
}

// ---- regular rules: `left` has the higher (or equal) instruction type code ----

function mergeAddTable(l: Side, r: Side, left: AddTable, right: AddTable): void {
  if (left.table !== right.table) return;
  const ls = left.spec;
  const rs = right.spec;
  if (ls.kind === 'TopLevel') {
    if (rs.kind !== 'TopLevel') badMerge(`Schema mismatch: '${left.table}' has a primary key on one side, but not on the other.`);
    if (ls.pkField !== rs.pkField) {
      badMerge(`Schema mismatch: '${left.table}' has primary key '${ls.pkField}' on one side, but primary key '${rs.pkField}' on the other.`);
    }
    if (ls.pkType !== rs.pkType) badMerge(`Schema mismatch: '${left.table}' has primary key '${ls.pkField}' of type ${ls.pkType} on one side and ${rs.pkType} on the other.`);
    if (ls.pkNullable !== rs.pkNullable) badMerge(`Schema mismatch: '${left.table}' has a primary key nullable on one side, but not the other.`);
    if (ls.asymmetric !== rs.asymmetric) badMerge(`Schema mismatch: '${left.table}' is asymmetric on one side, but not on the other.`);
  } else if (rs.kind !== 'Embedded') {
    badMerge(`Schema mismatch: '${left.table}' is an embedded table on one side, but not the other.`);
  }
  l.discard();
  r.discard();
}

function mergeAddColumn(l: Side, r: Side, left: AddColumn, right: AddColumn): void {
  if (left.table !== right.table || left.field !== right.field) return;
  const where = `Property '${left.field}' in class '${left.table}'`;
  if (left.valueType !== right.valueType) badMerge(`Schema mismatch: ${where} is of type ${left.valueType} on one side and type ${right.valueType} on the other.`);
  if (left.nullable !== right.nullable) badMerge(`Schema mismatch: ${where} is nullable on one side and not on the other.`);
  if (left.collectionType !== right.collectionType) {
    badMerge(`Schema mismatch: ${where} is a ${left.collectionType} on one side, and a ${right.collectionType} on the other.`);
  }
  if (left.valueType === 'Link' && left.linkTargetTable !== right.linkTargetTable) {
    badMerge(`Schema mismatch: Link ${where} points to class '${left.linkTargetTable ?? ''}' on one side and to '${right.linkTargetTable ?? ''}' on the other.`);
  }
  l.discard();
  r.discard();
}

function mergeUpdateUpdate(l: Side, r: Side, left: Update, right: Update): void {
  if (!samePathInstr(left, right)) return;
  const leftArray = isArrayUpdate(left);
  if (leftArray !== isArrayUpdate(right)) badMerge(`Merge error: array and field update of ${targetOf(left)}`);
  let leftDefault = false;
  let rightDefault = false;
  if (!leftArray) {
    leftDefault = left.isDefault;
    rightDefault = right.isDefault;
  } else if (left.priorSize !== right.priorSize) {
    badMerge(`Merge error: left.prior_size == right.prior_size (instruction target: ${targetOf(left)})`);
  }
  if (left.value.type !== right.value.type) {
    // Creating an embedded object loses to setting a value: updates inside it must go too.
    if (left.value.type === 'ObjectValue') return l.discard();
    if (right.value.type === 'ObjectValue') return r.discard();
  }
  if (left.value.type === right.value.type && (left.value.type === 'List' || left.value.type === 'Dictionary')) return;
  if (leftDefault === rightDefault) {
    if (l.before(r)) l.discard();
    else r.discard();
  } else if (leftDefault) {
    l.discard();
  } else {
    r.discard();
  }
}

function mergeAddIntegerUpdate(l: Side, r: Side, left: AddInteger, right: Update): void {
  if (!samePathInstr(left, right)) return;
  const rightDefault = !isArrayUpdate(right) && right.isDefault;
  if (r.before(l) || rightDefault) {
    if (right.value.type === 'Null') return;
    if (right.value.type !== 'Int') return l.discard();
    // Wrapping 64-bit addition, as in C++.
    const sum = BigInt.asIntN(64, BigInt(right.value.value) + BigInt(left.value));
    right.value = { type: 'Int', value: normalizeInt64(sum) };
    r.touch();
  } else {
    l.discard();
  }
}

function checkPriorSizes(left: PathInstruction & { priorSize: number }, right: PathInstruction & { priorSize: number }): void {
  if (left.priorSize !== right.priorSize) badMerge(`Merge error: left.prior_size == right.prior_size (instruction target: ${targetOf(left)})`);
}

function mergeArrayInsertUpdate(l: Side, r: Side, left: ArrayInsert, right: Update): void {
  if (!sameContainer(left, right)) return;
  checkPriorSizes(left, right);
  if (indexOf(left) > left.priorSize) badMerge(`Merge error: left.index() <= left.prior_size (instruction target: ${targetOf(left)})`);
  if (indexOf(right) >= right.priorSize) badMerge(`Merge error: right.index() < right.prior_size (instruction target: ${targetOf(right)})`);
  right.priorSize += 1;
  if (indexOf(right) >= indexOf(left)) setIndex(right, indexOf(right) + 1);
  r.touch();
  void l;
}

function mergeArrayMoveUpdate(l: Side, r: Side, left: ArrayMove, right: Update): void {
  if (!sameContainer(left, right)) return;
  if (indexOf(left) >= left.priorSize) badMerge(`Merge error: left.index() < left.prior_size (instruction target: ${targetOf(left)})`);
  if (indexOf(right) >= right.priorSize) badMerge(`Merge error: right.index() < right.prior_size (instruction target: ${targetOf(right)})`);
  const moved = getVsMove(indexOf(right), indexOf(left), left.ndx2);
  if (moved !== indexOf(right)) {
    setIndex(right, moved);
    r.touch();
  }
  void l;
}

function mergeArrayEraseUpdate(l: Side, r: Side, left: ArrayErase, right: Update): void {
  if (!sameContainer(left, right)) return;
  checkPriorSizes(left, right);
  if (indexOf(left) >= left.priorSize) badMerge(`Merge error: left.index() < left.prior_size (instruction target: ${targetOf(left)})`);
  if (indexOf(right) >= right.priorSize) badMerge(`Merge error: right.index() < right.prior_size (instruction target: ${targetOf(right)})`);
  right.priorSize -= 1;
  r.touch();
  if (indexOf(left) === indexOf(right)) r.discard();
  else if (indexOf(right) > indexOf(left)) setIndex(right, indexOf(right) - 1);
  void l;
}

function mergeClearUpdate(l: Side, r: Side, left: Clear, right: Update): void {
  if (!samePathInstr(left, right)) return;
  if (left.collectionType === 'List' && right.value.type === 'List') return;
  if (left.collectionType === 'Dictionary' && right.value.type === 'Dictionary') return;
  if (l.before(r)) l.discard();
  else r.discard();
}

function mergeArrayInsertInsert(l: Side, r: Side, left: ArrayInsert, right: ArrayInsert): void {
  if (!sameContainer(left, right)) return;
  if (left.priorSize !== right.priorSize) badMerge(`Exception: left.prior_size == right.prior_size (instruction target: ${targetOf(right)})`);
  left.priorSize++;
  right.priorSize++;
  const li = indexOf(left);
  const ri = indexOf(right);
  if (li > ri) setIndex(left, li + 1);
  else if (li < ri) setIndex(right, ri + 1);
  else if (l.before(r)) setIndex(right, ri + 1);
  else setIndex(left, li + 1);
  l.touch();
  r.touch();
}

function mergeArrayMoveInsert(l: Side, r: Side, left: ArrayMove, right: ArrayInsert): void {
  if (!sameContainer(left, right)) return;
  left.priorSize += 1;
  if (indexOf(right) > indexOf(left)) setIndex(right, indexOf(right) - 1);
  else setIndex(left, indexOf(left) + 1);
  if (indexOf(right) < left.ndx2) left.ndx2 += 1;
  else if (indexOf(right) > left.ndx2) setIndex(right, indexOf(right) + 1);
  else if (l.before(r)) left.ndx2 += 1;
  else setIndex(right, indexOf(right) + 1);
  l.touch();
  r.touch();
}

function mergeArrayEraseInsert(l: Side, r: Side, left: ArrayErase, right: ArrayInsert): void {
  if (!sameContainer(left, right)) return;
  checkPriorSizes(left, right);
  if (indexOf(left) >= left.priorSize) badMerge(`Merge error: left.index() < left.prior_size (instruction target: ${targetOf(left)})`);
  if (indexOf(right) > right.priorSize) badMerge(`Merge error: right.index() <= right.prior_size (instruction target: ${targetOf(left)})`);
  left.priorSize++;
  right.priorSize--;
  if (indexOf(right) <= indexOf(left)) setIndex(left, indexOf(left) + 1);
  else setIndex(right, indexOf(right) - 1);
  l.touch();
  r.touch();
}

function mergeArrayMoveMove(l: Side, r: Side, left: ArrayMove, right: ArrayMove): void {
  if (!sameContainer(left, right)) return;
  checkPriorSizes(left, right);
  if (indexOf(left) >= left.priorSize || left.ndx2 >= left.priorSize) badMerge(`Merge error: move out of range (instruction target: ${targetOf(left)})`);
  if (indexOf(right) >= right.priorSize || right.ndx2 >= right.priorSize) badMerge(`Merge error: move out of range (instruction target: ${targetOf(right)})`);
  l.touch();
  r.touch();
  if (indexOf(left) < indexOf(right)) setIndex(right, indexOf(right) - 1);
  else if (indexOf(left) > indexOf(right)) setIndex(left, indexOf(left) - 1);
  else {
    // Two moves of the same element: the later move wins.
    if (l.before(r)) {
      setIndex(right, left.ndx2);
      l.discard();
      if (indexOf(right) === right.ndx2) r.discard();
    } else {
      setIndex(left, right.ndx2);
      if (indexOf(left) === left.ndx2) l.discard();
      r.discard();
    }
    return;
  }
  if (left.ndx2 > indexOf(right)) left.ndx2 -= 1;
  else setIndex(right, indexOf(right) + 1);
  if (indexOf(left) < right.ndx2) right.ndx2 -= 1;
  else setIndex(left, indexOf(left) + 1);
  if (left.ndx2 < right.ndx2) right.ndx2 += 1;
  else if (left.ndx2 > right.ndx2) left.ndx2 += 1;
  else if (l.before(r)) right.ndx2 += 1;
  else left.ndx2 += 1;
  if (indexOf(left) === left.ndx2) l.discard();
  if (indexOf(right) === right.ndx2) r.discard();
}

function mergeArrayEraseMove(l: Side, r: Side, left: ArrayErase, right: ArrayMove): void {
  if (!sameContainer(left, right)) return;
  checkPriorSizes(left, right);
  if (indexOf(left) >= left.priorSize) badMerge(`Merge error: left.index() < left.prior_size (instruction target: ${targetOf(left)})`);
  if (indexOf(right) >= right.priorSize) badMerge(`Merge error: right.index() < right.prior_size (instruction target: ${targetOf(right)})`);
  right.priorSize -= 1;
  l.touch();
  r.touch();
  if (indexOf(left) === indexOf(right)) {
    setIndex(left, right.ndx2);
    r.discard();
    return;
  }
  if (indexOf(left) > indexOf(right)) setIndex(left, indexOf(left) - 1);
  else setIndex(right, indexOf(right) - 1);
  if (indexOf(left) >= right.ndx2) setIndex(left, indexOf(left) + 1);
  else right.ndx2 -= 1;
  if (indexOf(right) === right.ndx2) r.discard();
}

function mergeArrayEraseErase(l: Side, r: Side, left: ArrayErase, right: ArrayErase): void {
  if (!sameContainer(left, right)) return;
  checkPriorSizes(left, right);
  if (indexOf(left) >= left.priorSize) badMerge(`Merge error: left.index() < left.prior_size (instruction target: ${targetOf(left)})`);
  if (indexOf(right) >= right.priorSize) badMerge(`Merge error: right.index() < right.prior_size (instruction target: ${targetOf(right)})`);
  left.priorSize -= 1;
  right.priorSize -= 1;
  l.touch();
  r.touch();
  if (indexOf(left) > indexOf(right)) setIndex(left, indexOf(left) - 1);
  else if (indexOf(left) < indexOf(right)) setIndex(right, indexOf(right) - 1);
  else {
    l.discard();
    r.discard();
  }
}

/**
 * Payload equality as realm-core's `Payload::operator==`, used by the SetErase/SetErase rule: strings,
 * binaries and links of parsed changesets compare by their position in their changeset.
 */
function realmPayloadEquals(a: Payload, b: Payload): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'String' || a.type === 'Binary' || a.type === 'Link') {
    const pa = payloadPositions.get(a);
    const pb = payloadPositions.get(b);
    if (pa !== undefined && pb !== undefined) return pa === pb;
  }
  return samePayload(a, b);
}

/** Keeps the later of two conflicting instructions. */
function laterWins(l: Side, r: Side): void {
  if (l.before(r)) l.discard();
  else r.discard();
}

function mergeRegular(a: Side, b: Side): void {
  // Rules are written with the higher instruction type code on the left.
  const [l, r] = instructionTypeCodes[a.get().type] >= instructionTypeCodes[b.get().type] ? [a, b] : [b, a];
  const left = l.get();
  const right = r.get();
  switch (left.type) {
    case 'AddTable':
      if (right.type === 'AddTable') mergeAddTable(l, r, left, right);
      return;
    case 'EraseTable':
      if ((right.type === 'AddTable' || right.type === 'EraseTable') && left.table === right.table) {
        if (right.type === 'EraseTable') l.discard();
        r.discard();
      }
      return;
    case 'CreateObject':
      return;
    case 'EraseObject':
      if ((right.type === 'CreateObject' || right.type === 'EraseObject') && left.table === right.table && sameKey(left.object, right.object)) {
        // Erase beats create; of two erases the later one is kept.
        if (right.type === 'CreateObject' || r.before(l)) r.discard();
        else l.discard();
      }
      return;
    case 'Update':
      if (right.type === 'Update') mergeUpdateUpdate(l, r, left, right);
      return;
    case 'AddInteger':
      if (right.type === 'Update') mergeAddIntegerUpdate(l, r, left, right);
      return;
    case 'AddColumn':
      if (right.type === 'AddColumn') mergeAddColumn(l, r, left, right);
      else if (right.type === 'EraseTable' && left.valueType === 'Link' && left.linkTargetTable === right.table) {
        // A link column to a table erased concurrently goes too.
        const eraseColumn: EraseColumn = { type: 'EraseColumn', table: left.table, field: left.field };
        r.prepend(eraseColumn);
        l.discard();
      }
      return;
    case 'EraseColumn':
      mergeEraseColumn(l, r, left, right);
      return;
    case 'ArrayInsert':
      if (right.type === 'Update') mergeArrayInsertUpdate(l, r, left, right);
      else if (right.type === 'ArrayInsert') mergeArrayInsertInsert(l, r, left, right);
      return;
    case 'ArrayMove':
      if (right.type === 'Update') mergeArrayMoveUpdate(l, r, left, right);
      else if (right.type === 'ArrayInsert') mergeArrayMoveInsert(l, r, left, right);
      else if (right.type === 'ArrayMove') mergeArrayMoveMove(l, r, left, right);
      return;
    case 'ArrayErase':
      if (right.type === 'Update') mergeArrayEraseUpdate(l, r, left, right);
      else if (right.type === 'ArrayInsert') mergeArrayEraseInsert(l, r, left, right);
      else if (right.type === 'ArrayMove') mergeArrayEraseMove(l, r, left, right);
      else if (right.type === 'ArrayErase') mergeArrayEraseErase(l, r, left, right);
      return;
    case 'Clear':
      if (right.type === 'Update') mergeClearUpdate(l, r, left, right);
      else if ((right.type === 'AddInteger' && samePathInstr(left, right))) r.discard();
      else if (right.type === 'Clear' && samePathInstr(left, right)) laterWins(l, r);
      return;
    case 'SetInsert':
      if (right.type === 'Clear' && samePathInstr(left, right)) l.discard();
      else if (right.type === 'SetInsert' && samePathInstr(left, right) && samePayload(left.value, right.value)) laterWins(l, r);
      return;
    case 'SetErase':
      if (right.type === 'Clear' && samePathInstr(left, right)) l.discard();
      else if (right.type === 'SetInsert' && samePathInstr(left, right) && samePayload(left.value, right.value)) laterWins(l, r);
      else if (right.type === 'SetErase' && samePathInstr(left, right) && realmPayloadEquals(left.value, right.value)) laterWins(l, r);
      return;
  }
}

function mergeEraseColumn(l: Side, r: Side, left: EraseColumn, right: Instruction): void {
  switch (right.type) {
    case 'EraseColumn':
      if (left.table === right.table && left.field === right.field) {
        l.discard();
        r.discard();
      }
      return;
    case 'AddColumn':
    case 'Update':
      if (left.table === right.table && left.field === right.field) r.discard();
      return;
    case 'AddTable':
    case 'EraseTable':
    case 'CreateObject':
    case 'EraseObject':
    case 'AddInteger':
      return;
    case 'ArrayInsert':
    case 'ArrayMove':
    case 'ArrayErase':
    case 'Clear':
    case 'SetInsert':
    case 'SetErase':
      // Type codes above EraseColumn: these pairs are dispatched with EraseColumn on the right.
      return;
  }
}

class Transformer {
  readonly major = new Side(this);
  readonly minor = new Side(this);
  theirs: TransformableChangeset[] = [];
  /** Per changeset of theirs, a small number per instruction naming its object (-1: schema). */
  private minorObjects: number[][] = [];
  private readonly objectIds = new Map<string, number>();

  private objectId(instr: Instruction): number {
    const key = cachedObjectKey(instr);
    if (key === null) return -1;
    let id = this.objectIds.get(key);
    if (id === undefined) {
      id = this.objectIds.size;
      this.objectIds.set(key, id);
    }
    return id;
  }

  run(ours: TransformableChangeset[], theirs: TransformableChangeset[]): void {
    this.theirs = theirs;
    this.minorObjects = theirs.map((cs) => cs.instructions.map((i) => (i === null ? -1 : this.objectId(i))));
    // Object keys of their instructions, so the inner loop can skip pairs that cannot interact.
    for (let c = 0; c < ours.length; c++) {
      const cs = ours[c];
      if (!cs) continue;
      for (let i = 0; i < cs.instructions.length; i++) {
        if (cs.instructions[i] === null) continue;
        this.major.init(cs, c, i);
        this.transformMajor(0, 0);
        // Prepends may have moved the instruction we were working on.
        i = this.major.pos;
      }
    }
  }

  /** Merges the current major instruction with their instructions from (csIndex, pos) onwards. */
  transformMajor(startCs: number, startPos: number): void {
    const major = this.major;
    const minor = this.minor;
    const majorObject = this.objectId(major.get());
    for (let c = startCs; c < this.theirs.length; c++) {
      const cs = this.theirs[c];
      if (!cs) continue;
      const list = cs.instructions;
      const objects = this.minorObjects[c] ?? [];
      for (let k = c === startCs ? startPos : 0; k < list.length; k++) {
        const instr = list[k];
        if (instr === null || instr === undefined) continue;
        // Instructions on two different objects never interact; schema instructions meet everything.
        if (majorObject >= 0) {
          const object = objects[k] ?? -1;
          if (object >= 0 && object !== majorObject) continue;
        }
        minor.init(cs, c, k);
        this.mergeInstructions();
        if (major.discarded) return;
        k = minor.pos;
      }
    }
  }

  mergeInstructions(): void {
    const major = this.major;
    const minor = this.minor;
    if (minor.pathLen < major.pathLen) {
      mergeNested(minor, major);
      if (major.discarded) return;
    } else if (minor.pathLen > major.pathLen) {
      mergeNested(major, minor);
      if (minor.discarded) return;
    }
    if (!major.discarded && !minor.discarded) mergeRegular(major, minor);
  }

  prepend(side: Side, instr: Instruction): void {
    side.cs.instructions.splice(side.pos, 0, instr);
    side.cs.dirty = true;
    if (side === this.minor) {
      this.minorObjects[side.csIndex]?.splice(side.pos, 0, this.objectId(instr));
      // The prepended instruction is not merged with the current major one (as in realm-core).
      side.pos += 1;
      return;
    }
    // A prepended major instruction is merged with the rest of their instructions, then we return to
    // the instruction that caused the prepend.
    const minor = this.minor;
    const saved = { cs: minor.cs, csIndex: minor.csIndex, pos: minor.pos, discarded: minor.discarded, pathLen: minor.pathLen };
    const major = this.major;
    const origin = { pos: side.pos + 1, discarded: major.discarded, pathLen: major.pathLen, csIndex: major.csIndex, cs: major.cs };
    major.init(origin.cs, origin.csIndex, side.pos);
    this.transformMajor(saved.csIndex, saved.pos + 1);
    major.cs = origin.cs;
    major.csIndex = origin.csIndex;
    major.pos = origin.pos;
    major.discarded = origin.discarded;
    major.pathLen = origin.pathLen;
    major.objectKey = cachedObjectKey(major.get());
    minor.cs = saved.cs;
    minor.csIndex = saved.csIndex;
    minor.pos = saved.pos;
    minor.discarded = saved.discarded;
    minor.pathLen = saved.pathLen;
  }
}

/**
 * Transforms `ours` and `theirs` against each other in place (realm-core `Transformer::merge_changesets`).
 * Throws SyncProtocolError('bad_merge') when the changesets cannot be merged (schema mismatch,
 * inconsistent list sizes).
 */
export function mergeChangesets(ours: TransformableChangeset[], theirs: TransformableChangeset[]): void {
  if (ours.length === 0 || theirs.length === 0) return;
  new Transformer().run(ours, theirs);
}

/** A deep copy of instructions that the merge may mutate. */
export function cloneInstructions(instructions: readonly (Instruction | null)[]): (Instruction | null)[] {
  return instructions.map((i) => (i === null ? null : cloneInstruction(i)));
}

export function cloneInstruction(instr: Instruction): Instruction {
  if ('path' in instr) return { ...instr, path: [...instr.path] };
  return { ...instr };
}

/** The surviving instructions of a merged changeset. */
export function survivingInstructions(cs: TransformableChangeset): Instruction[] {
  return cs.instructions.filter((i): i is Instruction => i !== null);
}
