/**
 * The partitions this process serves: one ServerHistory per (app, partition) over one history storage
 * (the datastore in the service, so every replica shares it), and the sessions bound to each here.
 *
 * Every change to a partition's history goes through `integrateUpload` or `appendServerChangeset`: they
 * run one at a time per partition in this process, retry when another replica moved the head first (the
 * storage refuses a stale append), then wake the sessions here, announce the new head to the other
 * replicas and tell the `onAppended` listeners. `historyAppendedElsewhere` is how a replica hears of
 * another's append. This class must not know the transport: sessions and the announcement are callbacks.
 */
import { randomUUID } from 'node:crypto';
import {
  type ClientFileRecord,
  HistoryConflictError,
  type HistoryResult,
  type HistoryStorage,
  type Instruction,
  MemoryHistoryStorage,
  ServerHistory,
  type UploadChangeset,
  type UploadProgress,
} from '@tessera/sync-protocol';

/** A bound, identified session that wants to hear when its partition's history grows. */
export interface PartitionListener {
  historyGrew(): void;
}

/** Versions just appended to a partition's history (by this replica). */
export interface HistoryAppended {
  key: string;
  versions: number[];
}

/** Tells the other replicas that a partition's head moved (the sync service emits an event). */
export type HeadAnnouncer = (announcement: { partition: string; version: number; replica: string }) => void;

interface PartitionEntry {
  history: ServerHistory;
  listeners: Set<PartitionListener>;
  tail: Promise<unknown>;
  /** The newest head this process knows its sessions were woken for. */
  knownHead: number;
}

/**
 * Attempts at an append when other replicas keep moving the head first. Each failed attempt means another
 * writer succeeded, so the partition as a whole makes progress; a writer that loses this many races in a row
 * fails its connection, and its client reconnects and uploads again.
 */
const appendAttempts = 20;

/** Makes the history object of a partition (the translation between changesets and documents hooks in here). */
export type HistoryFactory = (storage: HistoryStorage, key: string) => ServerHistory;

/** The key of a partition's history: a re-enable after a terminate (epoch > 0) starts every partition afresh. */
export function historyKey(appId: string, epoch: number, canonicalPartition: string): string {
  return PartitionHub.key(epoch > 0 ? `${appId}@${epoch}` : appId, canonicalPartition);
}

/** The app, reset epoch and partition text a history key names (the inverse of `historyKey`). */
export function historyKeyParts(key: string): { appId: string; epoch: number; partition: string } {
  const slash = key.indexOf('/');
  const app = key.slice(0, slash);
  const at = app.lastIndexOf('@');
  const epoch = at < 0 ? 0 : Number(app.slice(at + 1));
  return { appId: at < 0 ? app : app.slice(0, at), epoch, partition: key.slice(slash + 1) };
}

export class PartitionHub {
  /** This process among the replicas (its own announcements come back to it on a broadcast). */
  readonly replica = randomUUID();
  private readonly partitions = new Map<string, PartitionEntry>();
  private readonly appendedListeners: ((appended: HistoryAppended) => Promise<void> | void)[] = [];
  private announcer: HeadAnnouncer | undefined;

  /** `storage` is public for lifecycle work across a partition's client files (background compaction). */
  constructor(
    readonly storage: HistoryStorage = new MemoryHistoryStorage(),
    private readonly createHistory: HistoryFactory = (store, key) => new ServerHistory(store, key),
  ) {}

  /** The key of a partition: the app's `_id` and the canonical partition value text. */
  static key(appId: string, canonicalPartition: string): string {
    return `${appId}/${canonicalPartition}`;
  }

  history(key: string): ServerHistory {
    return this.entry(key).history;
  }

  /** Where appends are announced to the other replicas. */
  announceWith(announcer: HeadAnnouncer): void {
    this.announcer = announcer;
  }

  /** Hook on every append of this replica (after it is stored, before the next append of the partition runs). */
  onAppended(listener: (appended: HistoryAppended) => Promise<void> | void): void {
    this.appendedListeners.push(listener);
  }

