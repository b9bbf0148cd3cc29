/**
 * The message grammar both sync modes share: the header line (strict tokens), exactly sized bodies, JSON
 * bodies and the frame writer. Used by the partition codec (`messages.ts`) and the flexible codec
 * (`../flexible`); not part of the library's public entry. Every failure is a SyncProtocolError.
 */
import { concatBytes, fromUtf8, utf8 } from '../bytes';
import { SyncProtocolError } from '../errors';
import type { WireBody } from './body';
import { isSendableErrorCode, jsonErrorActions, type JsonErrorBody, type SendableErrorCode } from './error-codes';

const MAX_HEADER_LENGTH = 512;
const canonicalUint = /^(0|[1-9][0-9]*)$/;
const U63_LIMIT = (1n << 63n) - 1n;

export class Header {
  private constructor(
    readonly name: string,
    private readonly tokens: readonly string[],
  ) {}

  static read(bytes: Uint8Array): { header: Header; body: Uint8Array } {
    const limit = Math.min(bytes.length, MAX_HEADER_LENGTH + 1);
    let nl = -1;
    for (let i = 0; i < limit; i++) {
      const c = bytes[i] ?? 0;
      if (c === 0x0a) {
        nl = i;
        break;
      }
      if (c < 0x20 || c > 0x7e) throw new SyncProtocolError('bad_syntax', `non-printable byte in header line at offset ${i}`);
    }
    if (nl < 0) {
      throw new SyncProtocolError('bad_syntax', bytes.length > MAX_HEADER_LENGTH ? 'header line too long' : 'header line has no terminating newline');
    }
    const line = String.fromCharCode(...bytes.subarray(0, nl));
    const tokens = line.split(' ');
    return { header: new Header(tokens[0] ?? '', tokens.slice(1)), body: bytes.subarray(nl + 1) };
  }

  expectCount(count: number): this {
    if (this.tokens.length !== count) {
      throw new SyncProtocolError('bad_syntax', `${this.name} header has ${this.tokens.length} fields, expected ${count}`);
    }
    return this;
  }

  private token(i: number, field: string): string {
    const t = this.tokens[i];
    if (t === undefined || !canonicalUint.test(t)) {
      throw new SyncProtocolError('bad_syntax', `${this.name}: ${field} is not a canonical unsigned integer`);
    }
    return t;
  }

  uint(i: number, field: string): number {
    const t = this.token(i, field);
    const v = Number(t);
    if (t.length > 16 || !Number.isSafeInteger(v)) throw new SyncProtocolError('bad_syntax', `${this.name}: ${field} out of range`);
    return v;
  }

  u63(i: number, field: string): bigint {
    const t = this.token(i, field);
    if (t.length > 19) throw new SyncProtocolError('bad_syntax', `${this.name}: ${field} out of range`);
    const v = BigInt(t);
    if (v > U63_LIMIT) throw new SyncProtocolError('bad_syntax', `${this.name}: ${field} out of range`);
    return v;
  }

  /** The raw token at `i`, for a field that is not an unsigned integer (FLX's progress estimate). */
  raw(i: number): string | undefined {
    return this.tokens[i];
  }

  bool(i: number, field: string): boolean {
    const t = this.tokens[i];
    if (t === '0') return false;
    if (t === '1') return true;
    throw new SyncProtocolError('bad_syntax', `${this.name}: ${field} must be 0 or 1`);
  }
}

export function noBody(header: Header, body: Uint8Array): void {
  if (body.length !== 0) throw new SyncProtocolError('bad_syntax', `${header.name}: leftover bytes after the header line`);
}

export function exactBody(header: Header, body: Uint8Array, size: number, limit: number): Uint8Array {
  if (size > limit) throw new SyncProtocolError('bad_body', `${header.name}: body of ${size} bytes exceeds the limit of ${limit}`);
  if (body.length < size) throw new SyncProtocolError('bad_body', `${header.name}: body truncated (${body.length} of ${size} bytes)`);
  if (body.length > size) throw new SyncProtocolError('bad_syntax', `${header.name}: leftover bytes after the body`);
  return body;
}

