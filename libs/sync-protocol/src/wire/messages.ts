/**
 * PBS wire messages in both directions: a header line of space-separated tokens ended by `\n`, then an
 * optional body whose size the header declares. Parsing is strict: exact token counts, canonical decimal
 * integers, booleans 0/1, body sizes that match, no leftover bytes. Every failure is a SyncProtocolError.
 */
import { fromUtf8, utf8 } from '../bytes';
import { SyncProtocolError } from '../errors';
import {
  DEFAULT_MAX_BODY_SIZE,
  encodeDownloadBody,
  encodeUploadBody,
  packBody,
  parseDownloadBody,
  parseUploadBody,
  unpackBody,
  type DownloadChangeset,
  type UploadChangeset,
  type WireBody,
} from './body';
import { isSendableErrorCode, type JsonErrorBody, type SendableErrorCode } from './error-codes';
import {
  bindFrame,
  downloadProgressFields,
  readBind,
  type DownloadProgress,
  type IdentProgress,
  exactBody,
  frame,
  Header,
  identProgressFields,
  noBody,
  parseJsonObject,
  readDownloadProgress,
  readIdentProgress,
  sendableCode,
  validateJsonErrorBody,
  wireBodyFrom,
} from './frame';

// ---- client -> server ----

export interface BindMessage {
  type: 'bind';
  sessionIdent: number;
  /** The partition value as the client serialised it (EJSON text), e.g. `"p1"` or `42`. */
  path: string;
  token: string;
  needClientFileIdent: boolean;
  isSubserver: boolean;
}

export interface ClientIdentMessage extends IdentProgress {
  type: 'ident';
}

export interface UploadMessage {
  type: 'upload';
  sessionIdent: number;
  progressClientVersion: number;
  progressServerVersion: number;
  lockedServerVersion: number;
  changesets: UploadChangeset[];
  /** Set by the decoder; when present the encoder writes it verbatim instead of re-encoding `changesets`. */
  wireBody?: WireBody;
}

export interface MarkMessage {
  type: 'mark';
  sessionIdent: number;
  requestIdent: number;
}

export interface UnbindMessage {
  type: 'unbind';
  sessionIdent: number;
}

export interface PingMessage {
  type: 'ping';
  timestamp: number;
  rtt: number;
}

export interface ClientJsonErrorMessage {
  type: 'json_error';
  code: number;
  sessionIdent: number;
  /** JSON text, normally `{"message":"..."}`. */
  json: string;
}

export type ClientMessage =
  | BindMessage
  | ClientIdentMessage
  | UploadMessage
  | MarkMessage
  | UnbindMessage
  | PingMessage
  | ClientJsonErrorMessage;

// ---- server -> client ----

export interface ServerIdentMessage {
  type: 'ident';
  sessionIdent: number;
  clientFileIdent: number;
  clientFileIdentSalt: bigint;
}

export interface DownloadMessage extends DownloadProgress {
  type: 'download';
  downloadableBytes: number;
  changesets: DownloadChangeset[];
  wireBody?: WireBody;
}

export interface UnboundMessage {
  type: 'unbound';
  sessionIdent: number;
}

export interface PongMessage {
  type: 'pong';
  timestamp: number;
}

export interface ErrorMessage {
  type: 'error';
  code: SendableErrorCode;
  message: string;
  tryAgain: boolean;
  sessionIdent: number;
}

export interface ServerJsonErrorMessage {
  type: 'json_error';
  code: SendableErrorCode;
  sessionIdent: number;
  body: JsonErrorBody;
}

export interface LogMessage {
  type: 'log_message';
  /** 0 for connection-level messages. */
  sessionIdent: number;
  /** JSON text: `{"level":"debug","msg":"..."}` and optionally `co_id`. */
  json: string;
}

export type ServerMessage =
  | ServerIdentMessage
  | DownloadMessage
  | MarkMessage
  | UnboundMessage
  | PongMessage
  | ErrorMessage
  | ServerJsonErrorMessage
  | LogMessage;

export interface DecodeOptions {
  /** Largest body accepted, compressed or inflated. Default 64 MiB. */
  maxBodySize?: number;
}

// ---- decoders ----

