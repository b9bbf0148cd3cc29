/**
 * Protocol error codes (realm-core `ProtocolError`) and the JSON_ERROR body a client requires.
 * The types make it impossible to build an error message with a code that aborts the client process
 * (realm-core maps them to REALM_UNREACHABLE) or a JSON_ERROR body without the six fields the client reads.
 */
export const ProtocolErrorCode = {
  connectionClosed: 100,
  otherError: 101,
  unknownMessage: 102,
  badSyntax: 103,
  limitsExceeded: 104,
  wrongProtocolVersion: 105,
  badSessionIdent: 106,
  reuseOfSessionIdent: 107,
  boundInOtherSession: 108,
  badMessageOrder: 109,
  badDecompression: 110,
  badChangesetHeaderSyntax: 111,
  badChangesetSize: 112,
  switchToFlxSync: 113,
  switchToPbs: 114,
  sessionClosed: 200,
  otherSessionError: 201,
  tokenExpired: 202,
  badAuthentication: 203,
  illegalRealmPath: 204,
  noSuchRealm: 205,
  permissionDenied: 206,
  badServerFileIdent: 207,
  badClientFileIdent: 208,
  badServerVersion: 209,
  badClientVersion: 210,
  divergingHistories: 211,
  badChangeset: 212,
  partialSyncDisabled: 214,
  unsupportedSessionFeature: 215,
  badOriginFileIdent: 216,
  badClientFile: 217,
  serverFileDeleted: 218,
  clientFileBlacklisted: 219,
  userBlacklisted: 220,
  transactBeforeUpload: 221,
  clientFileExpired: 222,
  userMismatch: 223,
  tooManySessions: 224,
  invalidSchemaChange: 225,
  badQuery: 226,
  objectAlreadyExists: 227,
  serverPermissionsChanged: 228,
  initialSyncNotCompleted: 229,
  writeNotAllowed: 230,
  compensatingWrite: 231,
  migrateToFlx: 232,
  badProgress: 233,
  revertToPbs: 234,
  badSchemaVersion: 235,
  schemaVersionChanged: 236,
} as const;

export type ProtocolErrorCodeValue = (typeof ProtocolErrorCode)[keyof typeof ProtocolErrorCode];

/** Codes realm-core clients treat as unreachable: receiving one terminates the client process. */
export type ForbiddenErrorCode = 104 | 202 | 203 | 205 | 207 | 214 | 215 | 218 | 219 | 220 | 221 | 224;
export const forbiddenErrorCodes: readonly ForbiddenErrorCode[] = [104, 202, 203, 205, 207, 214, 215, 218, 219, 220, 221, 224];

/** Codes a server may send. */
export type SendableErrorCode = Exclude<ProtocolErrorCodeValue, ForbiddenErrorCode>;

const knownCodes = new Set<number>(Object.values(ProtocolErrorCode));
const forbidden = new Set<number>(forbiddenErrorCodes);

export function isSendableErrorCode(code: number): code is SendableErrorCode {
  return knownCodes.has(code) && !forbidden.has(code);
}

/** Connection-level errors are 100..199; they are sent with session ident 0. */
export function isConnectionLevelError(code: number): boolean {
  return code >= 100 && code < 200;
}

export const jsonErrorActions = [
  'ProtocolViolation',
  'ApplicationBug',
  'Warning',
  'Transient',
  'DeleteRealm',
  'ClientReset',
  'ClientResetNoRecovery',
  'MigrateToFLX',
  'RevertToPBS',
  'RefreshUser',
  'RefreshLocation',
  'LogOutUser',
  'MigrateSchema',
] as const;
export type JsonErrorAction = (typeof jsonErrorActions)[number];

interface JsonErrorRequired {
  tryAgain: boolean;
  message: string;
  isRecoveryModeDisabled: boolean;
  logURL: string;
  shouldClientReset: boolean;
  action: JsonErrorAction;
}

/** The backoff fields come as a group: the client reads the other two whenever the first is present. */
type JsonErrorBackoff =
  | { backoffIntervalSec: number; backoffMaxDelaySec: number; backoffMultiplier: number }
  | { backoffIntervalSec?: never; backoffMaxDelaySec?: never; backoffMultiplier?: never };

/**
 * Refused writes: `rejectedUpdates` requires `rejectedClientVersion`. Each `pk` is base64 of a
 * changeset-encoded primary key (see `flexible/compensating-writes.ts`). A compensating write (231) also
 * names the server version of the undo; a refusal that needs a client reset (230) does not.
 */
type JsonErrorRejected =
  | {
      rejectedUpdates: ReadonlyArray<{ table: string; pk: string; reason: string }>;
      rejectedClientVersion: number;
      compensatingWriteServerVersion?: number;
    }
  | { rejectedUpdates?: never; rejectedClientVersion?: never; compensatingWriteServerVersion?: never };

export type JsonErrorBody = JsonErrorRequired &
  JsonErrorBackoff &
  JsonErrorRejected & { partitionQuery?: string; previousSchemaVersion?: number };
