/**
 * Passes a writer's mark through to the change events of its transaction. A writer that wants its own
 * changes recognised (the sync service applying client changesets) writes a marker document into
 * `WriteOriginsNamespace` as the first write of a transaction; every other change of that transaction then
 * carries the marker's `origin`. Neither the embedded engine nor MongoDB puts a write option on a change
 * event, but both report the events of one transaction together, right after each other, with the
 * transaction's commit time as their `clusterTime` (MongoDB adds the transaction's `lsid` and `txnNumber`,
 * which are compared too where present: on a sharded cluster two transactions may commit at the same time).
 * It must not interpret the changes themselves: the origin is what the writer said.
 */
import { type ChangeOrigin, ChangeOriginSchema, WriteOriginsNamespace } from '@tessera/contracts';
import { type ChangeEvent, type ResumeToken } from '@tessera/datastore';
import { encodeEjson } from '@tessera/messaging';

/** A MongoDB change event of a multi-document transaction also names it (the embedded engine's do not). */
interface TransactionFields {
  lsid?: unknown;
  txnNumber?: unknown;
}

/** What identifies an event's transaction: its commit time, and MongoDB's session and transaction number. */
function transactionOf(event: ChangeEvent): string | undefined {
  if (!event.clusterTime) return undefined;
  const { lsid, txnNumber } = event as ChangeEvent & TransactionFields;
  const txn = lsid !== undefined && txnNumber !== undefined ? JSON.stringify(encodeEjson({ lsid, txnNumber })) : '';
  return `${event.clusterTime.t}.${event.clusterTime.i}/${txn}`;
}

export function isOriginMarker(event: ChangeEvent): boolean {
  return event.ns.db === WriteOriginsNamespace.db && event.ns.coll === WriteOriginsNamespace.coll;
}

/** What a feed does with an event: drop it (a marker) or publish it with the origin of its transaction, if any. */
export type OriginVerdict = { marker: true } | { marker: false; origin?: ChangeOrigin };

export class TransactionOrigins {
  private current?: { transaction: string; origin: ChangeOrigin; before: ResumeToken | undefined };

  /**
   * The verdict on the next event of the feed; `previous` is the position of the event before it (where a
   * restart must resume to see the marker again).
   */
  observe(event: ChangeEvent, previous: ResumeToken | undefined): OriginVerdict {
    const transaction = transactionOf(event);
    if (isOriginMarker(event)) {
      // Only an inserted or replaced marker carries the writer's document as written (an update's is looked up later).
      const parsed = event.operationType === 'insert' || event.operationType === 'replace' ? ChangeOriginSchema.safeParse(event.fullDocument?.['origin']) : undefined;
      this.current = parsed?.success && transaction ? { transaction, origin: parsed.data, before: this.current?.transaction === transaction ? this.current.before : previous } : undefined;
      return { marker: true };
    }
    if (this.current && this.current.transaction !== transaction) this.current = undefined;
    return { marker: false, ...(this.current ? { origin: this.current.origin } : {}) };
  }

  /**
   * The position a feed may save after `published`: inside a marked transaction, the one before its
   * marker, so that a restart sees the marker again (the events it publishes twice are dropped by message
   * id) instead of publishing the rest of the transaction without its origin.
   */
  savable(published: ResumeToken | undefined): ResumeToken | undefined {
    return this.current ? this.current.before : published;
  }
}
