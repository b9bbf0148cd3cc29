/**
 * Several data-access operations of one user in ONE transaction, for callers that must commit all or
 * nothing (the GraphQL endpoint runs every mutation of an operation this way). This is only a scope over
 * DataAccess.transaction: each operation runs through the same rule-enforced path as a single call
 * (DataAccess.execute), with the same traces, skip/limit handling and refusals, inside the transaction's
 * session, so later operations see earlier ones and any failure rolls back everything. All operations
 * must target collections of one data-source service.
 */
import type { Document } from '@tessera/datastore';
import type { RuleUser } from '@tessera/rules';
import type { DataAccess, DataAccessApp, DataAccessCaller } from './data-access.service';

export interface TransactionRequest {
  action: string;
  database: string;
  collection: string;
  args: Document;
}

export interface UserTransactionScope {
  execute(request: TransactionRequest): Promise<unknown>;
}

export class UserTransactions {
  constructor(private readonly dataAccess: DataAccess) {}

  /** Runs `body` in one transaction on `service` as `user`; commits when it resolves, rolls back when it throws. */
  run<T>(app: DataAccessApp, service: string, user: RuleUser, body: (scope: UserTransactionScope) => Promise<T>): Promise<T> {
    return this.runAs(app, service, { kind: 'user', user }, body);
  }

  /** As `run`, for any caller: the system's operations bypass the rules (the admin API's GraphQL runs). */
  runAs<T>(app: DataAccessApp, service: string, caller: DataAccessCaller, body: (scope: UserTransactionScope) => Promise<T>): Promise<T> {
    return this.dataAccess.transaction({ app, service, caller }, (execute) => body({ execute }));
  }
}
