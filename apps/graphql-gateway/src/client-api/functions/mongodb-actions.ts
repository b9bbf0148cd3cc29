import { dataSourceArgumentNumbers } from '@tessera/messaging';
import { Int32, Long } from 'bson';
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
  const object = dataSourceArgumentNumbers(first as Record<string, unknown>);
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

