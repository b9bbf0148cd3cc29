/**
 * Parse and encode changesets in realm-core's binary format (changeset_parser.cpp /
 * changeset_encoder.cpp). Parsing is strict and total: any malformed input raises a SyncProtocolError
 * of kind 'bad_changeset'. A parsed changeset remembers where it interned its strings, so encoding it
 * again gives back the same bytes.
 */
import { fromUtf8, hexDigit, toHex } from '../bytes';
import { SyncProtocolError } from '../errors';
import {
  collectionTypes,
  instructionTypeCodes,
  isArrayPath,
  isPathInstruction,
  payloadTypeCodes,
  type Changeset,
  type CollectionType,
  type Instruction,
  type InternLayout,
  type PathElement,
  type PathInstructionBase,
  type Payload,
  type PayloadType,
  type PrimaryKey,
} from './types';
import { payloadPositions } from './identity';
import { Reader, Writer } from './varint';
import { primaryKeyString } from '../merge/compare';

const INTERN_STRING = 0x3f;
const MAX_STRING_SIZE = 0xfffff7; // realm's Table::max_string_size (16 MiB less the array header)

const payloadTypeByCode = new Map<number, PayloadType>(Object.entries(payloadTypeCodes).map(([k, v]) => [v, k as PayloadType]));
const instructionTypeByCode = new Map<number, Instruction['type']>(
  Object.entries(instructionTypeCodes).map(([k, v]) => [v, k as Instruction['type']]),
);
const keyTypes = new Set<PayloadType>(['Int', 'String', 'ObjectId', 'UUID', 'GlobalKey']);

function bad(message: string): never {
  throw new SyncProtocolError('bad_changeset', message);
}

class Parser {
  readonly r: Reader;
  readonly strings: string[] = [];
  readonly before: number[] = [];
  private readonly seen = new Set<string>();
  readonly instructions: Instruction[] = [];

  constructor(bytes: Uint8Array) {
    this.r = new Reader(bytes);
  }

  /** Bytes of strings read so far: realm-core's string buffer, where each string's offset is taken. */
  private bufferSize = 0;
  private lastOffset = 0;
  private lastIntern = 0;
  /** Where the last String, Binary or Link payload sat (see ./identity); only SetErase records it. */
  private posKind = '';
  private posA = 0;
  private posB = 0;
  private posKey: PrimaryKey | null = null;

  private setPosition(kind: string, a: number, b: number, key: PrimaryKey | null): void {
    this.posKind = kind;
    this.posA = a;
    this.posB = b;
    this.posKey = key;
  }

  private position(): string {
    if (this.posKind !== 'l') return `${this.posKind}${this.posA}:${this.posB}`;
    const key = this.posKey;
    return `l${this.posA}/${key?.type === 'String' ? `#${this.posB}` : key ? primaryKeyString(key) : ''}`;
  }

  rawString(): string {
    const size = this.r.int('uint64');
    if (typeof size !== 'number' || size > MAX_STRING_SIZE) bad('bad changeset - string too long');
    const s = fromUtf8(this.r.take(size), 'bad_changeset', 'changeset string');
    this.lastOffset = this.bufferSize;
    this.bufferSize += size;
    return s;
  }

  intern(): string {
    const index = this.r.smallUint('uint32');
    const s = this.strings[index];
    if (s === undefined) bad('Invalid interned string');
    this.lastIntern = index;
    return s;
  }

  payloadType(): PayloadType {
    const code = this.r.int('int64');
    const type = typeof code === 'number' ? payloadTypeByCode.get(code) : undefined;
    if (type === undefined) bad('Unsupported data type');
    return type;
  }

  collectionType(): CollectionType {
    const t = collectionTypes[this.r.smallUint('uint8')];
    if (t === undefined) bad('Unsupported collection type');
    return t;
  }

  objectId(): string {
    return toHex(this.r.take(12));
  }

  uuid(): string {
    return toHex(this.r.take(16));
  }

