/**
 * The one error the query library throws. Every code is a subscription the server refuses; the sync service
 * answers each with a QUERY_ERROR carrying `SYNC_BAD_QUERY_ERROR_CODE` (realm-core's `bad_query`, 226) and
 * the message, which already reads as App Services worded it ("Invalid query: ...").
 */
import { CodedError } from '@tessera/domain';

/** realm-core's ProtocolError::bad_query (RLM_SYNC_ERR_SESSION_BAD_QUERY): what a QUERY_ERROR carries. */
export const SYNC_BAD_QUERY_ERROR_CODE = 226;

export enum RqlErrorCode {
  /** The text is not Realm Query Language (realm-core's SyntaxError). */
  Syntax = 'QuerySyntaxError',
  /** Valid RQL the server does not serve (aggregates, links, SORT, ...). */
  Unsupported = 'UnsupportedQuery',
  /** A key that is not in the sync configuration's queryable fields. */
  NotQueryable = 'NonQueryableField',
  /** Well formed but meaningless for the schema (a string operator on a number, a missing argument). */
  Invalid = 'InvalidQuery',
}

const statuses: Readonly<Record<RqlErrorCode, number>> = {
  [RqlErrorCode.Syntax]: 400,
  [RqlErrorCode.Unsupported]: 400,
  [RqlErrorCode.NotQueryable]: 400,
  [RqlErrorCode.Invalid]: 400,
};

export class RqlError extends CodedError<RqlErrorCode> {
  /** What a QUERY_ERROR message carries as its error code. */
  readonly syncErrorCode = SYNC_BAD_QUERY_ERROR_CODE;

  constructor(
    code: RqlErrorCode,
    message: string,
    /** Offset in the query text (UTF-16 units) where a syntax error was found. */
    readonly position?: number,
  ) {
    super(code, message, statuses);
  }
}

export function isRqlError(value: unknown): value is RqlError {
  return value instanceof RqlError;
}

export function syntaxError(message: string, position: number): RqlError {
  return new RqlError(RqlErrorCode.Syntax, `Invalid query: syntax error at offset ${position}: ${message}`, position);
}

/** App Services' wording for a refused subscription on one table. */
export function tableError(code: RqlErrorCode, table: string, reason: string): RqlError {
  return new RqlError(code, `Invalid query: unsupported query for table "${table}": ${reason}`);
}
