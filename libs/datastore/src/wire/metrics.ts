/**
 * What the wire server counts of the commands it answers, for `serverStatus` (mongostat) and `top`
 * (mongotop): MongoDB's operation counters, and per namespace the time spent and the number of operations
 * of each kind. Kept in memory from the server's start, as MongoDB keeps them from the process's start.
 */
import { Long } from 'bson';
import { type Document } from '../api/data-source';

export interface Opcounters {
  insert: number;
  query: number;
  update: number;
  delete: number;
  getmore: number;
  command: number;
}

/** One statistic of `top`: total time (microseconds) and operations. */
interface TopField {
  time: number;
  count: number;
}

const topFields = ['total', 'readLock', 'writeLock', 'queries', 'getmore', 'insert', 'update', 'remove', 'commands'] as const;
type TopName = (typeof topFields)[number];
type NamespaceTop = Record<TopName, TopField>;

/** Commands that write to their namespace (counted under `writeLock`; the rest under `readLock`). */
const writing = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'create', 'drop', 'createIndexes', 'dropIndexes', 'collMod', 'renameCollection']);

/** The top category of a command. */
function categoryOf(name: string): TopName {
  switch (name) {
    case 'find':
      return 'queries';
    case 'getMore':
      return 'getmore';
    case 'insert':
      return 'insert';
    case 'update':
      return 'update';
    case 'delete':
      return 'remove';
    default:
      return 'commands';
  }
}

/** The collection a command works on (`getMore` names it in `collection`), or undefined for none. */
function collectionOf(name: string, command: Document): string | undefined {
  const named = name === 'getMore' ? command.collection : command[name];
  return typeof named === 'string' && named.length > 0 ? named : undefined;
}

function statementCount(command: Document, field: string): number {
  const list = command[field];
  return Array.isArray(list) ? list.length : 0;
}

export class WireMetrics {
  readonly started = Date.now();
  readonly opcounters: Opcounters = { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 };
  /** cluster -> namespace -> statistics. */
  private readonly namespaces = new Map<string, Map<string, NamespaceTop>>();

  /** Counts one command a client sent (whether it succeeded or not, as MongoDB counts). */
  count(cluster: string, db: string, command: Document, micros: number): void {
    const name = Object.keys(command)[0] ?? '';
    const counters = this.opcounters;
    // MongoDB counts inserted documents, and update and delete statements; every other command once.
    if (name === 'insert') counters.insert += statementCount(command, 'documents');
    else if (name === 'update') counters.update += statementCount(command, 'updates');
    else if (name === 'delete') counters.delete += statementCount(command, 'deletes');
    else if (name === 'find') counters.query++;
    else if (name === 'getMore') counters.getmore++;
    else counters.command++;
    const coll = collectionOf(name, command);
    if (!db || !coll) return;
    let namespaces = this.namespaces.get(cluster);
    if (!namespaces) {
      namespaces = new Map();
      this.namespaces.set(cluster, namespaces);
    }
    const ns = `${db}.${coll}`;
    let top = namespaces.get(ns);
    if (!top) {
      top = Object.fromEntries(topFields.map((field) => [field, { time: 0, count: 0 }])) as NamespaceTop;
      namespaces.set(ns, top);
    }
    const time = Math.max(1, Math.round(micros));
    for (const field of ['total', writing.has(name) ? 'writeLock' : 'readLock', categoryOf(name)] as TopName[]) {
      top[field].time += time;
      top[field].count++;
    }
  }

  /** A namespace's statistics go with it (a dropped collection) or move (a renamed one). */
  forget(cluster: string, ns: string): void {
    this.namespaces.get(cluster)?.delete(ns);
  }

  /** `top`'s `totals` for one cluster, as MongoDB shapes them (times and counts as 64-bit integers). */
  totals(cluster: string): Document {
    const totals: Document = { note: 'all times in microseconds' };
    const namespaces = [...(this.namespaces.get(cluster) ?? new Map<string, NamespaceTop>()).entries()].sort(([a], [b]) => a.localeCompare(b));
    for (const [ns, top] of namespaces) {
      totals[ns] = Object.fromEntries(topFields.map((field) => [field, { time: Long.fromNumber(top[field].time), count: Long.fromNumber(top[field].count) }]));
    }
    return totals;
  }

  /** `opcounters` as MongoDB answers them (64-bit integers). */
  opcountersDocument(): Document {
    return Object.fromEntries((Object.entries(this.opcounters) as [string, number][]).map(([name, n]) => [name, Long.fromNumber(n)]));
  }
}
