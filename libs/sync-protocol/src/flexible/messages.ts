/**
 * Flexible-sync (FLX) wire messages in both directions. FLX shares the partition codec's grammar and
 * most of its messages (UPLOAD, MARK, UNBIND, PING/PONG, IDENT from the server, UNBOUND, ERROR,
 * JSON_ERROR, LOG_MESSAGE): those are delegated to `../wire/messages`. What differs:
 * - BIND carries a JSON object (`sessionReason`, `schemaVersion`, `migratedPartition`) instead of a path;
 * - the client's IDENT ends with the active query version and the query body;
 * - QUERY (client) and QUERY_ERROR (server) exist only here;
 * - DOWNLOAD carries the query version, the batch state and a progress estimate instead of
 *   downloadable bytes;
 * - JSON_ERROR bodies of refused writes carry `rejectedUpdates` that must decode.
 * Decoders are strict and every failure is a SyncProtocolError; encoders refuse what a realm-core client
 * would reject as a protocol violation. No session logic lives here.
 */
import { fromUtf8, utf8 } from '../bytes';
import { SyncProtocolError } from '../errors';
import { DEFAULT_MAX_BODY_SIZE, encodeDownloadBody, packBody, parseDownloadBody, unpackBody, type DownloadChangeset, type WireBody } from '../wire/body';
import { ProtocolErrorCode, type SendableErrorCode } from '../wire/error-codes';
import {
  bindFrame,
  downloadProgressFields,
  readBind,
  exactBody,
  type DownloadProgress,
  type IdentProgress,
  frame,
  Header,
  identProgressFields,
  parseJsonObject,
  readDownloadProgress,
  readIdentProgress,
  sendableCode,
  wireBodyFrom,
} from '../wire/frame';
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
  type BindMessage,
  type ClientIdentMessage,
  type ClientMessage,
  type DecodeOptions,
  type DownloadMessage,
  type ServerJsonErrorMessage,
  type ServerMessage,
} from '../wire/messages';
import { parseRejectedUpdates } from './compensating-writes';

// ---- shared pieces ----

/** Why the client opened the session (BIND `sessionReason`). */
export const SessionReason = { sync: 0, clientReset: 1 } as const;
export type SessionReasonValue = (typeof SessionReason)[keyof typeof SessionReason];

/** The JSON object of a flexible-sync BIND. Unknown members are kept (newer clients may add some). */
export interface FlexibleBindData {
  sessionReason?: SessionReasonValue;
  /** 0 when the app does not version its schema. */
  schemaVersion?: number;
  /** Set by a client that migrated from partition-based sync: the partition it used (EJSON text). */
  migratedPartition?: string;
  [extra: string]: unknown;
}

/** The batch state of a DOWNLOAD: a bootstrap is MoreToCome... then LastInBatch; everything else is SteadyState. */
export const DownloadBatchState = { moreToCome: 0, lastInBatch: 1, steadyState: 2 } as const;
export type DownloadBatchStateName = keyof typeof DownloadBatchState;
const batchStateByCode: readonly DownloadBatchStateName[] = ['moreToCome', 'lastInBatch', 'steadyState'];

/** A query set: object type name (without `class_`) -> Realm Query Language text, `(q1) OR (q2)`. */
export type QuerySet = Readonly<Record<string, string>>;

// ---- client -> server ----

export interface FlexibleBindMessage {
  type: 'bind';
  sessionIdent: number;
  data: FlexibleBindData;
  /** Always empty from realm-core: the access token travels in the URL (`baas_at`). */
  token: string;
  needClientFileIdent: boolean;
  isSubserver: boolean;
}

/** The partition IDENT's fields, then the active query set. */
export interface FlexibleIdentMessage extends IdentProgress {
  type: 'ident';
  /** The version of the client's active subscription set (0: no subscriptions yet). */
  queryVersion: number;
  queries: QuerySet;
  /** The body as it travelled; set by the decoder, and written verbatim by the encoder when present. */
  queryBody?: string;
}

export interface QueryMessage {
  type: 'query';
  sessionIdent: number;
  queryVersion: number;
  queries: QuerySet;
  queryBody?: string;
}

/** The partition client messages, with BIND and IDENT in their flexible form, and QUERY. */
export type FlexibleClientMessage = Exclude<ClientMessage, BindMessage | ClientIdentMessage> | FlexibleBindMessage | FlexibleIdentMessage | QueryMessage;

// ---- server -> client ----

/** The partition DOWNLOAD's progress fields, then the query version, batch state and progress estimate. */
export interface FlexibleDownloadMessage extends DownloadProgress {
  type: 'download';
  /** The subscription set this message serves (a bootstrap names the set being bootstrapped). */
  queryVersion: number;
  batchState: DownloadBatchStateName;
  /** 0.0 to 1.0: how much of the bootstrap has been sent; 1 in steady state (protocol 12+). */
  progressEstimate: number;
  changesets: DownloadChangeset[];
  wireBody?: WireBody;
}