  primaryKey(): PrimaryKey {
    const type = this.payloadType();
    switch (type) {
      case 'Null':
        return { type: 'Null' };
      case 'Int':
        return { type: 'Int', value: this.r.int('int64') };
      case 'String':
        return { type: 'String', value: this.intern() };
      case 'GlobalKey':
        return { type: 'GlobalKey', hi: this.r.int('uint64'), lo: this.r.int('uint64') };
      case 'ObjectId':
        return { type: 'ObjectId', value: this.objectId() };
      case 'UUID':
        return { type: 'UUID', value: this.uuid() };
      case 'Bool':
      case 'Binary':
      case 'Timestamp':
      case 'Float':
      case 'Double':
      case 'Decimal':
      case 'Link':
      case 'ObjectValue':
      case 'Dictionary':
      case 'Erased':
      case 'List':
      case 'Set':
        return bad('Unsupported object key type');
    }
  }

  payload(): Payload {
    const type = this.payloadType();
    const r = this.r;
    switch (type) {
      case 'GlobalKey':
        return bad('Unsupported payload data type');
      case 'Int':
        return { type, value: r.int('int64') };
      case 'Bool':
        return { type, value: r.bool() };
      case 'Float': {
        const b = r.take(4);
        return { type, value: new DataView(b.buffer, b.byteOffset, 4).getFloat32(0, true) };
      }
      case 'Double': {
        const b = r.take(8);
        return { type, value: new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true) };
      }
      case 'String': {
        const value = this.rawString();
        this.setPosition('s', this.lastOffset, this.bufferSize - this.lastOffset, null);
        return { type, value };
      }
      case 'Binary': {
        const size = r.int('uint64');
        if (typeof size !== 'number') bad('invalid binary length');
        this.setPosition('b', this.bufferSize, size, null);
        this.bufferSize += size;
        return { type, value: r.take(size).slice() };
      }
      case 'Timestamp': {
        const seconds = r.int('int64');
        const nanoseconds = r.int('int64');
        if (typeof nanoseconds !== 'number' || nanoseconds > 0x7fffffff || nanoseconds < -0x80000000) bad('timestamp out of range');
        return { type, seconds, nanoseconds };
      }
      case 'ObjectId':
        return { type, value: this.objectId() };
      case 'Decimal': {
        const coefficient = r.bid128();
        const exponent = r.int('int32') as number;
        const sign = r.int('int32');
        if (sign !== 0 && sign !== 1) bad('bad changeset - decimal sign must be 0 or 1');
        return { type, coefficient, exponent, negative: sign === 1 };
      }
      case 'UUID':
        return { type, value: this.uuid() };
      case 'Link': {
        const table = this.intern();
        const tableIndex = this.lastIntern;
        const key = this.primaryKey();
        this.setPosition('l', tableIndex, this.lastIntern, key);
        return { type, table, key };
      }
      case 'Null':
      case 'Set':
      case 'List':
      case 'Dictionary':
      case 'Erased':
      case 'ObjectValue':
        return { type };
    }
  }

  path(): PathElement[] {
    const len = this.r.smallUint('uint32');
    const path: PathElement[] = [];
    for (let i = 0; i < len; i++) {
      const element = this.r.int('int64');
      if (typeof element !== 'number') bad('bad changeset - path element out of range');
      if (element >= 0) {
        if (element > 0xffffffff) bad('bad changeset - path index out of range');
        path.push(element);
      } else if (element === -1) {
        path.push(this.intern());
      } else {
        bad('bad changeset - bad path element');
      }
    }
    return path;
  }

  pathInstr(): PathInstructionBase {
    const table = this.intern();
    const object = this.primaryKey();
    const field = this.intern();
    return { table, object, field, path: this.path() };
  }

  one(): void {
    const r = this.r;
    const code = r.int('uint64');
    if (code === INTERN_STRING) {
      const index = r.smallUint('uint32');
      if (index !== this.strings.length) bad(`Unexpected intern index: ${index}`);
      const s = this.rawString();
      if (this.seen.has(s)) bad(`Unexpected intern string: ${s.slice(0, 40)}`);
      this.seen.add(s);
      this.strings.push(s);
      this.before.push(this.instructions.length);
      return;
    }
    const type = typeof code === 'number' ? instructionTypeByCode.get(code) : undefined;
    if (type === undefined) bad(`Unknown instruction type: ${String(code)}`);
    this.instructions.push(this.instruction(type));
  }

  instruction(type: Instruction['type']): Instruction {
    const r = this.r;
    switch (type) {
      case 'AddTable': {
        const table = this.intern();
        const tableType = r.smallUint('uint8');
        if (tableType === 1) return { type, table, spec: { kind: 'Embedded' } };
        if (tableType !== 0 && tableType !== 2) bad(`AddTable: unknown table type: ${tableType}`);
        const pkField = this.intern();
        const pkType = this.payloadType();
        if (!keyTypes.has(pkType)) bad('Invalid primary key type in AddTable');
        return { type, table, spec: { kind: 'TopLevel', asymmetric: tableType === 2, pkField, pkType, pkNullable: r.bool() } };
      }
      case 'EraseTable':
        return { type, table: this.intern() };
      case 'CreateObject':
      case 'EraseObject': {
        const table = this.intern();
        return { type, table, object: this.primaryKey() };
      }
      case 'Update': {
        const base = this.pathInstr();
        const value = this.payload();
        if (isArrayPath(base.path)) return { type, ...base, value, isDefault: false, priorSize: r.smallUint('uint32') };
        return { type, ...base, value, isDefault: r.bool(), priorSize: 0 };
      }
      case 'AddInteger': {
        const base = this.pathInstr();
        return { type, ...base, value: r.int('int64') };
      }
      case 'AddColumn': {
        const table = this.intern();
        const field = this.intern();
        const valueType = this.payloadType();
        const nullable = r.bool();
        const collectionType = this.collectionType();
        const linkTargetTable = valueType === 'Link' ? this.intern() : undefined;
        const keyType = collectionType === 'Dictionary' ? this.payloadType() : 'Null';
        return { type, table, field, valueType, nullable, collectionType, keyType, ...(linkTargetTable === undefined ? {} : { linkTargetTable }) };
      }
      case 'EraseColumn': {
        const table = this.intern();
        return { type, table, field: this.intern() };
      }
      case 'ArrayInsert': {
        const base = this.arrayPathInstr(type);
        const value = this.payload();
        return { type, ...base, value, priorSize: r.smallUint('uint32') };
      }
      case 'ArrayMove': {
        const base = this.arrayPathInstr(type);
        const ndx2 = r.smallUint('uint32');
        return { type, ...base, ndx2, priorSize: r.smallUint('uint32') };
      }
      case 'ArrayErase': {
        const base = this.arrayPathInstr(type);
        return { type, ...base, priorSize: r.smallUint('uint32') };
      }
      case 'Clear': {
        const base = this.pathInstr();
        return { type, ...base, collectionType: this.collectionType() };
      }
      case 'SetInsert': {
        const base = this.pathInstr();
        return { type, ...base, value: this.payload() };
      }
      case 'SetErase': {
        const base = this.pathInstr();
        const value = this.payload();
        if (value.type === 'String' || value.type === 'Binary' || value.type === 'Link') payloadPositions.set(value, this.position());
        return { type, ...base, value };
      }
    }
  }

  arrayPathInstr(type: string): PathInstructionBase {
    const base = this.pathInstr();
    if (!isArrayPath(base.path)) bad(`${type} without an index`);
    return base;
  }
}