export function decodeClientMessage(bytes: Uint8Array, options: DecodeOptions = {}): ClientMessage {
  const limit = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE;
  const { header: h, body } = Header.read(bytes);
  switch (h.name) {
    case 'bind': {
      const { first, ...rest } = readBind(h, body, limit, 'path');
      return { type: 'bind', ...rest, path: first };
    }
    case 'ident':
      h.expectCount(7);
      noBody(h, body);
      return { type: 'ident', ...readIdentProgress(h) };
    case 'upload': {
      h.expectCount(7);
      const wireBody = wireBodyFrom(h, body, h.bool(1, 'is_body_compressed'), h.uint(2, 'uncompressed_body_size'), h.uint(3, 'compressed_body_size'), limit);
      return {
        type: 'upload',
        sessionIdent: h.uint(0, 'session_ident'),
        progressClientVersion: h.uint(4, 'progress_client_version'),
        progressServerVersion: h.uint(5, 'progress_server_version'),
        lockedServerVersion: h.uint(6, 'locked_server_version'),
        changesets: parseUploadBody(unpackBody(wireBody, limit)),
        wireBody,
      };
    }
    case 'mark':
      h.expectCount(2);
      noBody(h, body);
      return { type: 'mark', sessionIdent: h.uint(0, 'session_ident'), requestIdent: h.uint(1, 'request_ident') };
    case 'unbind':
      h.expectCount(1);
      noBody(h, body);
      return { type: 'unbind', sessionIdent: h.uint(0, 'session_ident') };
    case 'ping':
      h.expectCount(2);
      noBody(h, body);
      return { type: 'ping', timestamp: h.uint(0, 'timestamp'), rtt: h.uint(1, 'rtt') };
    case 'json_error': {
      h.expectCount(3);
      const json = fromUtf8(exactBody(h, body, h.uint(1, 'body_size'), limit), 'bad_body', 'json_error body');
      parseJsonObject(json, 'json_error');
      return { type: 'json_error', code: h.uint(0, 'error_code'), sessionIdent: h.uint(2, 'session_ident'), json };
    }
    default:
      throw new SyncProtocolError('unknown_message', `unknown client message '${h.name.slice(0, 40)}'`);
  }
}

export function decodeServerMessage(bytes: Uint8Array, options: DecodeOptions = {}): ServerMessage {
  const limit = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE;
  const { header: h, body } = Header.read(bytes);
  switch (h.name) {
    case 'ident':
      h.expectCount(3);
      noBody(h, body);
      return {
        type: 'ident',
        sessionIdent: h.uint(0, 'session_ident'),
        clientFileIdent: h.uint(1, 'client_file_ident'),
        clientFileIdentSalt: h.u63(2, 'client_file_ident_salt'),
      };
    case 'download': {
      h.expectCount(11);
      const wireBody = wireBodyFrom(h, body, h.bool(8, 'is_body_compressed'), h.uint(9, 'uncompressed_body_size'), h.uint(10, 'compressed_body_size'), limit);
      return {
        type: 'download',
        ...readDownloadProgress(h),
        downloadableBytes: h.uint(7, 'downloadable_bytes'),
        changesets: parseDownloadBody(unpackBody(wireBody, limit)),
        wireBody,
      };
    }
    case 'mark':
      h.expectCount(2);
      noBody(h, body);
      return { type: 'mark', sessionIdent: h.uint(0, 'session_ident'), requestIdent: h.uint(1, 'request_ident') };
    case 'unbound':
      h.expectCount(1);
      noBody(h, body);
      return { type: 'unbound', sessionIdent: h.uint(0, 'session_ident') };
    case 'pong':
      h.expectCount(1);
      noBody(h, body);
      return { type: 'pong', timestamp: h.uint(0, 'timestamp') };
    case 'error': {
      h.expectCount(4);
      const message = fromUtf8(exactBody(h, body, h.uint(1, 'message_size'), limit), 'bad_body', 'error message');
      return { type: 'error', code: sendableCode(h, 0), message, tryAgain: h.bool(2, 'try_again'), sessionIdent: h.uint(3, 'session_ident') };
    }
    case 'json_error': {
      h.expectCount(3);
      const json = fromUtf8(exactBody(h, body, h.uint(1, 'json_size'), limit), 'bad_body', 'json_error body');
      return { type: 'json_error', code: sendableCode(h, 0), sessionIdent: h.uint(2, 'session_ident'), body: validateJsonErrorBody(parseJsonObject(json, 'json_error')) };
    }
    case 'log_message': {
      h.expectCount(2);
      const json = fromUtf8(exactBody(h, body, h.uint(1, 'json_size'), limit), 'bad_body', 'log_message body');
      parseJsonObject(json, 'log_message');
      return { type: 'log_message', sessionIdent: h.uint(0, 'session_ident'), json };
    }
    default:
      throw new SyncProtocolError('unknown_message', `unknown server message '${h.name.slice(0, 40)}'`);
  }
}

