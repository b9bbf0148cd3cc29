/**
 * MongoDB wire-protocol framing: the 16-byte message header, OP_MSG (kind 0 body and kind 1 document
 * sequences, optional trailing checksum), and the legacy OP_QUERY / OP_REPLY pair drivers still use for the
 * first `hello` of a connection. Written from the protocol's public description; only what the datastore
 * server needs.
 */
import { BSON } from 'bson';
import { type Document } from '../api/data-source';
import { isPlainObject, promoteNumbers, toStoredForm } from '../bson/values';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_COMPRESSED = 2012;
export const OP_MSG = 2013;

/** OP_MSG flag bits. */
export const CHECKSUM_PRESENT = 1 << 0;
export const MORE_TO_COME = 1 << 1;

export const HEADER_SIZE = 16;
/** Largest message the server accepts and advertises (`maxMessageSizeBytes`). */
export const MAX_MESSAGE_SIZE = 48_000_000;
export const MAX_BSON_SIZE = 16 * 1024 * 1024;

export interface MessageHeader {
  length: number;
  requestId: number;
  responseTo: number;
  opCode: number;
}

export type IncomingMessage =
  | { kind: 'msg'; header: MessageHeader; flags: number; command: Document }
  | { kind: 'query'; header: MessageHeader; collection: string; command: Document };

export class ProtocolError extends Error {}

// Numbers are decoded as their BSON types, then put in the form the engine reads (see commandForm).
// Regex values stay BSON regexes: a RegExp cannot hold PCRE options or syntax (and bson maps `s` to `g`).
const decodeOptions = { promoteLongs: false, promoteValues: false, promoteBuffers: false, bsonRegExp: true } as const;

/** A decoded value with every number a JS number (a Long beyond 2^53 stays a Long), in place. */
function promoteInPlace(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = promoteInPlace(value[i]);
    return value;
  }
  if (isPlainObject(value)) {
    for (const key of Object.keys(value)) Object.defineProperty(value, key, { value: promoteInPlace(value[key]), enumerable: true, writable: true, configurable: true });
    return value;
  }
  return promoteNumbers(value);
}

/**
 * A decoded command in the engine's forms: the documents it stores (an insert's documents, an update's
 * `u`, findAndModify's `update`, a view's pipeline given to create or collMod) keep their number types (a
 * double holding 1 stays a double, a long a long: toStoredForm); the expressions whose literals keep their
 * types for the engine (an aggregate's pipeline, a find's or findAndModify's projection, `let` variables, see
 * normalizeSpec) are the promoted copy of their stored form; the rest (filters, options, cursor ids) has every
 * number as a JS number.
 */
function commandForm(command: Document): Document {
  const name = Object.keys(command)[0]?.toLowerCase();
  const kept: Array<[Document, string]> = [];
  const keep = (holder: unknown, field: string): void => {
    if (!isPlainObject(holder) && !Array.isArray(holder)) return;
    const value = (holder as Document)[field];
    if (isPlainObject(value) || Array.isArray(value)) kept.push([holder as Document, field]);
  };
  if (name === 'insert' && Array.isArray(command.documents)) command.documents.forEach((_doc, i) => keep(command.documents, String(i)));
  if (name === 'update' && Array.isArray(command.updates)) for (const statement of command.updates as unknown[]) keep(statement, 'u');
  if (name === 'findandmodify') keep(command, 'update');
  if (name === 'create' || name === 'collmod') keep(command, 'pipeline');
  const stored = kept.length;
  if (name === 'aggregate') keep(command, 'pipeline');
  if (name === 'find') keep(command, 'projection');
  if (name === 'findandmodify') keep(command, 'fields');
  keep(command, 'let');
  const values = kept.map(([holder, field]) => {
    const value = holder[field] as Document | unknown[];
    holder[field] = null;
    return value;
  });
  promoteInPlace(command);
  kept.forEach(([holder, field], i) => {
    holder[field] = i < stored ? toStoredForm(values[i]) : promoteNumbers(toStoredForm(values[i]));
  });
  return command;
}

export function readHeader(buf: Buffer, offset = 0): MessageHeader {
  return { length: buf.readInt32LE(offset), requestId: buf.readInt32LE(offset + 4), responseTo: buf.readInt32LE(offset + 8), opCode: buf.readInt32LE(offset + 12) };
}

function readDocument(buf: Buffer, offset: number, end: number): { doc: Document; next: number } {
  if (offset + 5 > end) throw new ProtocolError('truncated BSON document');
  const size = buf.readInt32LE(offset);
  if (size < 5 || offset + size > end) throw new ProtocolError('BSON document overruns its section');
  const doc = BSON.deserialize(buf.subarray(offset, offset + size), decodeOptions);
  return { doc, next: offset + size };
}

function readCString(buf: Buffer, offset: number, end: number): { value: string; next: number } {
  const zero = buf.indexOf(0, offset);
  if (zero < 0 || zero >= end) throw new ProtocolError('unterminated string');
  return { value: buf.toString('utf8', offset, zero), next: zero + 1 };
}

/**
 * Decodes one complete message (`buf` holds exactly it). An OP_MSG's document sequences become array
 * fields of its body, as the protocol defines them to be equivalent.
 */
