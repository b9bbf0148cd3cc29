/**
 * UPLOAD and DOWNLOAD bodies: a run of changeset entries, each a few space-terminated decimal numbers
 * followed by the changeset bytes, with optional zlib compression of the whole body.
 * Changesets stay raw bytes here; parse them with `parseChangeset` when needed.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { concatBytes, utf8 } from '../bytes';
import { SyncProtocolError } from '../errors';

export interface UploadChangeset {
  clientVersion: number;
  lastIntegratedServerVersion: number;
  /** Milliseconds since 2015-01-01T00:00:00Z. */
  originTimestamp: number;
  /** 0 means the uploading client itself. */
  originFileIdent: number;
  changeset: Uint8Array;
}

export interface DownloadChangeset {
  serverVersion: number;
  lastIntegratedClientVersion: number;
  originTimestamp: number;
  originFileIdent: number;
  /** The size before server-side compaction; equals `changeset.length` when not compacted. */
  originalChangesetSize: number;
  changeset: Uint8Array;
}

/** A body as it travelled: kept by the decoder so that re-encoding reproduces the frame exactly. */
export interface WireBody {
  compressed: boolean;
  uncompressedSize: number;
  bytes: Uint8Array;
}

export const DEFAULT_MAX_BODY_SIZE = 64 * 1024 * 1024;
/** Bodies over this size are compressed when that makes them smaller (as realm-core does). */
export const COMPRESSION_THRESHOLD = 1024;

const SPACE = 0x20;

class BodyCursor {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  done(): boolean {
    return this.at >= this.bytes.length;
  }

  number(what: string): number {
    const start = this.at;
    let value = 0;
    while (this.at < this.bytes.length) {
      const c = this.bytes[this.at] ?? 0;
      if (c === SPACE) break;
      if (c < 0x30 || c > 0x39) throw new SyncProtocolError('bad_body', `bad character in ${what} at body offset ${this.at}`);
      value = value * 10 + (c - 0x30);
      this.at++;
    }
    const len = this.at - start;
    if (this.at >= this.bytes.length) throw new SyncProtocolError('bad_body', `body ended inside ${what}`);
    if (len === 0) throw new SyncProtocolError('bad_body', `empty ${what} in body`);
    if (len > 1 && this.bytes[start] === 0x30) throw new SyncProtocolError('bad_body', `leading zero in ${what}`);
    if (len > 16 || !Number.isSafeInteger(value)) throw new SyncProtocolError('bad_body', `${what} out of range`);
    this.at++; // the space
    return value;
  }

  take(size: number, what: string): Uint8Array {
    if (size > this.bytes.length - this.at) throw new SyncProtocolError('bad_body', `${what} runs past the end of the body`);
    const out = this.bytes.subarray(this.at, this.at + size);
    this.at += size;
    return out;
  }
}

export function parseUploadBody(body: Uint8Array): UploadChangeset[] {
  const cur = new BodyCursor(body);
  const out: UploadChangeset[] = [];
  while (!cur.done()) {
    const clientVersion = cur.number('client_version');
    const lastIntegratedServerVersion = cur.number('last_integrated_server_version');
    const originTimestamp = cur.number('origin_timestamp');
    const originFileIdent = cur.number('origin_file_ident');
    const size = cur.number('changeset_size');
    out.push({ clientVersion, lastIntegratedServerVersion, originTimestamp, originFileIdent, changeset: cur.take(size, 'changeset') });
  }
  return out;
}

export function parseDownloadBody(body: Uint8Array): DownloadChangeset[] {
  const cur = new BodyCursor(body);
  const out: DownloadChangeset[] = [];
  while (!cur.done()) {
    const serverVersion = cur.number('server_version');
    const lastIntegratedClientVersion = cur.number('last_integrated_client_version');
    const originTimestamp = cur.number('origin_timestamp');
    const originFileIdent = cur.number('origin_file_ident');
    const originalChangesetSize = cur.number('original_changeset_size');
    const size = cur.number('changeset_size');
    out.push({
      serverVersion,
      lastIntegratedClientVersion,
      originTimestamp,
      originFileIdent,
      originalChangesetSize,
      changeset: cur.take(size, 'changeset'),
    });
  }
  return out;
}

function entry(numbers: readonly number[], changeset: Uint8Array): Uint8Array[] {
  for (const n of numbers) {
    if (!Number.isSafeInteger(n) || n < 0) throw new SyncProtocolError('bad_body', `cannot encode ${n} in a body entry`);
  }
  return [utf8(numbers.join(' ') + ' '), changeset];
}

export function encodeUploadBody(changesets: readonly UploadChangeset[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const c of changesets) {
    parts.push(...entry([c.clientVersion, c.lastIntegratedServerVersion, c.originTimestamp, c.originFileIdent, c.changeset.length], c.changeset));
  }
  return concatBytes(parts);
}

export function encodeDownloadBody(changesets: readonly DownloadChangeset[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const c of changesets) {
    parts.push(
      ...entry(
        [c.serverVersion, c.lastIntegratedClientVersion, c.originTimestamp, c.originFileIdent, c.originalChangesetSize, c.changeset.length],
        c.changeset,
      ),
    );
  }
  return concatBytes(parts);
}

/** Compresses like realm-core (zlib level 1) when the body is large enough and compression wins. */
export function packBody(body: Uint8Array): WireBody {
  if (body.length > COMPRESSION_THRESHOLD) {
    const deflated = deflateSync(body, { level: 1 });
    if (deflated.length < body.length) {
      return { compressed: true, uncompressedSize: body.length, bytes: new Uint8Array(deflated.buffer, deflated.byteOffset, deflated.length) };
    }
  }
  return { compressed: false, uncompressedSize: body.length, bytes: body };
}

/** Inflates a wire body, insisting that the declared size is exact and the stream has no trailing bytes. */
export function unpackBody(wire: WireBody, maxBodySize: number = DEFAULT_MAX_BODY_SIZE): Uint8Array {
  if (wire.uncompressedSize > maxBodySize) {
    throw new SyncProtocolError('bad_body', `body of ${wire.uncompressedSize} bytes exceeds the limit of ${maxBodySize}`);
  }
  if (!wire.compressed) {
    if (wire.bytes.length !== wire.uncompressedSize) throw new SyncProtocolError('bad_body', 'body size does not match the header');
    return wire.bytes;
  }
  let result: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    result = inflateSync(wire.bytes, { info: true, maxOutputLength: Math.max(1, wire.uncompressedSize + 1) }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
  } catch (err) {
    const reason = err instanceof Error ? err.message : 'unknown failure';
    throw new SyncProtocolError('bad_decompression', `cannot inflate body: ${reason}`);
  }
  if (result.buffer.length !== wire.uncompressedSize) {
    throw new SyncProtocolError('bad_decompression', `body inflated to ${result.buffer.length} bytes, header said ${wire.uncompressedSize}`);
  }
  if (result.engine.bytesWritten !== wire.bytes.length) {
    throw new SyncProtocolError('bad_decompression', 'trailing bytes after the compressed body');
  }
  return new Uint8Array(result.buffer.buffer, result.buffer.byteOffset, result.buffer.length);
}
