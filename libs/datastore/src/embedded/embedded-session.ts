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
      throw new DatastoreError('NoSuchTransaction', 'Transaction has been aborted.');
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

  async withTransaction<T>(fn: (session: DataSession) => Promise<T>): Promise<T> {
    this.startTransaction();
    let result: T;
    try {
      result = await fn(this);
    } catch (error) {
      await this.abortTransaction();
      throw error;
    }
    await this.commitTransaction();
    return result;
  }

  async endSession(): Promise<void> {
    await this.abortTransaction();
  }
}