export function decodeMessage(buf: Buffer): IncomingMessage {
  const header = readHeader(buf);
  if (header.opCode === OP_MSG) {
    const flags = buf.readUInt32LE(HEADER_SIZE);
    // Bits 0-15 are required to be understood: only checksumPresent and moreToCome are defined.
    if ((flags & 0xffff) & ~(CHECKSUM_PRESENT | MORE_TO_COME)) throw new ProtocolError(`unsupported OP_MSG flag bits ${flags.toString(16)}`);
    const end = flags & CHECKSUM_PRESENT ? buf.length - 4 : buf.length;
    let offset = HEADER_SIZE + 4;
    let body: Document | undefined;
    const sequences: [string, Document[]][] = [];
    while (offset < end) {
      const kind = buf[offset++];
      if (kind === 0) {
        if (body) throw new ProtocolError('OP_MSG holds more than one body section');
        const read = readDocument(buf, offset, end);
        body = read.doc;
        offset = read.next;
      } else if (kind === 1) {
        const size = buf.readInt32LE(offset);
        const sectionEnd = offset + size;
        if (size < 5 || sectionEnd > end) throw new ProtocolError('document sequence overruns the message');
        const id = readCString(buf, offset + 4, sectionEnd);
        const docs: Document[] = [];
        let at = id.next;
        while (at < sectionEnd) {
          const read = readDocument(buf, at, sectionEnd);
          docs.push(read.doc);
          at = read.next;
        }
        sequences.push([id.value, docs]);
        offset = sectionEnd;
      } else {
        throw new ProtocolError(`unknown OP_MSG section kind ${kind}`);
      }
    }
    if (!body) throw new ProtocolError('OP_MSG without a body section');
    for (const [name, docs] of sequences) {
      if (name in body) throw new ProtocolError(`field '${name}' is both in the body and a document sequence`);
      body[name] = docs;
    }
    return { kind: 'msg', header, flags, command: commandForm(body) };
  }
  if (header.opCode === OP_QUERY) {
    let offset = HEADER_SIZE + 4; // flags
    const name = readCString(buf, offset, buf.length);
    offset = name.next + 8; // numberToSkip, numberToReturn
    const { doc } = readDocument(buf, offset, buf.length);
    // Legacy commands may wrap the command in `$query` beside read preference modifiers.
    const command = doc.$query && typeof doc.$query === 'object' ? (doc.$query as Document) : doc;
    return { kind: 'query', header, collection: name.value, command: commandForm(command) };
  }
  throw new ProtocolError(`unsupported opCode ${header.opCode}`);
}

function header(length: number, requestId: number, responseTo: number, opCode: number): Buffer {
  const out = Buffer.allocUnsafe(HEADER_SIZE);
  out.writeInt32LE(length, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(responseTo, 8);
  out.writeInt32LE(opCode, 12);
  return out;
}

/** An OP_MSG with a single body section. */
export function encodeMsg(requestId: number, responseTo: number, body: Document, flags = 0): Buffer {
  const bson = BSON.serialize(body, { ignoreUndefined: true });
  const length = HEADER_SIZE + 4 + 1 + bson.length;
  const flagAndKind = Buffer.alloc(5);
  flagAndKind.writeUInt32LE(flags, 0);
  flagAndKind[4] = 0;
  return Buffer.concat([header(length, requestId, responseTo, OP_MSG), flagAndKind, bson], length);
}

/** An OP_REPLY carrying one document (the answer to a legacy OP_QUERY command). */
export function encodeReply(requestId: number, responseTo: number, doc: Document): Buffer {
  const bson = BSON.serialize(doc, { ignoreUndefined: true });
  const fixed = Buffer.alloc(20);
  fixed.writeInt32LE(0, 0); // responseFlags
  fixed.writeBigInt64LE(0n, 4); // cursorID
  fixed.writeInt32LE(0, 12); // startingFrom
  fixed.writeInt32LE(1, 16); // numberReturned
  const length = HEADER_SIZE + fixed.length + bson.length;
  return Buffer.concat([header(length, requestId, responseTo, OP_REPLY), fixed, bson], length);
}

/**
 * Cuts a connection's byte stream into whole messages. Chunks are kept as they arrive and joined once per
 * message, when its announced length is in: joining on every chunk copied a large message quadratically.
 */
export class MessageReader {
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly maxMessageSize = MAX_MESSAGE_SIZE) {}

  /** Bytes received and not yet handed out as a message. */
  get buffered(): number {
    return this.bytes;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /**
   * The next complete message, or undefined until more bytes arrive. Throws ProtocolError as soon as a
   * header announces a length out of range, before any of its body is waited for.
   */
  next(): Buffer | undefined {
    if (this.bytes < 4) return undefined;
    const length = this.announcedLength();
    if (length < HEADER_SIZE || length > this.maxMessageSize) throw new ProtocolError(`message length ${length} out of range`);
    if (this.bytes < length) return undefined;
    const first = this.chunks[0];
    let message: Buffer;
    if (first.length >= length) {
      message = first.subarray(0, length);
    } else {
      const whole = Buffer.concat(this.chunks, this.bytes);
      message = whole.subarray(0, length);
      this.chunks = [whole];
    }
    const rest = this.chunks[0].subarray(length);
    if (rest.length) this.chunks[0] = rest;
    else this.chunks.shift();
    this.bytes -= length;
    return message;
  }

  /** The first four bytes, which may span chunks. */
  private announcedLength(): number {
    const first = this.chunks[0];
    if (first.length >= 4) return first.readInt32LE(0);
    const head = Buffer.alloc(4);
    let filled = 0;
    for (const chunk of this.chunks) {
      filled += chunk.copy(head, filled, 0, Math.min(chunk.length, 4 - filled));
      if (filled === 4) break;
    }
    return head.readInt32LE(0);
  }
}
