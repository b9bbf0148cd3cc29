/** Equality of changeset values the way realm-core's merge compares them (by content, not by intern index). */
import type { Instruction, PathElement, Payload, PrimaryKey } from '../changeset/types';

export function sameKey(a: PrimaryKey, b: PrimaryKey): boolean {
  if (a.type !== b.type) return false;
  switch (a.type) {
    case 'Null':
      return true;
    case 'Int':
    case 'String':
    case 'ObjectId':
    case 'UUID':
      return a.value === (b as typeof a).value;
    case 'GlobalKey':
      return a.hi === (b as typeof a).hi && a.lo === (b as typeof a).lo;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function samePayload(a: Payload, b: Payload): boolean {
  if (a.type !== b.type) return false;
  switch (a.type) {
    case 'Null':
    case 'Erased':
    case 'Set':
    case 'List':
    case 'Dictionary':
    case 'ObjectValue':
      return true;
    case 'Int':
    case 'Bool':
    case 'String':
    case 'Float':
    case 'Double':
    case 'ObjectId':
    case 'UUID':
      return a.value === (b as typeof a).value;
    case 'Binary':
      return sameBytes(a.value, (b as typeof a).value);
    case 'Timestamp':
      return a.seconds === (b as typeof a).seconds && a.nanoseconds === (b as typeof a).nanoseconds;
    case 'Decimal': {
      const o = b as typeof a;
      return a.coefficient === o.coefficient && a.exponent === o.exponent && a.negative === o.negative;
    }
    case 'Link': {
      const o = b as typeof a;
      return a.table === o.table && sameKey(a.key, o.key);
    }
  }
}

export function samePath(a: readonly PathElement[], b: readonly PathElement[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A string identifying the object an instruction touches, or null for schema instructions. */
export function objectKeyOf(instr: Instruction): string | null {
  return 'object' in instr ? `${instr.table}\u0000${primaryKeyString(instr.object)}` : null;
}

export function primaryKeyString(pk: PrimaryKey): string {
  switch (pk.type) {
    case 'Null':
      return 'n';
    case 'Int':
      return `i${String(pk.value)}`;
    case 'String':
      return `s${pk.value}`;
    case 'ObjectId':
      return `o${pk.value}`;
    case 'UUID':
      return `u${pk.value}`;
    case 'GlobalKey':
      return `g${String(pk.hi)}:${String(pk.lo)}`;
  }
}
