/**
 * A session of the embedded engine. A transaction takes the service's lock on its first write (one
 * transaction at a time; other sessions read the committed state meanwhile and wait to write only to the
 * collections it changed), keeps an undo log, and commits
 * as one log record, so it is atomic across the service's collections. A transaction left open longer
 * than `lifetimeMs` is aborted, as MongoDB's transactionLifetimeLimitSeconds does.
 */
import { randomUUID } from 'node:crypto';
import { DatastoreError } from '../api/datastore.error';
import { type DataSession } from '../api/data-source';
import { type ServiceStore, type TransactionOwner, WriteUnit } from './service-store';

/** How long withTransaction runs a transaction again after transient failures (MongoDB's drivers: 120 s). */
const WITH_TRANSACTION_RETRY_MS = 120_000;

/** Whether an error carries a MongoDB error label (DatastoreError's `errorResponse.errorLabels`). */
function hasErrorLabel(error: unknown, label: string): boolean {
  const labels = (error as { errorResponse?: { errorLabels?: unknown } } | undefined)?.errorResponse?.errorLabels;
  return Array.isArray(labels) && labels.includes(label);
}

export class EmbeddedSession implements DataSession, TransactionOwner {
  readonly id = randomUUID();
  unit?: WriteUnit;
  aborted?: boolean;
  /** The transaction's snapshot: the last commit when it started (what it reads until it writes). */
  atSeq?: number;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly store: ServiceStore,
    private readonly lifetimeMs = 60_000,
    /** See TransactionOwner.failOnConflict: set for the wire server's sessions. */
    readonly failOnConflict = false,
  ) {}

  inTransaction(): boolean {
    return this.unit !== undefined;
  }

  startTransaction(): void {
    if (this.unit) throw new DatastoreError('IllegalOperation', 'Transaction already in progress on this session.', { clientError: true });
    this.unit = new WriteUnit();
    this.aborted = false;
    this.atSeq = this.store.lastCommit().seq;
    this.timer = setTimeout(() => this.expire(), this.lifetimeMs);
    this.timer.unref();
  }

  private expire(): void {
    this.atSeq = undefined;
    if (!this.unit) return;
    this.store.rollback(this.unit);
    this.unit = undefined;
    this.aborted = true;
    this.store.release(this);
  }

  async commitTransaction(): Promise<void> {
    clearTimeout(this.timer);
    if (this.aborted) {
      this.aborted = false;
      // As MongoDB labels it: the whole transaction may be run again.
      const error = new DatastoreError('NoSuchTransaction', 'Transaction has been aborted.');
      error.errorResponse = { errorLabels: ['TransientTransactionError'] };
      throw error;
    }
    const unit = this.unit;
    if (!unit) throw new DatastoreError('NoSuchTransaction', 'No transaction started', { clientError: true });
    this.unit = undefined;
    this.atSeq = undefined;
    try {
      await this.store.commit(unit);
    } finally {
      this.store.release(this);
    }
  }

  async abortTransaction(): Promise<void> {
    clearTimeout(this.timer);
    const unit = this.unit;
    this.aborted = false;
    this.atSeq = undefined;
    if (!unit) return;
    this.unit = undefined;
    this.store.rollback(unit);
    this.store.release(this);
  }

  /**
   * Runs `fn` in a transaction and commits it, as a MongoDB driver's withTransaction does: a transaction
   * that meets another's write (WriteConflict, labelled TransientTransactionError) is run again from the
   * start, after a short back-off, for up to WITH_TRANSACTION_RETRY_MS; any other failure aborts it and is thrown.
   */
  async withTransaction<T>(fn: (session: DataSession) => Promise<T>): Promise<T> {
    const started = Date.now();
    let attempt = 0;
    for (;;) {
      this.startTransaction();
      let result: T;
      try {
        result = await fn(this);
        await this.commitTransaction();
        return result;
      } catch (error) {
        await this.abortTransaction();
        if (!hasErrorLabel(error, 'TransientTransactionError') || Date.now() - started >= WITH_TRANSACTION_RETRY_MS) throw error;
        // The other transaction still holds its documents: back off (1, 2, 4 ... 100 ms) before the next run.
        await new Promise((resolve) => setTimeout(resolve, Math.min(100, 2 ** attempt++)));
      }
    }
  }

  async endSession(): Promise<void> {
    await this.abortTransaction();
  }
}