export interface QueryErrorMessage {
  type: 'query_error';
  /** Normally 226 (bad_query). */
  code: SendableErrorCode;
  message: string;
  /** Never 0: the client treats a QUERY_ERROR for session 0 as a protocol violation. */
  sessionIdent: number;
  queryVersion: number;
}

/** The partition server messages, with DOWNLOAD in its flexible form, and QUERY_ERROR. */
export type FlexibleServerMessage = Exclude<ServerMessage, DownloadMessage> | FlexibleDownloadMessage | QueryErrorMessage;

// ---- bodies ----

function parseBindData(text: string): FlexibleBindData {
  if (text === '') return {};
  const data = parseJsonObject(text, 'bind');
  const reason = data['sessionReason'];
  if (reason !== undefined && reason !== SessionReason.sync && reason !== SessionReason.clientReset) {
    throw new SyncProtocolError('bad_body', 'bind: sessionReason must be 0 (sync) or 1 (client reset)');
  }
  const schemaVersion = data['schemaVersion'];
  if (schemaVersion !== undefined && !(typeof schemaVersion === 'number' && Number.isSafeInteger(schemaVersion) && schemaVersion >= 0)) {
    throw new SyncProtocolError('bad_body', 'bind: schemaVersion must be a non-negative integer');
  }
  if (data['migratedPartition'] !== undefined && typeof data['migratedPartition'] !== 'string') {
    throw new SyncProtocolError('bad_body', 'bind: migratedPartition must be a string');
  }
  return data;
}

/** Writes JSON as realm-core's JSON library does: members in the byte order of their UTF-8 keys, no spaces. */
function sortedJson(value: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(value)
    .filter((k) => value[k] !== undefined)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  if (keys.length === 0) return '';
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, value[k]])));
}

/** Parses a query body: a JSON object of object type name -> RQL text. `{}` is the empty set. */
export function parseQueryBody(text: string, what = 'query'): QuerySet {
  const obj = parseJsonObject(text, what);
  for (const [table, query] of Object.entries(obj)) {
    if (table === '') throw new SyncProtocolError('bad_body', `${what} body: an object type name is empty`);
    if (typeof query !== 'string') throw new SyncProtocolError('bad_body', `${what} body: the query of "${table.slice(0, 60)}" is not a string`);
  }
  return obj as QuerySet;
}

/** Writes a query set as realm-core does (types in key order); `{}` when empty. */
export function formatQueryBody(queries: QuerySet): string {
  return sortedJson(queries) || '{}';
}

function queryBodyBytes(msg: { queries: QuerySet; queryBody?: string }): Uint8Array {
  return utf8(msg.queryBody ?? formatQueryBody(msg.queries));
}

