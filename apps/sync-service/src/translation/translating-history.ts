/**
 * A partition's server history that keeps the synced collections in step with it: an upload is checked
 * against the app's schema and the bound partition before it is integrated, and applied to the documents
 * after; the partition is seeded from the collections before its first client is served; writes made
 * elsewhere are appended as server changesets (through PartitionHub.appendServerChangeset, like every
 * append). One lock per partition orders these against each other in this process; across replicas the
 * history storage's atomic append does.
 */
import {
  type ClientIdent,
  type ClientFileRecord,
  HistoryConflictError,
  type HistoryResult,
  type HistoryStorage,
  type Instruction,
  parseChangeset,
  ServerHistory,
  type UploadChangeset,
  type UploadProgress,
} from '@tessera/sync-protocol';
import { historyKeyParts } from '../sessions/partition-hub';
import { originTimestampNow } from './origin-timestamp';
import { type PartitionRef, type PartitionTranslator } from './partition-translator';

const APPEND_ATTEMPTS = 5;

/** The app and partition a history key names (the app's own id: the reset epoch is only in the key). */
export function partitionRefOf(key: string): PartitionRef {
  const { appId, partition } = historyKeyParts(key);
  return { key, appId, partition };
}

export class TranslatingHistory extends ServerHistory {
  private tail: Promise<unknown> = Promise.resolve();
  /** Applications to the collections, in version order (apart from the lock: uploads need not wait for them). */
  private documents: Promise<unknown> = Promise.resolve();
  private seeded = false;
  private readonly ref: PartitionRef;

  constructor(
    private readonly entries: HistoryStorage,
    key: string,
    private readonly translator: PartitionTranslator,
  ) {
    super(entries, key);
    this.ref = partitionRefOf(key);
  }

  private locked<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Seeds the partition from the collections the first time any replica serves it. */
  private async ensureSeeded(): Promise<void> {
    if (this.seeded) return;
    await this.locked(async () => {
      if (this.seeded) return;
      await this.translator.seed(this.ref, (instructions) => this.appendWithRetry(instructions));
      this.seeded = true;
    });
  }

  override async bootstrapClient(ident: ClientIdent): Promise<HistoryResult<{ client: ClientFileRecord }>> {
    await this.ensureSeeded();
    return super.bootstrapClient(ident);
  }

  override async integrateUpload(ident: number, changesets: readonly UploadChangeset[], progress: UploadProgress): Promise<HistoryResult<{ versions: number[]; client: ClientFileRecord }>> {
    return this.locked(async () => {
      const refusal = await this.translator.checkUpload(this.ref, changesets.map((c) => c.changeset));
      if (refusal) return { ok: false as const, ...refusal };
      const result = await super.integrateUpload(ident, changesets, progress);
      if (result.ok && result.versions.length > 0) this.applyInBackground(result.versions);
      return result;
    });
  }

  /**
   * Applies integrated versions to the collections after those integrated before, in the background: no
   * upload waits for the documents (a seed never meets this: it runs before a partition's first upload).
   */
  private applyInBackground(versions: readonly number[]): void {
    const first = versions[0] ?? 1;
    const last = versions[versions.length - 1] ?? first;
    this.documents = this.documents.then(async () => {
      try {
        const integrated = await this.entries.readEntries(this.partition, first - 1, last);
        await this.translator.applyIntegrated(
          this.ref,
          integrated.flatMap((e) => (e.changeset.length === 0 ? [] : parseChangeset(e.changeset).instructions)),
          last,
        );
      } catch (error) {
        this.translator.applyFailed(this.ref, versions, error);
      }
    });
  }

  /**
   * A server changeset for a write made outside sync (the hub's append path calls this): after any seeding
   * or upload in progress here, so a seed page never lands after a newer write of the same document.
   */
  override appendServerChangeset(instructions: readonly Instruction[], originTimestamp: number): Promise<number> {
    return this.locked(() => super.appendServerChangeset(instructions, originTimestamp));
  }

  /** A seed page (under the lock already). */
  private async appendWithRetry(instructions: readonly Instruction[]): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await super.appendServerChangeset(instructions, originTimestampNow());
      } catch (error) {
        // Another replica appended first: a server changeset is based on the head, so append after it.
        if (!(error instanceof HistoryConflictError) || attempt >= APPEND_ATTEMPTS) throw error;
      }
    }
  }
}
