// Public entry of @tessera/sync-protocol: the Realm sync wire format (partition-based and flexible), changesets, their
// merge (operational transform) and the server history model. Pure: no transport, no store.
export * from './errors';
export { toHex, fromHex } from './bytes';
export * from './wire/error-codes';
export * from './wire/subprotocol';
export * from './wire/body';
export * from './wire/messages';
export * from './changeset/types';
export { parseChangeset, encodeChangeset, instructionStrings, type EncodeOptions } from './changeset/codec';
export { formatChangeset, formatInstruction, formatPayload, formatPrimaryKey } from './changeset/debug';
export { mergeChangesets, cloneInstructions, cloneInstruction, survivingInstructions, type TransformableChangeset } from './merge/transform';
export { ObjectStore, EmbeddedValue, DictValue, SetValue, type Value } from './state/object-store';
export * from './history/storage';
export {
  ServerHistory,
  downloadMessage,
  SERVER_FILE_IDENT,
  DEFAULT_MAX_DOWNLOAD_SIZE,
  type HistoryResult,
  type ClientIdent,
  type UploadProgress,
  type DownloadCursor,
  type DownloadBatch,
  type ServerHistoryOptions,
} from './history/server-history';
export { compactChangesets, type CompactionResult } from './history/compaction';
export { ClientHistory, type LocalChangeset } from './history/client-history';
export * from './wire/partition';
export * from './wire/partition-value';
export * from './translate';
export * from './flexible';
