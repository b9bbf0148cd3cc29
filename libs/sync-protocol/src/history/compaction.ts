/**
 * Backend compaction: drops instructions whose effect a later instruction in the same (linear) history
 * overwrites, so that a client downloading the history reaches the same state with fewer instructions.
 *
 * Only overwrites that hold regardless of list positions are used, so nothing that survives depends on
 * something removed:
 * - a later EraseObject removes every earlier instruction on that object (CreateObject included);
 * - a later Update of a field, embedded-object field or dictionary key to a plain value, null or
 *   "erased" removes earlier instructions at that path and below it;
 * - a later Clear of a collection removes earlier instructions inside it.
 * Paths that contain list indices never act as overwriters (an index names different elements over time).
 * Schema instructions are never removed.
 */
import type { Instruction, PathElement, PathInstruction } from '../changeset/types';
import { isPathInstruction } from '../changeset/types';
import { primaryKeyString } from '../merge/compare';

interface Cover {
  field: string;
  path: readonly PathElement[];
  /** A Clear covers what is inside the collection, not an Update that sets the field itself. */
  clear: boolean;
}

const plainValueTypes = new Set(['Null', 'Int', 'Bool', 'String', 'Binary', 'Timestamp', 'Float', 'Double', 'Decimal', 'Link', 'ObjectId', 'UUID', 'Erased']);

function objectKey(table: string, instr: { object: Parameters<typeof primaryKeyString>[0] }): string {
  return `${table}\u0000${primaryKeyString(instr.object)}`;
}

function hasIndex(path: readonly PathElement[]): boolean {
  return path.some((e) => typeof e === 'number');
}

function isCovered(instr: PathInstruction, covers: readonly Cover[] | undefined): boolean {
  if (!covers) return false;
  for (const c of covers) {
    if (c.field !== instr.field || c.path.length > instr.path.length) continue;
    let prefix = true;
    for (let i = 0; i < c.path.length; i++) {
      if (c.path[i] !== instr.path[i]) {
        prefix = false;
        break;
      }
    }
    if (!prefix) continue;
    if (c.clear && instr.path.length === c.path.length && instr.type === 'Update') continue;
    return true;
  }
  return false;
}

export interface CompactionResult {
  changesets: Instruction[][];
  removedInstructions: number;
  /** Indexes of the changesets that changed. */
  changed: number[];
}

/** Compacts a linear sequence of changesets (each applies on top of the previous ones). */
export function compactChangesets(changesets: readonly (readonly Instruction[])[]): CompactionResult {
  const erased = new Set<string>();
  const covers = new Map<string, Cover[]>();
  const out: Instruction[][] = changesets.map(() => []);
  const changed: number[] = [];
  let removed = 0;
  for (let c = changesets.length - 1; c >= 0; c--) {
    const source = changesets[c] ?? [];
    const kept: Instruction[] = [];
    for (let i = source.length - 1; i >= 0; i--) {
      const instr = source[i];
      if (!instr) continue;
      let drop = false;
      if (isPathInstruction(instr)) {
        const key = objectKey(instr.table, instr);
        drop = erased.has(key) || isCovered(instr, covers.get(key));
        if (!drop && !hasIndex(instr.path)) {
          const becomesCover = (instr.type === 'Update' && plainValueTypes.has(instr.value.type)) || instr.type === 'Clear';
          if (becomesCover) {
            let list = covers.get(key);
            if (!list) {
              list = [];
              covers.set(key, list);
            }
            list.push({ field: instr.field, path: instr.path, clear: instr.type === 'Clear' });
          }
        }
      } else if (instr.type === 'EraseObject') erased.add(objectKey(instr.table, instr));
      else if (instr.type === 'CreateObject') drop = erased.has(objectKey(instr.table, instr));
      if (drop) removed++;
      else kept.push(instr);
    }
    kept.reverse();
    if (kept.length !== source.length) changed.push(c);
    out[c] = kept;
  }
  changed.reverse();
  return { changesets: out, removedInstructions: removed, changed };
}
