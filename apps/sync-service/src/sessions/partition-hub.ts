/**
 * The partitions this process serves: one ServerHistory per (app, partition) over one history storage,
 * the sessions bound to each (so an integrated upload wakes them all), and a per-partition lock so that
 * uploads of one partition integrate one after the other. In memory for now: history does not survive
 * a restart and replicas do not share it (see the README).
 */
import { type HistoryStorage, MemoryHistoryStorage, ServerHistory } from '@tessera/sync-protocol';

/** A bound, identified session that wants to hear when its partition's history grows. */
export interface PartitionListener {
  historyGrew(): void;
}

interface PartitionEntry {
  history: ServerHistory;
  listeners: Set<PartitionListener>;
  tail: Promise<unknown>;
}

/** Makes the history object of a partition (the translation between changesets and documents hooks in here). */
export type HistoryFactory = (storage: HistoryStorage, key: string) => ServerHistory;

export class PartitionHub {
  private readonly partitions = new Map<string, PartitionEntry>();

  constructor(
    private readonly storage: HistoryStorage = new MemoryHistoryStorage(),
    private readonly createHistory: HistoryFactory = (store, key) => new ServerHistory(store, key),
  ) {}

  /** The key of a partition: the app's `_id` and the canonical partition value text. */
  static key(appId: string, canonicalPartition: string): string {
    return `${appId}/${canonicalPartition}`;
  }

  history(key: string): ServerHistory {
    return this.entry(key).history;
  }

  /** Runs `task` after every earlier task of the partition has settled. */
  exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const entry = this.entry(key);
    const run = entry.tail.then(task, task);
    entry.tail = run.catch(() => undefined);
    return run;
  }

  listen(key: string, listener: PartitionListener): void {
    this.entry(key).listeners.add(listener);
  }

  unlisten(key: string, listener: PartitionListener): void {
    this.partitions.get(key)?.listeners.delete(listener);
  }

  /** Wakes every session of the partition (the uploader too: it learns its upload was integrated). */
  notify(key: string): void {
    for (const listener of this.partitions.get(key)?.listeners ?? []) listener.historyGrew();
  }

  private entry(key: string): PartitionEntry {
    let entry = this.partitions.get(key);
    if (!entry) {
      entry = { history: this.createHistory(this.storage, key), listeners: new Set(), tail: Promise.resolve() };
      this.partitions.set(key, entry);
    }
    return entry;
  }
}