  /**
   * Integrates an UPLOAD of client file `ident` into the partition's history (the one path by which clients
   * change it). A refusal comes back as the protocol error to send.
   */
  integrateUpload(key: string, ident: number, changesets: readonly UploadChangeset[], progress: UploadProgress): Promise<HistoryResult<{ versions: number[]; client: ClientFileRecord }>> {
    return this.append(key, async (history) => {
      const result = await history.integrateUpload(ident, changesets, progress);
      return { result, versions: result.ok ? result.versions : [] };
    });
  }

  /** Appends a change made on the server (a write from elsewhere, translated); answers its version. */
  appendServerChangeset(key: string, instructions: readonly Instruction[], originTimestamp: number): Promise<number> {
    return this.append(key, async (history) => {
      const version = await history.appendServerChangeset(instructions, originTimestamp);
      return { result: version, versions: [version] };
    });
  }

  /** Runs `task` after every earlier task of the partition in this process has settled. */
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

  /** The partitions with sessions in this process (metrics measure their histories). */
  servedPartitions(): string[] {
    return [...this.partitions].filter(([, entry]) => entry.listeners.size > 0).map(([key]) => key);
  }

  /** Drops what this process holds for partitions `drop` names (their app was deleted). */
  forget(drop: (key: string) => boolean): void {
    for (const key of [...this.partitions.keys()]) if (drop(key)) this.partitions.delete(key);
  }

  /** Wakes every session of the partition here (the uploader too: it learns its upload was integrated). */
  notify(key: string): void {
    for (const listener of this.partitions.get(key)?.listeners ?? []) listener.historyGrew();
  }

  /** Another replica appended to a partition: sessions here that serve it send the new versions. */
  historyAppendedElsewhere(announcement: { partition: string; version: number; replica: string }): void {
    if (announcement.replica === this.replica) return;
    this.noteHead(announcement.partition, announcement.version);
    this.notify(announcement.partition);
  }

  /**
   * Reads the head of every partition with sessions here and wakes those whose head moved without this
   * process hearing of it (an announcement lost while the broker was away). One read per partition.
   */
  async checkHeads(): Promise<void> {
    for (const [key, entry] of this.partitions) {
      if (entry.listeners.size === 0) continue;
      const head = await entry.history.latestVersion();
      if (head > entry.knownHead) {
        entry.knownHead = head;
        this.notify(key);
      }
    }
  }

  private noteHead(key: string, version: number): void {
    const entry = this.partitions.get(key);
    if (entry) entry.knownHead = Math.max(entry.knownHead, version);
  }

  /** Settles every append in progress (the host waits for it before it closes the datastore). */
  async drain(): Promise<void> {
    await Promise.all([...this.partitions.values()].map((entry) => entry.tail));
  }

  private async append<T>(key: string, write: (history: ServerHistory) => Promise<{ result: T; versions: number[] }>): Promise<T> {
    const history = this.history(key);
    const { result, versions } = await this.exclusive(key, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          const done = await write(history);
          for (const listener of this.appendedListeners) if (done.versions.length > 0) await listener({ key, versions: done.versions });
          return done;
        } catch (error) {
          if (!(error instanceof HistoryConflictError) || attempt >= appendAttempts) throw error;
          // Another replica won the race for the head: let it finish before reading the head again.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * attempt));
        }
      }
    });
    const head = versions[versions.length - 1];
    if (head !== undefined) this.appendedOutside(key, head);
    return result;
  }

  /**
   * The history of `key` grew to `head` by an append made under the history's own lock (the translation's
   * seed and writes from outside sync): wakes the sessions here and tells the other replicas.
   */
  appendedOutside(key: string, head: number): void {
    this.noteHead(key, head);
    this.notify(key);
    this.announcer?.({ partition: key, version: head, replica: this.replica });
  }

  private entry(key: string): PartitionEntry {
    let entry = this.partitions.get(key);
    if (!entry) {
      entry = { history: this.createHistory(this.storage, key), listeners: new Set(), tail: Promise.resolve(), knownHead: 0 };
      this.partitions.set(key, entry);
    }
    return entry;
  }
}