// ---- encoders ----

export function encodeClientMessage(msg: ClientMessage): Uint8Array {
  switch (msg.type) {
    case 'bind':
      return bindFrame({ ...msg, first: msg.path });
    case 'ident':
      return frame(['ident', ...identProgressFields(msg)]);
    case 'upload': {
      const wire = msg.wireBody ?? packBody(encodeUploadBody(msg.changesets));
      return frame(
        [
          'upload',
          msg.sessionIdent,
          wire.compressed,
          wire.uncompressedSize,
          wire.compressed ? wire.bytes.length : 0,
          msg.progressClientVersion,
          msg.progressServerVersion,
          msg.lockedServerVersion,
        ],
        wire.bytes,
      );
    }
    case 'mark':
      return frame(['mark', msg.sessionIdent, msg.requestIdent]);
    case 'unbind':
      return frame(['unbind', msg.sessionIdent]);
    case 'ping':
      return frame(['ping', msg.timestamp, msg.rtt]);
    case 'json_error': {
      const body = utf8(msg.json);
      return frame(['json_error', msg.code, body.length, msg.sessionIdent], body);
    }
  }
}

export function encodeServerMessage(msg: ServerMessage): Uint8Array {
  if ((msg.type === 'error' || msg.type === 'json_error') && !isSendableErrorCode(msg.code)) {
    // The types already forbid this; the check guards callers that build messages from untyped data.
    throw new SyncProtocolError('bad_syntax', `error code ${String(msg.code)} must never be sent to a client`);
  }
  switch (msg.type) {
    case 'ident':
      return frame(['ident', msg.sessionIdent, msg.clientFileIdent, msg.clientFileIdentSalt]);
    case 'download': {
      const wire = msg.wireBody ?? packBody(encodeDownloadBody(msg.changesets));
      return frame(
        [
          'download',
          ...downloadProgressFields(msg),
          msg.downloadableBytes,
          wire.compressed,
          wire.uncompressedSize,
          wire.compressed ? wire.bytes.length : 0,
        ],
        wire.bytes,
      );
    }
    case 'mark':
      return frame(['mark', msg.sessionIdent, msg.requestIdent]);
    case 'unbound':
      return frame(['unbound', msg.sessionIdent]);
    case 'pong':
      return frame(['pong', msg.timestamp]);
    case 'error': {
      const body = utf8(msg.message);
      return frame(['error', msg.code, body.length, msg.tryAgain, msg.sessionIdent], body);
    }
    case 'json_error': {
      const body = utf8(JSON.stringify(msg.body));
      return frame(['json_error', msg.code, body.length, msg.sessionIdent], body);
    }
    case 'log_message': {
      const body = utf8(msg.json);
      return frame(['log_message', msg.sessionIdent, body.length], body);
    }
  }
}

export interface JsonErrorOptions {
  message: string;
  action: JsonErrorBody['action'];
  tryAgain?: boolean;
  shouldClientReset?: boolean;
  isRecoveryModeDisabled?: boolean;
  logURL?: string;
}

/** A JSON_ERROR with every field the client requires; `shouldClientReset` follows the action by default. */
export function jsonErrorMessage(code: SendableErrorCode, sessionIdent: number, options: JsonErrorOptions): ServerJsonErrorMessage {
  const reset = options.action === 'ClientReset' || options.action === 'ClientResetNoRecovery';
  return {
    type: 'json_error',
    code,
    sessionIdent,
    body: {
      tryAgain: options.tryAgain ?? options.action === 'Transient',
      message: options.message,
      isRecoveryModeDisabled: options.isRecoveryModeDisabled ?? options.action === 'ClientResetNoRecovery',
      logURL: options.logURL ?? '',
      shouldClientReset: options.shouldClientReset ?? reset,
      action: options.action,
    },
  };
}
