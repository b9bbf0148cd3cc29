/**
 * The error messages a flexible-sync server sends, built so that a realm-core v14 client takes the
 * intended action: a query it cannot serve fails only that subscription set (QUERY_ERROR), a refused
 * write is undone without stopping the session (231, Warning), a role change restarts the session and
 * bootstraps again (200, Transient). Pure builders over the shared JSON_ERROR helper.
 */
import { ProtocolErrorCode } from '../wire/error-codes';
import { jsonErrorMessage, type ServerJsonErrorMessage } from '../wire/messages';
import { toWireRejectedUpdate, type RejectedUpdate } from './compensating-writes';
import type { QueryErrorMessage } from './messages';

/**
 * QUERY_ERROR 226 for a subscription set the server refuses. The client marks that set as failed with
 * `message` and keeps the session. Messages App Services wrote start with `Invalid query:` or (older
 * servers) `Client provided query with bad syntax:`.
 */
export function queryErrorMessage(sessionIdent: number, queryVersion: number, message: string): QueryErrorMessage {
  return { type: 'query_error', code: ProtocolErrorCode.badQuery, message, sessionIdent, queryVersion };
}

export interface CompensatingWriteOptions {
  /** The client version of the upload that held the refused writes. */
  rejectedClientVersion: number;
  /** The server version whose changeset undoes them; the client reports the error once it downloads it. */
  compensatingWriteServerVersion: number;
  updates: readonly RejectedUpdate[];
  message?: string;
}

/**
 * JSON_ERROR 231: the server integrated the upload, undid the refused objects in a changeset at
 * `compensatingWriteServerVersion`, and tells the client why. `tryAgain` true and action Warning keep
 * the session running; the client defers the report until that server version is integrated.
 */
export function compensatingWriteMessage(sessionIdent: number, options: CompensatingWriteOptions): ServerJsonErrorMessage {
  const base = jsonErrorMessage(ProtocolErrorCode.compensatingWrite, sessionIdent, {
    message: options.message ?? `write to ${options.updates.length === 1 ? 'an object' : `${options.updates.length} objects`} not allowed (compensating write)`,
    action: 'Warning',
    tryAgain: true,
    shouldClientReset: false,
  });
  return {
    ...base,
    body: {
      ...base.body,
      rejectedUpdates: options.updates.map(toWireRejectedUpdate),
      rejectedClientVersion: options.rejectedClientVersion,
      compensatingWriteServerVersion: options.compensatingWriteServerVersion,
    },
  };
}

/**
 * JSON_ERROR 200 with action Transient: protocol 14's answer to a change of the app's roles or rules. The
 * client unbinds, binds again about a second later and sends IDENT; the server then bootstraps the same
 * query version again under the new permissions (no client reset).
 */
export function permissionsChangedMessage(sessionIdent: number, message = 'permissions changed: the session restarts and downloads its view again'): ServerJsonErrorMessage {
  return jsonErrorMessage(ProtocolErrorCode.sessionClosed, sessionIdent, { message, action: 'Transient', tryAgain: true });
}