/** Parses changeset bytes. Throws SyncProtocolError('bad_changeset') on any malformed input. */
export function parseChangeset(bytes: Uint8Array): Changeset {
  const p = new Parser(bytes);
  while (!p.r.done) p.one();
  const layout: InternLayout = { strings: p.strings, before: p.before };
  return { instructions: p.instructions, layout };
}

// ---- encoder ----

export interface EncodeOptions {
  /**
   * Where to intern strings that the changeset's own layout does not place: 'inline' (just before the first
   * instruction using them, as clients do) or 'front' (all at the start, as realm-core's server does when it
   * re-encodes a transformed changeset). Default 'inline'.
   */
  interning?: 'inline' | 'front';
}

class Encoder {
  readonly w = new Writer();
  private readonly index = new Map<string, number>();

  internNow(s: string): void {
    if (this.index.has(s)) return;
    const i = this.index.size;
    this.index.set(s, i);
    this.w.byte(INTERN_STRING);
    this.w.int(i);
    this.w.string(s);
  }

  ref(s: string): void {
    const i = this.index.get(s);
    if (i === undefined) throw new SyncProtocolError('bad_changeset', `string '${s.slice(0, 40)}' used before it was interned`);
    this.w.int(i);
  }

  payloadType(t: PayloadType): void {
    this.w.int(payloadTypeCodes[t]);
  }

