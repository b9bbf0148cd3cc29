/**
 * Compensating writes (error 231) and refused writes (230): the JSON_ERROR body members the client reads
 * for each refused object. realm-core reads `rejectedUpdates[i].pk` as base64 of a changeset-encoded
 * primary key (payload type, then the value) and aborts on a GlobalKey or an undecodable key, so keys are
 * only built from the types a synced object can have. Pure data and functions.
 */
import { SyncProtocolError } from '../errors';
import { fromUtf8, toHex, fromHex } from '../bytes';
import { payloadTypeCodes, type PrimaryKey } from '../changeset/types';
import { Reader, Writer } from '../changeset/varint';

/** The primary key types a synced object may have (GlobalKey is never sent to clients). */
export type SyncedPrimaryKey = Exclude<PrimaryKey, { type: 'GlobalKey' }>;

export interface RejectedUpdate {
  /** The object type (class) name without `class_`. */
  table: string;
  primaryKey: SyncedPrimaryKey;
  reason: string;
}

/** The members a compensating-write JSON_ERROR carries on the wire. */
export interface RejectedUpdateWire {
  table: string;
  /** base64 of the encoded primary key. */
  pk: string;
  reason: string;
}

function bad(message: string): never {
  throw new SyncProtocolError('bad_body', message);
}

/** Encodes a primary key as realm-core's `parse_base64_encoded_primary_key` reads it. */
export function encodePrimaryKey(key: SyncedPrimaryKey): string {
  const w = new Writer();
  w.int(payloadTypeCodes[key.type]);
  switch (key.type) {
    case 'Null':
      break;
    case 'Int':
      w.int(key.value);
      break;
    case 'String':
      w.string(key.value);
      break;
    case 'ObjectId':
      if (!/^[0-9a-f]{24}$/.test(key.value)) bad('an ObjectId primary key needs 24 lower-case hex digits');
      w.bytes(fromHex(key.value));
      break;
    case 'UUID':
      if (!/^[0-9a-f]{32}$/.test(key.value)) bad('a UUID primary key needs 32 lower-case hex digits');
      w.bytes(fromHex(key.value));
      break;
  }
  return Buffer.from(w.finish()).toString('base64');
}

/** Decodes a `pk` member; any malformed input is a SyncProtocolError('bad_body'). */
export function decodePrimaryKey(base64: string): SyncedPrimaryKey {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(base64) || base64 === '') bad('primary key is not base64');
  const r = new Reader(new Uint8Array(Buffer.from(base64, 'base64')));
  let key: SyncedPrimaryKey;
  try {
    const code = r.int('int64');
    switch (code) {
      case payloadTypeCodes.Null:
        key = { type: 'Null' };
        break;
      case payloadTypeCodes.Int:
        key = { type: 'Int', value: r.int('int64') };
        break;
      case payloadTypeCodes.String: {
        const size = r.smallUint('uint64');
        key = { type: 'String', value: fromUtf8(r.take(size), 'bad_body', 'primary key string') };
        break;
      }
      case payloadTypeCodes.ObjectId:
        key = { type: 'ObjectId', value: toHex(r.take(12)) };
        break;
      case payloadTypeCodes.UUID:
        key = { type: 'UUID', value: toHex(r.take(16)) };
        break;
      default:
        return bad(`primary key has unsupported payload type ${String(code)}`);
    }
  } catch (err) {
    if (err instanceof SyncProtocolError) bad(`primary key does not decode: ${err.message}`);
    throw err;
  }
  if (!r.done) bad('primary key has trailing bytes');
  return key;
}

function uuidText(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A primary key as the server's messages print it: `ObjectID("…")`, `UUID(…)`, `123`, `"text"`. */
export function formatPrimaryKeyForMessage(key: SyncedPrimaryKey): string {
  switch (key.type) {
    case 'Null':
      return 'null';
    case 'Int':
      return String(key.value);
    case 'String':
      return `"${key.value}"`;
    case 'ObjectId':
      return `ObjectID("${key.value}")`;
    case 'UUID':
      return `UUID(${uuidText(key.value)})`;
  }
}

/** Why a write was refused; the wording follows the server messages realm-core's tests expect. */
export type RefusalCause = 'permission' | 'outside_view';

export function refusedWriteReason(table: string, key: SyncedPrimaryKey, cause: RefusalCause): string {
  const base = `write to ${formatPrimaryKeyForMessage(key)} in table "${table}" not allowed`;
  return cause === 'outside_view' ? `${base}; object is outside of the current query view` : base;
}

export function toWireRejectedUpdate(update: RejectedUpdate): RejectedUpdateWire {
  return { table: update.table, pk: encodePrimaryKey(update.primaryKey), reason: update.reason };
}

/** Reads `rejectedUpdates` as a client would, refusing what would make realm-core fail or abort. */
export function parseRejectedUpdates(value: unknown): RejectedUpdate[] {
  if (!Array.isArray(value)) bad('json_error body: rejectedUpdates must be an array');
  return value.map((item: unknown, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) bad(`json_error body: rejectedUpdates[${i}] must be an object`);
    const o = item as Record<string, unknown>;
    if (typeof o['table'] !== 'string' || typeof o['reason'] !== 'string' || typeof o['pk'] !== 'string') {
      bad(`json_error body: rejectedUpdates[${i}] needs string table, pk and reason`);
    }
    return { table: o['table'], primaryKey: decodePrimaryKey(o['pk']), reason: o['reason'] };
  });
}
