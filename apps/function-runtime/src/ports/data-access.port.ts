import type { CallerUser } from '@tessera/contracts';

/** Who a data-access operation runs as: the system (no rules) or a user (rules apply to its `%%user`). */
export type DataAccessCaller = { kind: 'system' } | { kind: 'user'; user: CallerUser };

/**
 * One data-access operation requested by a function through `context.services.get(service)`.
 *
 * `action` is the client wire name (`find`, `findOne`, `insertOne`, `aggregate`, `count`, ...; plus
 * `getDBNames` and `getCollectionNames` for the admin calls). `arguments` has the client wire shape: one
 * arguments object with the wire keys (`query`, `project`, `sort`, `limit`, `skip`, `filter`, `update`,
 * `document`, `documents`, `pipeline`, `upsert`, `returnNewDocument`, ...) except `database` and
 * `collection`, which travel in their own fields. Values are BSON values (ObjectId, Date, Long, ...) as
 * EJSON parses them; the result must be EJSON-serialisable.
 */
export interface DataAccessCall {
  appId: string;
  service: string;
  database?: string;
  collection?: string;
  action: string;
  arguments: unknown[];
  caller: DataAccessCaller;
  /** Correlation id and trace context for the messages the operation sends (a rule's `%function`). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * A session a function opened with `startSession()` on one data-source service. Operations run one at a time;
 * one that fails inside the open transaction aborts it (the commit then fails), as MongoDB does.
 */
export interface DataSessionPort {
  /** Runs one operation in the session; `begin` first opens its transaction. */
  execute(call: DataAccessCall, begin: boolean): Promise<unknown>;
  commitTransaction(): Promise<void>;
  abortTransaction(): Promise<void>;
  /** Aborts what is open and ends the session. */
  end(): Promise<void>;
}

/** What the runtime needs from the datastore (libs/datastore plugs in here). */
export interface DataAccessPort {
  execute(call: DataAccessCall): Promise<unknown>;
  /** A session for a function's own transactions; without it, `startSession()` answers that sessions are unsupported. */
  startSession?(scope: Pick<DataAccessCall, 'appId' | 'service' | 'caller'>): Promise<DataSessionPort>;
}