export function wireBodyFrom(header: Header, body: Uint8Array, compressed: boolean, uncompressed: number, compressedSize: number, limit: number): WireBody {
  if (!compressed && compressedSize !== 0) {
    throw new SyncProtocolError('bad_syntax', `${header.name}: compressed size given for an uncompressed body`);
  }
  const onWire = compressed ? compressedSize : uncompressed;
  return { compressed, uncompressedSize: uncompressed, bytes: exactBody(header, body, onWire, limit) };
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SyncProtocolError('bad_body', `${what} body is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SyncProtocolError('bad_body', `${what} body is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

export function sendableCode(h: Header, i: number): SendableErrorCode {
  const code = h.uint(i, 'error_code');
  if (!isSendableErrorCode(code)) throw new SyncProtocolError('bad_syntax', `${h.name}: error code ${code} is unknown or must never be sent`);
  return code;
}

export function validateJsonErrorBody(obj: Record<string, unknown>): JsonErrorBody {
  const need = (key: string, type: 'boolean' | 'string'): void => {
    if (typeof obj[key] !== type) throw new SyncProtocolError('bad_body', `json_error body: '${key}' must be a ${type}`);
  };
  need('tryAgain', 'boolean');
  need('message', 'string');
  need('isRecoveryModeDisabled', 'boolean');
  need('logURL', 'string');
  need('shouldClientReset', 'boolean');
  need('action', 'string');
  if (!(jsonErrorActions as readonly unknown[]).includes(obj['action'])) {
    throw new SyncProtocolError('bad_body', `json_error body: unknown action '${String(obj['action'])}'`);
  }
  if ('backoffIntervalSec' in obj && !(typeof obj['backoffMaxDelaySec'] === 'number' && typeof obj['backoffMultiplier'] === 'number')) {
    throw new SyncProtocolError('bad_body', 'json_error body: backoffIntervalSec requires backoffMaxDelaySec and backoffMultiplier');
  }
  if ('rejectedUpdates' in obj && typeof obj['rejectedClientVersion'] !== 'number') {
    throw new SyncProtocolError('bad_body', 'json_error body: rejectedUpdates requires rejectedClientVersion');
  }
  return obj as unknown as JsonErrorBody;
}

// ---- encoder ----

export function frame(fields: readonly (string | number | bigint | boolean)[], body?: Uint8Array): Uint8Array {
  const parts = fields.map((f) => {
    if (typeof f === 'boolean') return f ? '1' : '0';
    if (typeof f === 'number' && (!Number.isSafeInteger(f) || f < 0)) {
      throw new SyncProtocolError('bad_syntax', `cannot encode ${f} as a header integer`);
    }
    if (typeof f === 'bigint' && (f < 0n || f > U63_LIMIT)) throw new SyncProtocolError('bad_syntax', `cannot encode ${f} as a header integer`);
    return String(f);
  });
  const head = utf8(parts.join(' ') + '\n');
  return body && body.length > 0 ? concatBytes([head, body]) : head;
}

// ---- header fields both modes share ----

/** The leading fields of a client's IDENT in both modes: the file's identity and its download progress. */
export interface IdentProgress {
  sessionIdent: number;
  clientFileIdent: number;
  clientFileIdentSalt: bigint;
  downloadServerVersion: number;
  downloadClientVersion: number;
  latestServerVersion: number;
  latestServerVersionSalt: bigint;
}

export function readIdentProgress(h: Header): IdentProgress {
  return {
    sessionIdent: h.uint(0, 'session_ident'),
    clientFileIdent: h.uint(1, 'client_file_ident'),
    clientFileIdentSalt: h.u63(2, 'client_file_ident_salt'),
    downloadServerVersion: h.uint(3, 'download_server_version'),
    downloadClientVersion: h.uint(4, 'download_client_version'),
    latestServerVersion: h.uint(5, 'latest_server_version'),
    latestServerVersionSalt: h.u63(6, 'latest_server_version_salt'),
  };
}

export function identProgressFields(m: IdentProgress): Array<number | bigint> {
  return [m.sessionIdent, m.clientFileIdent, m.clientFileIdentSalt, m.downloadServerVersion, m.downloadClientVersion, m.latestServerVersion, m.latestServerVersionSalt];
}

/** The leading fields of a DOWNLOAD in both modes: the session and the sync progress. */
export interface DownloadProgress {
  sessionIdent: number;
  downloadServerVersion: number;
  downloadClientVersion: number;
  latestServerVersion: number;
  latestServerVersionSalt: bigint;
  uploadClientVersion: number;
  uploadServerVersion: number;
}

export function readDownloadProgress(h: Header): DownloadProgress {
  return {
    sessionIdent: h.uint(0, 'session_ident'),
    downloadServerVersion: h.uint(1, 'download_server_version'),
    downloadClientVersion: h.uint(2, 'download_client_version'),
    latestServerVersion: h.uint(3, 'latest_server_version'),
    latestServerVersionSalt: h.u63(4, 'latest_server_version_salt'),
    uploadClientVersion: h.uint(5, 'upload_client_version'),
    uploadServerVersion: h.uint(6, 'upload_server_version'),
  };
}

export function downloadProgressFields(m: DownloadProgress): Array<number | bigint> {
  return [m.sessionIdent, m.downloadServerVersion, m.downloadClientVersion, m.latestServerVersion, m.latestServerVersionSalt, m.uploadClientVersion, m.uploadServerVersion];
}

/** A BIND in either mode: what comes first in the body is a partition path (PBS) or a JSON object (FLX). */
export interface BindFields {
  sessionIdent: number;
  first: string;
  token: string;
  needClientFileIdent: boolean;
  isSubserver: boolean;
}

export function readBind(h: Header, body: Uint8Array, limit: number, what: string): BindFields {
  h.expectCount(5);
  const firstSize = h.uint(1, `${what}_size`);
  const tokenSize = h.uint(2, 'token_size');
  const all = exactBody(h, body, firstSize + tokenSize, limit);
  return {
    sessionIdent: h.uint(0, 'session_ident'),
    first: fromUtf8(all.subarray(0, firstSize), 'bad_body', `bind ${what}`),
    token: fromUtf8(all.subarray(firstSize), 'bad_body', 'bind token'),
    needClientFileIdent: h.bool(3, 'need_client_file_ident'),
    isSubserver: h.bool(4, 'is_subserver'),
  };
}

export function bindFrame(m: BindFields): Uint8Array {
  const first = utf8(m.first);
  const token = utf8(m.token);
  return frame(['bind', m.sessionIdent, first.length, token.length, m.needClientFileIdent, m.isSubserver], concatBytes([first, token]));
}
