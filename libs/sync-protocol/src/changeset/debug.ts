/** A readable, one-line-per-instruction rendering of changesets for logs, tests and tooling. */
import { toHex } from '../bytes';
import { type Changeset, type Instruction, isPathInstruction, type PathElement, type PathInstruction, type Payload, type PrimaryKey } from './types';

export function formatPrimaryKey(pk: PrimaryKey): string {
  switch (pk.type) {
    case 'Null':
      return 'null';
    case 'Int':
      return String(pk.value);
    case 'String':
      return JSON.stringify(pk.value);
    case 'ObjectId':
      return `ObjectId(${pk.value})`;
    case 'UUID':
      return `UUID(${pk.value})`;
    case 'GlobalKey':
      return `GlobalKey(${String(pk.hi)},${String(pk.lo)})`;
  }
}

export function formatPayload(p: Payload): string {
  switch (p.type) {
    case 'Null':
      return 'null';
    case 'Int':
      return String(p.value);
    case 'Bool':
      return String(p.value);
    case 'String':
      return JSON.stringify(p.value);
    case 'Binary':
      return `Binary(${toHex(p.value)})`;
    case 'Timestamp':
      return `Timestamp(${String(p.seconds)}s, ${p.nanoseconds}ns)`;
    case 'Float':
      return `Float(${p.value})`;
    case 'Double':
      return `Double(${p.value})`;
    case 'Decimal':
      return `Decimal(${p.negative ? '-' : ''}${p.coefficient}E${p.exponent})`;
    case 'Link':
      return `Link(${p.table}[${formatPrimaryKey(p.key)}])`;
    case 'ObjectId':
      return `ObjectId(${p.value})`;
    case 'UUID':
      return `UUID(${p.value})`;
    case 'ObjectValue':
      return '{embedded object}';
    case 'Dictionary':
      return '{dictionary}';
    case 'Erased':
      return '<erased>';
    case 'List':
      return '[list]';
    case 'Set':
      return '{set}';
  }
}

function formatPath(field: string, path: readonly PathElement[]): string {
  return field + path.map((e) => (typeof e === 'number' ? `[${e}]` : `[${JSON.stringify(e)}]`)).join('');
}

export function formatInstruction(instr: Instruction): string {
  if (isPathInstruction(instr)) return formatPathInstruction(instr);
  switch (instr.type) {
    case 'AddTable':
      return instr.spec.kind === 'Embedded'
        ? `AddTable ${instr.table} (embedded)`
        : `AddTable ${instr.table} {pk ${instr.spec.pkField}: ${instr.spec.pkType}${instr.spec.pkNullable ? '?' : ''}}${instr.spec.asymmetric ? ' (asymmetric)' : ''}`;
    case 'EraseTable':
      return `EraseTable ${instr.table}`;
    case 'AddColumn': {
      const t = instr.valueType === 'Null' ? 'Mixed' : instr.valueType === 'Link' ? `Link<${instr.linkTargetTable ?? ''}>` : instr.valueType;
      const shape =
        instr.collectionType === 'Single' ? t : instr.collectionType === 'Dictionary' ? `Dictionary<${instr.keyType}, ${t}>` : `${instr.collectionType}<${t}>`;
      return `AddColumn ${instr.table}.${instr.field}: ${shape}${instr.nullable ? '?' : ''}`;
    }
    case 'EraseColumn':
      return `EraseColumn ${instr.table}.${instr.field}`;
    case 'CreateObject':
    case 'EraseObject':
      return `${instr.type} ${instr.table}[${formatPrimaryKey(instr.object)}]`;
  }
}

function formatPathInstruction(instr: PathInstruction): string {
  const target = `${instr.table}[${formatPrimaryKey(instr.object)}].${formatPath(instr.field, instr.path)}`;
  switch (instr.type) {
    case 'Update':
      return instr.path.length > 0 && typeof instr.path[instr.path.length - 1] === 'number'
        ? `Update ${target} = ${formatPayload(instr.value)} (prior_size ${instr.priorSize})`
        : `Update ${target} = ${formatPayload(instr.value)}${instr.isDefault ? ' (default)' : ''}`;
    case 'AddInteger':
      return `AddInteger ${target} += ${String(instr.value)}`;
    case 'ArrayInsert':
      return `ArrayInsert ${target} = ${formatPayload(instr.value)} (prior_size ${instr.priorSize})`;
    case 'ArrayMove':
      return `ArrayMove ${target} -> ${instr.ndx2} (prior_size ${instr.priorSize})`;
    case 'ArrayErase':
      return `ArrayErase ${target} (prior_size ${instr.priorSize})`;
    case 'Clear':
      return `Clear ${target} (${instr.collectionType})`;
    case 'SetInsert':
      return `SetInsert ${target} ${formatPayload(instr.value)}`;
    case 'SetErase':
      return `SetErase ${target} ${formatPayload(instr.value)}`;
  }
}

export function formatChangeset(changeset: Changeset): string {
  return changeset.instructions.map(formatInstruction).join('\n');
}
