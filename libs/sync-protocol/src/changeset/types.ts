/**
 * The changeset model: realm-core's sync instructions as plain data. Strings are resolved (no intern
 * indices) so that instructions from different changesets can be compared and merged directly; the
 * intern layout of a parsed changeset is kept separately so it re-encodes byte for byte.
 */

/** A 64-bit integer: a number when it is a safe integer, a bigint otherwise (so equal values are ===). */
export type Int64 = number | bigint;

export const payloadTypeCodes = {
  Null: 0,
  Int: 1,
  Bool: 2,
  String: 3,
  Binary: 4,
  Timestamp: 5,
  Float: 6,
  Double: 7,
  Decimal: 8,
  Link: 9,
  ObjectId: 10,
  UUID: 11,
  GlobalKey: -1,
  ObjectValue: -2,
  Dictionary: -3,
  Erased: -4,
  List: -5,
  Set: -6,
} as const;
export type PayloadType = keyof typeof payloadTypeCodes;

export const collectionTypes = ['Single', 'List', 'Dictionary', 'Set'] as const;
export type CollectionType = (typeof collectionTypes)[number];

export type PrimaryKey =
  | { type: 'Null' }
  | { type: 'Int'; value: Int64 }
  | { type: 'String'; value: string }
  /** 24 lower-case hex digits. */
  | { type: 'ObjectId'; value: string }
  /** 32 lower-case hex digits. */
  | { type: 'UUID'; value: string }
  | { type: 'GlobalKey'; hi: Int64; lo: Int64 };

export interface Decimal128Parts {
  /** The BID128 coefficient, up to 113 bits. */
  coefficient: bigint;
  exponent: number;
  negative: boolean;
}

export type Payload =
  | { type: 'Null' }
  | { type: 'Int'; value: Int64 }
  | { type: 'Bool'; value: boolean }
  | { type: 'String'; value: string }
  | { type: 'Binary'; value: Uint8Array }
  | { type: 'Timestamp'; seconds: Int64; nanoseconds: number }
  | { type: 'Float'; value: number }
  | { type: 'Double'; value: number }
  | ({ type: 'Decimal' } & Decimal128Parts)
  | { type: 'Link'; table: string; key: PrimaryKey }
  | { type: 'ObjectId'; value: string }
  | { type: 'UUID'; value: string }
  | { type: 'ObjectValue' }
  | { type: 'Dictionary' }
  | { type: 'Erased' }
  | { type: 'List' }
  | { type: 'Set' };

/** A path below a field: list indices and dictionary keys / embedded field names. */
export type PathElement = number | string;

export interface PathInstructionBase {
  table: string;
  object: PrimaryKey;
  field: string;
  path: PathElement[];
}

export type TableSpec =
  | { kind: 'Embedded' }
  | { kind: 'TopLevel'; asymmetric: boolean; pkField: string; pkType: PayloadType; pkNullable: boolean };

export interface AddTable {
  type: 'AddTable';
  table: string;
  spec: TableSpec;
}
export interface EraseTable {
  type: 'EraseTable';
  table: string;
}
export interface CreateObject {
  type: 'CreateObject';
  table: string;
  object: PrimaryKey;
}
export interface EraseObject {
  type: 'EraseObject';
  table: string;
  object: PrimaryKey;
}
/**
 * Sets a field, dictionary value or list element. When the path ends in an index it is an array update and
 * carries `priorSize` (the list size the writer saw); otherwise it carries `isDefault`.
 */
export interface Update extends PathInstructionBase {
  type: 'Update';
  value: Payload;
  isDefault: boolean;
  priorSize: number;
}
export interface AddInteger extends PathInstructionBase {
  type: 'AddInteger';
  value: Int64;
}
export interface AddColumn {
  type: 'AddColumn';
  table: string;
  field: string;
  /** `Null` means Mixed. */
  valueType: PayloadType;
  nullable: boolean;
  collectionType: CollectionType;
  linkTargetTable?: string;
  /** Only for dictionaries; `Null` otherwise. */
  keyType: PayloadType;
}
export interface EraseColumn {
  type: 'EraseColumn';
  table: string;
  field: string;
}
export interface ArrayInsert extends PathInstructionBase {
  type: 'ArrayInsert';
  value: Payload;
  priorSize: number;
}
export interface ArrayMove extends PathInstructionBase {
  type: 'ArrayMove';
  ndx2: number;
  priorSize: number;
}
export interface ArrayErase extends PathInstructionBase {
  type: 'ArrayErase';
  priorSize: number;
}
export interface Clear extends PathInstructionBase {
  type: 'Clear';
  collectionType: CollectionType;
}
export interface SetInsert extends PathInstructionBase {
  type: 'SetInsert';
  value: Payload;
}
export interface SetErase extends PathInstructionBase {
  type: 'SetErase';
  value: Payload;
}

export type PathInstruction = Update | AddInteger | ArrayInsert | ArrayMove | ArrayErase | Clear | SetInsert | SetErase;
export type Instruction = AddTable | EraseTable | CreateObject | EraseObject | AddColumn | EraseColumn | PathInstruction;
export type InstructionType = Instruction['type'];

export const instructionTypeCodes: Record<InstructionType, number> = {
  AddTable: 0,
  EraseTable: 1,
  CreateObject: 2,
  EraseObject: 3,
  Update: 4,
  AddInteger: 5,
  AddColumn: 6,
  EraseColumn: 7,
  ArrayInsert: 8,
  ArrayMove: 9,
  ArrayErase: 10,
  Clear: 11,
  SetInsert: 12,
  SetErase: 13,
};

/**
 * Where a parsed changeset interned its strings: `strings[i]` was interned just before instruction
 * `before[i]` (or at the end when `before[i]` equals the instruction count).
 */
export interface InternLayout {
  strings: string[];
  before: number[];
}

export interface Changeset {
  instructions: Instruction[];
  /** Present on parsed changesets; the encoder follows it to reproduce the original bytes. */
  layout?: InternLayout;
}

export function isPathInstruction(instr: Instruction): instr is PathInstruction {
  return 'path' in instr;
}

/** True when the instruction addresses a list element (its path ends in an index). */
export function isArrayPath(path: readonly PathElement[]): boolean {
  return path.length > 0 && typeof path[path.length - 1] === 'number';
}
