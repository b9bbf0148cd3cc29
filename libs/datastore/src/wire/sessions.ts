/**
 * Logical sessions of the wire server (`lsid`) and their transactions (`txnNumber`, `startTransaction`,
 * `autocommit: false`), each mapped onto one embedded session of the connection's cluster, so a driver
 * transaction is atomic across the collections of that cluster.
 */
import { Binary } from 'bson';
import { type DataSession, type Document } from '../api/data-source';
import { DatastoreError } from '../api/datastore.error';
import { type EmbeddedClient } from '../embedded/embedded-client';
import { type SnapshotReader } from '../embedded/service-store';
import { WireCommandError } from './errors';

type TransactionState = 'none' | 'active' | 'committed' | 'aborted';

interface ServerSession {
  session?: DataSession;
  txnNumber?: number;
  state: TransactionState;
  lastUsed: number;
}

function noSuchTransaction(txnNumber: unknown): WireCommandError {
  return new WireCommandError(251, 'NoSuchTransaction', `Transaction with { txnNumber: ${String(txnNumber)} } has been aborted.`, ['TransientTransactionError']);
}

/**
 * A read at read concern `snapshot` outside a transaction: the engine shows it every collection as it was
 * right after commit `atSeq` (ServiceStore.snapshotView). It is no session of its own: it cannot start a
 * transaction, and it writes nothing.
 */
export class SnapshotRead implements DataSession, SnapshotReader {
  readonly id = 'snapshot-read';

  constructor(readonly atSeq: number) {}

  inTransaction(): boolean {
    return false;
  }

  startTransaction(): void {
    throw new WireCommandError(72, 'InvalidOptions', 'a snapshot read starts no transaction');
  }

  async commitTransaction(): Promise<void> {
    this.startTransaction();
  }

  async abortTransaction(): Promise<void> {
    this.startTransaction();
  }

  async withTransaction<T>(): Promise<T> {
    throw new WireCommandError(72, 'InvalidOptions', 'a snapshot read starts no transaction');
  }

  async endSession(): Promise<void> {
    // Nothing is held.
  }
}

export function sessionKey(cluster: string, lsid: unknown): string | undefined {
  const id = (lsid as Document | undefined)?.id;
  if (!(id instanceof Binary)) return undefined;
  return `${cluster}:${Buffer.from(id.buffer).toString('hex')}`;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, ServerSession>();

  private entry(key: string): ServerSession {
    let entry = this.sessions.get(key);
    if (!entry) {
      entry = { state: 'none', lastUsed: Date.now() };
      this.sessions.set(key, entry);
    }
    entry.lastUsed = Date.now();
    return entry;
  }

  /**
   * The embedded session a command runs in: undefined outside a transaction. `startTransaction` opens a
   * new one (abandoning an older transaction of the session); later statements must name the same number.
   */
  async forCommand(client: EmbeddedClient, key: string | undefined, command: Document): Promise<DataSession | undefined> {
    if (command.autocommit !== false) return undefined;
    if (!key) throw new WireCommandError(72, 'InvalidOptions', 'a transaction needs a session id (lsid)');
    const txnNumber = Number(command.txnNumber);
    if (!Number.isSafeInteger(txnNumber)) throw new WireCommandError(72, 'InvalidOptions', 'a transaction needs a txnNumber');
    const entry = this.entry(key);
    if (command.startTransaction === true) {
      if (entry.txnNumber !== undefined && txnNumber < entry.txnNumber) {
        throw new WireCommandError(225, 'TransactionTooOld', `Cannot start transaction ${txnNumber} on session because a newer transaction ${entry.txnNumber} has already started.`);
      }
      if (entry.state === 'active') await entry.session?.abortTransaction();
      entry.session ??= client.startWireSession();
      entry.session.startTransaction();
      entry.txnNumber = txnNumber;
      entry.state = 'active';
      return entry.session;
    }
    if (entry.txnNumber !== txnNumber || entry.state !== 'active' || !entry.session?.inTransaction()) {
      if (entry.state === 'active' && entry.txnNumber === txnNumber) entry.state = 'aborted';
      throw noSuchTransaction(txnNumber);
    }
    return entry.session;
  }

  async commit(key: string | undefined, command: Document): Promise<void> {
    const txnNumber = Number(command.txnNumber);
    const entry = key ? this.sessions.get(key) : undefined;
    if (!entry || entry.txnNumber !== txnNumber) throw noSuchTransaction(command.txnNumber);
    entry.lastUsed = Date.now();
    // A retried commit of a committed transaction succeeds again, as MongoDB's does.
    if (entry.state === 'committed') return;
    if (entry.state !== 'active' || !entry.session) throw noSuchTransaction(txnNumber);
    try {
      await entry.session.commitTransaction();
      entry.state = 'committed';
    } catch (error) {
      entry.state = 'aborted';
      // Aborted by the server meanwhile (a write conflict, its lifetime): the driver may run it again.
      if (error instanceof DatastoreError && error.codeName === 'NoSuchTransaction') throw noSuchTransaction(txnNumber);
      throw error;
    }
  }

  async abort(key: string | undefined, command: Document): Promise<void> {
    const txnNumber = Number(command.txnNumber);
    const entry = key ? this.sessions.get(key) : undefined;
    if (!entry || entry.txnNumber !== txnNumber || entry.state === 'committed' || entry.state === 'none') throw noSuchTransaction(command.txnNumber);
    entry.lastUsed = Date.now();
    if (entry.state === 'active') await entry.session?.abortTransaction();
    entry.state = 'aborted';
  }

  async end(key: string): Promise<void> {
    const entry = this.sessions.get(key);
    if (!entry) return;
    this.sessions.delete(key);
    await entry.session?.endSession();
  }

  /** Ends sessions idle longer than `idleMs`. Never rejects: one that fails to end goes to `onError`, the rest still end. */
  async sweep(idleMs: number, onError: (error: unknown) => void): Promise<void> {
    const now = Date.now();
    const idle = [...this.sessions].filter(([, entry]) => now - entry.lastUsed > idleMs).map(([key]) => key);
    for (const key of idle) await this.end(key).catch(onError);
  }

  async closeAll(): Promise<void> {
    for (const key of [...this.sessions.keys()]) await this.end(key);
  }
}