const estimateSyntax = /^(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

function parseEstimate(h: Header, i: number): number {
  const text = h.raw(i);
  if (text === undefined || text.length > 32 || !estimateSyntax.test(text)) throw new SyncProtocolError('bad_syntax', `${h.name}: progress_estimate is not a decimal number`);
  const value = Number(text);
  if (!(value >= 0 && value <= 1)) throw new SyncProtocolError('bad_syntax', `${h.name}: progress_estimate ${text} is outside 0..1`);
  return value;
}

function formatEstimate(value: number): string {
  if (!(Number.isFinite(value) && value >= 0 && value <= 1)) throw new SyncProtocolError('bad_syntax', `cannot encode progress estimate ${String(value)} (must be 0..1)`);
  return String(value);
}

// ---- decoders ----

export function decodeFlexibleClientMessage(bytes: Uint8Array, options: DecodeOptions = {}): FlexibleClientMessage {
  const limit = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE;
  const { header: h, body } = Header.read(bytes);
  switch (h.name) {
    case 'bind': {
      const { first, ...rest } = readBind(h, body, limit, 'json');
      return { type: 'bind', ...rest, data: parseBindData(first) };
    }
    case 'ident': {
      h.expectCount(9);
      const queryBody = fromUtf8(exactBody(h, body, h.uint(8, 'query_size'), limit), 'bad_body', 'ident query');
      return {
        type: 'ident',
        ...readIdentProgress(h),
        queryVersion: h.uint(7, 'query_version'),
        queries: parseQueryBody(queryBody, 'ident query'),
        queryBody,
      };
    }
    case 'query': {
      h.expectCount(3);
      const queryBody = fromUtf8(exactBody(h, body, h.uint(2, 'query_size'), limit), 'bad_body', 'query body');
      return { type: 'query', sessionIdent: h.uint(0, 'session_ident'), queryVersion: h.uint(1, 'query_version'), queries: parseQueryBody(queryBody), queryBody };
    }
    default:
      // UPLOAD, MARK, UNBIND, PING and JSON_ERROR are the partition grammar's; anything else is unknown there too.
      return decodeClientMessage(bytes, options) as FlexibleClientMessage;
  }
}

export function decodeFlexibleServerMessage(bytes: Uint8Array, options: DecodeOptions = {}): FlexibleServerMessage {
  const limit = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE;
  const { header: h, body } = Header.read(bytes);
  switch (h.name) {
    case 'download': {
      h.expectCount(13);
      const batchState = batchStateByCode[h.uint(8, 'batch_state')];
      if (batchState === undefined) throw new SyncProtocolError('bad_syntax', 'download: batch_state must be 0, 1 or 2');
      const wireBody = wireBodyFrom(h, body, h.bool(10, 'is_body_compressed'), h.uint(11, 'uncompressed_body_size'), h.uint(12, 'compressed_body_size'), limit);
      const changesets = parseDownloadBody(unpackBody(wireBody, limit));
      if (changesets.some((c) => c.serverVersion === 0)) throw new SyncProtocolError('bad_body', 'download: a changeset has server version 0');
      return {
        type: 'download',
        ...readDownloadProgress(h),
        queryVersion: h.uint(7, 'query_version'),
        batchState,
        progressEstimate: parseEstimate(h, 9),
        changesets,
        wireBody,
      };
    }
    case 'query_error': {
      h.expectCount(4);
      const message = fromUtf8(exactBody(h, body, h.uint(1, 'message_size'), limit), 'bad_body', 'query_error message');
      const sessionIdent = h.uint(2, 'session_ident');
      if (sessionIdent === 0) throw new SyncProtocolError('bad_syntax', 'query_error: session ident 0');
      return { type: 'query_error', code: sendableCode(h, 0), message, sessionIdent, queryVersion: h.uint(3, 'query_version') };
    }
    default: {
      const msg = decodeServerMessage(bytes, options);
      if (msg.type === 'json_error') checkRefusedWrites(msg);
      return msg as FlexibleServerMessage;
    }
  }
}

/** What realm-core requires of a refused-write JSON_ERROR beyond the shared checks. */
function checkRefusedWrites(msg: ServerJsonErrorMessage): void {
  const body = msg.body;
  if (body.rejectedUpdates !== undefined) parseRejectedUpdates(body.rejectedUpdates);
  if (msg.code === ProtocolErrorCode.compensatingWrite) {
    if (body.rejectedUpdates === undefined) throw new SyncProtocolError('bad_body', 'json_error 231: a compensating write needs rejectedUpdates');
    if (typeof body.compensatingWriteServerVersion !== 'number') throw new SyncProtocolError('bad_body', 'json_error 231: compensatingWriteServerVersion is required');
    if (msg.sessionIdent === 0) throw new SyncProtocolError('bad_body', 'json_error 231: a compensating write belongs to a session');
  }
}

// ---- encoders ----

export function encodeFlexibleClientMessage(msg: FlexibleClientMessage): Uint8Array {
  switch (msg.type) {
    case 'bind':
      return bindFrame({ ...msg, first: sortedJson(msg.data) });
    case 'ident': {
      const body = queryBodyBytes(msg);
      return frame(
['ident', ...identProgressFields(msg), msg.queryVersion, body.length],
        body,
      );
    }
    case 'query': {
      const body = queryBodyBytes(msg);
      return frame(['query', msg.sessionIdent, msg.queryVersion, body.length], body);
    }
    case 'upload':
    case 'mark':
    case 'unbind':
    case 'ping':
    case 'json_error':
      return encodeClientMessage(msg);
  }
}

export function encodeFlexibleServerMessage(msg: FlexibleServerMessage): Uint8Array {
  switch (msg.type) {
    case 'download': {
      if (msg.batchState === 'moreToCome' && msg.changesets.length === 0 && msg.wireBody === undefined) {
        // realm-core fails integration (bad_progress) on an empty DOWNLOAD that is not the last of its batch.
        throw new SyncProtocolError('bad_body', 'download: a message that is not the last of its batch must carry changesets');
      }
      if (msg.changesets.some((c) => c.serverVersion === 0)) throw new SyncProtocolError('bad_body', 'download: a changeset cannot have server version 0');
      const wire = msg.wireBody ?? packBody(encodeDownloadBody(msg.changesets));
      return frame(
        [
          'download',
          ...downloadProgressFields(msg),
          msg.queryVersion,
          DownloadBatchState[msg.batchState],
          formatEstimate(msg.progressEstimate),
          wire.compressed,
          wire.uncompressedSize,
          wire.compressed ? wire.bytes.length : 0,
        ],
        wire.bytes,
      );
    }
    case 'query_error': {
      if (msg.sessionIdent === 0) throw new SyncProtocolError('bad_syntax', 'query_error: a query error belongs to a session, not to session 0');
      const body = utf8(msg.message);
      return frame(['query_error', msg.code, body.length, msg.sessionIdent, msg.queryVersion], body);
    }
    case 'json_error':
      checkRefusedWrites(msg);
      return encodeServerMessage(msg);
    case 'ident':
    case 'mark':
    case 'unbound':
    case 'pong':
    case 'error':
    case 'log_message':
      return encodeServerMessage(msg);
  }
}
