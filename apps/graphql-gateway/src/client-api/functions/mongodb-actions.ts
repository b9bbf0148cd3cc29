import { Double, Int32, Long } from 'bson';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';

/** The actions of the data-source service the client API forwards (reference §1.2, §2.1). */
export const DATA_SOURCE_ACTIONS: ReadonlySet<string> = new Set([
  'find',
  'findOne',
  'count',
  'aggregate',
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'watch',
]);

const numericOptions = ['limit', 'skip'] as const;

/**
 * The one arguments object of a data-source call, with numbers as JS numbers and the action
 * corrected: realm-web 2.0.1 sends findOneAndDelete as `findOneAndReplace` without `update`.
 */
export function normalizeDataSourceCall(action: string, args: readonly unknown[]): { action: string; args: Record<string, unknown> } {
  if (!DATA_SOURCE_ACTIONS.has(action)) throw new ClientApiError(ClientApiErrorCode.ServiceCommandNotFound, `function not found: '${action}'`);
  const first = args[0];
  if (args.length !== 1 || typeof first !== 'object' || first === null || Array.isArray(first)) {
    throw new ClientApiError(ClientApiErrorCode.InvalidParameter, `${action} takes one arguments object`);
  }
  // Numbers as JS numbers (Int64 beyond 2^53 stays a Long), as the drivers hand them to MongoDB: rules
  // and pipelines compare them with stored values. What the call stores keeps each number's BSON type.
  const object: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(first)) setField(object, key, STORED_ARGUMENTS.has(key) ? withTypedNumbers(value) : withJsNumbers(value));
  for (const name of ['database', 'collection'] as const) {
    if (typeof object[name] !== 'string' || object[name] === '') throw new ClientApiError(ClientApiErrorCode.InvalidParameter, `'${name}' must be a non-empty string`);
  }
  for (const name of numericOptions) if (object[name] !== undefined) object[name] = toNumber(object[name], name);
  if (object['sort'] !== undefined) object['sort'] = numbersIn(object['sort'], 'sort');
  for (const name of ['project', 'projection'] as const) if (object[name] !== undefined) object[name] = numbersIn(object[name], name);
  const corrected = action === 'findOneAndReplace' && object['update'] === undefined ? 'findOneAndDelete' : action;
  return { action: corrected, args: object };
}

/** A result with the integer widths realm-core asserts on (R9): Int32 counts of writes, Int64 `count`. */
export function withWireWidths(action: string, result: unknown): unknown {
  if (typeof result === 'number' && action === 'count') return Long.fromNumber(result);
  if (typeof result !== 'object' || result === null || Array.isArray(result) || '_bsontype' in result) return result;
  const record = { ...(result as Record<string, unknown>) };
  for (const name of ['deletedCount', 'matchedCount', 'modifiedCount']) {
    const value = record[name];
    if (typeof value === 'number') record[name] = new Int32(value);
  }
  if (action === 'updateOne' || action === 'updateMany') {
    delete record['upsertedCount'];
    if (record['upsertedId'] === undefined || record['upsertedId'] === null) delete record['upsertedId'];
  }
  if (action === 'insertMany') delete record['insertedCount'];
  return record;
}

function toNumber(value: unknown, name: string): number {
  if (typeof value === 'number') return value;
  if (value instanceof Int32) return value.value;
  if (value instanceof Long) return value.toNumber();
  if (typeof value === 'object' && value !== null && 'valueOf' in value && typeof (value as { _bsontype?: unknown })._bsontype === 'string') {
    const number = Number((value as { valueOf(): unknown }).valueOf());
    if (Number.isFinite(number)) return number;
  }
  throw new ClientApiError(ClientApiErrorCode.InvalidParameter, `'${name}' must be a number`);
}

function numbersIn(spec: unknown, name: string): Record<string, unknown> {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, `'${name}' must be a document`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(spec)) {
    out[key] = typeof value === 'object' && value !== null && typeof (value as { _bsontype?: unknown })._bsontype === 'string' && ['Int32', 'Long', 'Double'].includes(String((value as { _bsontype: string })._bsontype)) ? toNumber(value, name) : value;
  }
  return out;
}

/** Sets a field as an own property (a `__proto__` key would otherwise replace the object's prototype). */
function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The arguments whose values are stored: their numbers keep their BSON types (see withTypedNumbers). */
const STORED_ARGUMENTS: ReadonlySet<string> = new Set(['document', 'documents', 'update', 'replacement']);

/**
 * A copy of `value` in the datastore's stored form: Int32 as a JS number, a Double as a JS number unless
 * it holds an integer in int32 range (a number would be written back as an int), every Int64 as a Long.
 */
function withTypedNumbers(value: unknown): unknown {
  if (value instanceof Int32) return value.value;
  if (value instanceof Double) return Number.isInteger(value.value) && value.value >= -0x80000000 && value.value <= 0x7fffffff && !Object.is(value.value, -0) ? value : value.value;
  if (value instanceof Long) return value;
  if (Array.isArray(value)) return value.map(withTypedNumbers);
  if (typeof value !== 'object' || value === null || value instanceof Date || '_bsontype' in value) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setField(out, key, withTypedNumbers(item));
  return out;
}

/**
 * A copy of `value` with Int32 and Double as JS numbers, and Int64 too when it fits a double exactly (a
 * larger one stays a Long: a relaxed EJSON round trip would round it). Other BSON values are kept.
 */
function withJsNumbers(value: unknown): unknown {
  if (value instanceof Int32 || value instanceof Double) return value.valueOf();
  if (value instanceof Long) return value.lessThanOrEqual(Number.MAX_SAFE_INTEGER) && value.greaterThanOrEqual(Number.MIN_SAFE_INTEGER) ? value.toNumber() : value;
  if (Array.isArray(value)) return value.map(withJsNumbers);
  if (typeof value !== 'object' || value === null || value instanceof Date || '_bsontype' in value) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setField(out, key, withJsNumbers(item));
  return out;
}