  primaryKey(pk: PrimaryKey): void {
    this.payloadType(pk.type);
    switch (pk.type) {
      case 'Null':
        return;
      case 'Int':
        this.w.int(pk.value);
        return;
      case 'String':
        this.ref(pk.value);
        return;
      case 'GlobalKey':
        this.w.int(pk.hi);
        this.w.int(pk.lo);
        return;
      case 'ObjectId':
        this.fixedHex(pk.value, 12);
        return;
      case 'UUID':
        this.fixedHex(pk.value, 16);
        return;
    }
  }

  fixedHex(hex: string, size: number): void {
    if (hex.length !== size * 2) throw new SyncProtocolError('bad_changeset', `expected ${size} bytes of hex`);
    for (let i = 0; i < size; i++) {
      const hi = hexDigit(hex.charCodeAt(i * 2));
      const lo = hexDigit(hex.charCodeAt(i * 2 + 1));
      if (hi < 0 || lo < 0) throw new SyncProtocolError('bad_changeset', 'bad hex');
      this.w.byte(hi * 16 + lo);
    }
  }

  payload(p: Payload): void {
    this.payloadType(p.type);
    const w = this.w;
    switch (p.type) {
      case 'Int':
        w.int(p.value);
        return;
      case 'Bool':
        w.int(p.value ? 1 : 0);
        return;
      case 'Float': {
        const b = new Uint8Array(4);
        new DataView(b.buffer).setFloat32(0, p.value, true);
        w.bytes(b);
        return;
      }
      case 'Double': {
        const b = new Uint8Array(8);
        new DataView(b.buffer).setFloat64(0, p.value, true);
        w.bytes(b);
        return;
      }
      case 'String':
        w.string(p.value);
        return;
      case 'Binary':
        w.int(p.value.length);
        w.bytes(p.value);
        return;
      case 'Timestamp':
        w.int(p.seconds);
        w.int(p.nanoseconds);
        return;
      case 'ObjectId':
        this.fixedHex(p.value, 12);
        return;
      case 'UUID':
        this.fixedHex(p.value, 16);
        return;
      case 'Decimal':
        w.bid128(p.coefficient);
        w.int(p.exponent);
        w.int(p.negative ? 1 : 0);
        return;
      case 'Link':
        this.ref(p.table);
        this.primaryKey(p.key);
        return;
      case 'Null':
      case 'ObjectValue':
      case 'Dictionary':
      case 'Erased':
      case 'List':
      case 'Set':
        return;
    }
  }

  pathInstr(code: number, instr: PathInstructionBase): void {
    this.w.int(code);
    this.ref(instr.table);
    this.primaryKey(instr.object);
    this.ref(instr.field);
    this.w.int(instr.path.length);
    for (const e of instr.path) {
      if (typeof e === 'number') this.w.int(e);
      else {
        this.w.int(-1);
        this.ref(e);
      }
    }
  }

