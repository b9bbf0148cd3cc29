/**
 * The one error type this library throws. Every malformed input (a header, a body, a changeset, a merge
 * that cannot be done) surfaces as a SyncProtocolError with a `kind` the sync service maps to a protocol
 * error code; nothing else may escape the parsers.
 */
export type SyncProtocolErrorKind =
  | 'bad_syntax'
  | 'unknown_message'
  | 'bad_body'
  | 'bad_decompression'
  | 'bad_changeset'
  | 'bad_subprotocol'
  | 'bad_merge'
  | 'bad_history'
  | 'bad_partition';

export class SyncProtocolError extends Error {
  constructor(
    readonly kind: SyncProtocolErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'SyncProtocolError';
  }
}
