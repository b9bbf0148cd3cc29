import { TesseraError } from '@tessera/domain';

/**
 * MongoDB error codes the datastore reports. Both engines answer with these numbers so callers (functions,
 * rules, GraphQL, sync) can branch on `code` without knowing which engine served them.
 */
export const DatastoreErrorCode = {
  InternalError: 1,
  BadValue: 2,
  FailedToParse: 9,
  TypeMismatch: 14,
  IllegalOperation: 20,
  NamespaceNotFound: 26,
  InvalidNamespace: 73,
  IndexNotFound: 27,
  PathNotViable: 28,
  ConflictingUpdateOperators: 40,
  DollarPrefixedFieldName: 52,
  NamespaceExists: 48,
  ImmutableField: 66,
  InvalidOptions: 72,
  CommandNotSupported: 115,
  NoSuchTransaction: 251,
  WriteConflict: 112,
  ExceededMemoryLimit: 146,
  CommandNotSupportedOnView: 166,
  ChangeStreamHistoryLost: 286,
  ChangeStreamFatalError: 280,
  InvalidResumeToken: 260,
  NoMatchingDocument: 47,
  SnapshotTooOld: 239,
  SnapshotUnavailable: 246,
  ConversionFailure: 241,
  DuplicateKey: 11000,
  InvalidProjection: 31254,
  InvalidProjectionInclusion: 31253,
  CursorInUse: 17,
  Location40324: 40324,
  OperationNotSupportedInTransaction: 263,
  // Assertion codes MongoDB names `Location<code>` ($out and $merge).
  Location13113: 13113,
  Location16870: 16870,
  Location16990: 16990,
  Location40414: 40414,
  Location40415: 40415,
  Location40600: 40600,
  Location40601: 40601,
  Location51047: 51047,
  Location51132: 51132,
  Location51182: 51182,
  Location51183: 51183,
  Location51187: 51187,
  Location51199: 51199,
  OptionNotSupportedOnView: 167,
} as const;

export type DatastoreErrorCodeName = keyof typeof DatastoreErrorCode;

/** A partial result carried by a failed multi-document write (insertMany, bulkWrite). */
export interface WriteErrorDetail {
  index: number;
  code: number;
  errmsg: string;
  /** A duplicate key's index key pattern and value, as MongoDB reports them. */
  keyPattern?: Record<string, unknown>;
  keyValue?: Record<string, unknown>;
}

/** The write error MongoDB reports for `error` at `index` of a batch. */
export function writeErrorDetail(error: DatastoreError, index: number): WriteErrorDetail {
  const detail: WriteErrorDetail = { index, code: error.code, errmsg: error.message };
  const { keyPattern, keyValue } = (error.errorResponse ?? {}) as Pick<WriteErrorDetail, 'keyPattern' | 'keyValue'>;
  if (keyPattern) detail.keyPattern = keyPattern;
  if (keyValue) detail.keyValue = keyValue;
  return detail;
}

/**
 * The datastore's error. `errorCode` is what App Services puts on the wire for data-source failures
 * (`MongoDBError`); `code` and `codeName` are MongoDB's own numbers, kept for callers that branch on them.
 */
export class DatastoreError extends TesseraError {
  readonly errorCode = 'MongoDBError';
  readonly httpStatus: number;
  readonly code: number;
  readonly codeName: DatastoreErrorCodeName;
  /** For bulk writes: the per-operation failures and the counts of what was written before or despite them. */
  writeErrors?: WriteErrorDetail[];
  result?: unknown;
  /**
   * Fields MongoDB's error reply carries beside code and message (a duplicate key's `keyPattern` and
   * `keyValue`): the wire server sends them, a driver shows them as `errorResponse`.
   */
  errorResponse?: Record<string, unknown>;
  /** True when the error was detected before reaching a store (argument validation), like a driver error. */
  readonly isClientError: boolean;

  constructor(
    codeName: DatastoreErrorCodeName,
    message: string,
    options?: { cause?: unknown; clientError?: boolean; httpStatus?: number; code?: number },
  ) {
    super(message, options);
    this.codeName = codeName;
    this.code = options?.code ?? DatastoreErrorCode[codeName];
    this.isClientError = options?.clientError ?? false;
    this.httpStatus = options?.httpStatus ?? (codeName === 'InternalError' ? 500 : 400);
  }
}

export function isDatastoreError(value: unknown): value is DatastoreError {
  return value instanceof DatastoreError;
}

/** A write refused by a unique index (E11000), from either engine: both throw DatastoreError. */
export function isDuplicateKeyError(value: unknown): boolean {
  return isDatastoreError(value) && value.codeName === 'DuplicateKey';
}

/** The code name for a MongoDB error number (InternalError for numbers this module does not name). */
export function codeNameOf(code: number | undefined): DatastoreErrorCodeName {
  const entry = Object.entries(DatastoreErrorCode).find(([, value]) => value === code);
  return (entry?.[0] as DatastoreErrorCodeName | undefined) ?? 'InternalError';
}