  instruction(instr: Instruction): void {
    const code = instructionTypeCodes[instr.type];
    const w = this.w;
    switch (instr.type) {
      case 'AddTable':
        w.int(code);
        this.ref(instr.table);
        if (instr.spec.kind === 'Embedded') {
          w.int(1);
          return;
        }
        w.int(instr.spec.asymmetric ? 2 : 0);
        this.ref(instr.spec.pkField);
        this.payloadType(instr.spec.pkType);
        w.int(instr.spec.pkNullable ? 1 : 0);
        return;
      case 'EraseTable':
        w.int(code);
        this.ref(instr.table);
        return;
      case 'CreateObject':
      case 'EraseObject':
        w.int(code);
        this.ref(instr.table);
        this.primaryKey(instr.object);
        return;
      case 'Update':
        this.pathInstr(code, instr);
        this.payload(instr.value);
        if (isArrayPath(instr.path)) w.int(instr.priorSize);
        else w.int(instr.isDefault ? 1 : 0);
        return;
      case 'AddInteger':
        this.pathInstr(code, instr);
        w.int(instr.value);
        return;
      case 'AddColumn':
        w.int(code);
        this.ref(instr.table);
        this.ref(instr.field);
        this.payloadType(instr.valueType);
        w.int(instr.nullable ? 1 : 0);
        w.int(collectionTypes.indexOf(instr.collectionType));
        if (instr.valueType === 'Link') this.ref(instr.linkTargetTable ?? '');
        if (instr.collectionType === 'Dictionary') this.payloadType(instr.keyType);
        return;
      case 'EraseColumn':
        w.int(code);
        this.ref(instr.table);
        this.ref(instr.field);
        return;
      case 'ArrayInsert':
        this.pathInstr(code, instr);
        this.payload(instr.value);
        w.int(instr.priorSize);
        return;
      case 'ArrayMove':
        this.pathInstr(code, instr);
        w.int(instr.ndx2);
        w.int(instr.priorSize);
        return;
      case 'ArrayErase':
        this.pathInstr(code, instr);
        w.int(instr.priorSize);
        return;
      case 'Clear':
        this.pathInstr(code, instr);
        w.int(collectionTypes.indexOf(instr.collectionType));
        return;
      case 'SetInsert':
      case 'SetErase':
        this.pathInstr(code, instr);
        this.payload(instr.value);
        return;
    }
  }
}

/** The strings an instruction refers to, in the order the encoder writes them. */
export function instructionStrings(instr: Instruction, out: string[] = []): string[] {
  const pk = (k: PrimaryKey): void => {
    if (k.type === 'String') out.push(k.value);
  };
  const payload = (p: Payload): void => {
    if (p.type === 'Link') {
      out.push(p.table);
      pk(p.key);
    }
  };
  out.push(instr.table);
  if (isPathInstruction(instr)) {
    pk(instr.object);
    out.push(instr.field);
    for (const e of instr.path) if (typeof e === 'string') out.push(e);
    if (instr.type === 'Update' || instr.type === 'ArrayInsert' || instr.type === 'SetInsert' || instr.type === 'SetErase') payload(instr.value);
    return out;
  }
  switch (instr.type) {
    case 'AddTable':
      if (instr.spec.kind === 'TopLevel') out.push(instr.spec.pkField);
      break;
    case 'EraseTable':
      break;
    case 'CreateObject':
    case 'EraseObject':
      pk(instr.object);
      break;
    case 'AddColumn':
      out.push(instr.field);
      if (instr.valueType === 'Link') out.push(instr.linkTargetTable ?? '');
      break;
    case 'EraseColumn':
      out.push(instr.field);
      break;
  }
  return out;
}

/** Encodes a changeset. A parsed changeset (with `layout`) comes out byte-identical to its input. */
export function encodeChangeset(changeset: Changeset, options: EncodeOptions = {}): Uint8Array {
  const e = new Encoder();
  const { instructions, layout } = changeset;
  if (instructions.length === 0 && !layout) return new Uint8Array(0);
  let li = 0;
  const strings = layout?.strings ?? [];
  const before = layout?.before ?? [];
  if (options.interning === 'front') {
    for (const s of strings) e.internNow(s);
    li = strings.length;
    for (const instr of instructions) for (const s of instructionStrings(instr)) e.internNow(s);
  }
  const scratch: string[] = [];
  for (let i = 0; i < instructions.length; i++) {
    while (li < strings.length && (before[li] ?? 0) <= i) e.internNow(strings[li++] ?? '');
    const instr = instructions[i];
    if (!instr) continue;
    scratch.length = 0;
    for (const s of instructionStrings(instr, scratch)) e.internNow(s);
    e.instruction(instr);
  }
  while (li < strings.length) e.internNow(strings[li++] ?? '');
  return e.w.finish();
}
