/**
 * A Data API request body turned into the data-source call remote data access makes (the same action
 * names and arguments object `functions/call` with `service` hands to libs/data-access), and the call's
 * result turned into the Data API's response body. Pure: no HTTP, no store.
 */
import { Int32, Long, ObjectId } from 'bson';
import { DataApiError, DataApiErrorCode } from './data-api.error';

export const DATA_API_ACTIONS = ['findOne', 'find', 'insertOne', 'insertMany', 'updateOne', 'updateMany', 'replaceOne', 'deleteOne', 'deleteMany', 'aggregate'] as const;
export type DataApiAction = (typeof DATA_API_ACTIONS)[number];

export function isDataApiAction(name: string): name is DataApiAction {
  return (DATA_API_ACTIONS as readonly string[]).includes(name);
}

/** `find` without a `limit` returns at most this many documents, and no `limit` may exceed the maximum. */
export const DEFAULT_FIND_LIMIT = 1000;
export const MAX_FIND_LIMIT = 50_000;

/** The data-source call of a Data API request: remote data access's action name and arguments object. */
export interface DataSourceCall {
  dataSource: string;
  action: string;
  args: Record<string, unknown>;
}

/** Actions whose `filter` must be given (`{}` to match everything), so a forgotten filter never deletes all. */
const filterRequired = new Set<DataApiAction>(['updateOne', 'updateMany', 'replaceOne', 'deleteOne', 'deleteMany']);

export function toDataSourceCall(action: DataApiAction, body: Record<string, unknown>): DataSourceCall {
  const dataSource = requiredString(body, 'dataSource');
  const base = { database: requiredString(body, 'database'), collection: requiredString(body, 'collection') };
  if (filterRequired.has(action) && body['filter'] === undefined) throw invalid(`'filter' is required for ${action}`);
  const filter = optionalDocument(body, 'filter');
  const query = filter === undefined ? {} : { query: filter };
  switch (action) {
    case 'findOne':
      return { dataSource, action, args: { ...base, ...query, ...optional(body, 'projection', optionalDocument), ...optional(body, 'sort', optionalDocument) } };
    case 'find': {
      const limit = optionalCount(body, 'limit') ?? DEFAULT_FIND_LIMIT;
      if (limit > MAX_FIND_LIMIT) throw invalid(`'limit' must not exceed ${MAX_FIND_LIMIT}`);
      return { dataSource, action, args: { ...base, ...query, ...optional(body, 'projection', optionalDocument), ...optional(body, 'sort', optionalDocument), ...optional(body, 'skip', optionalCount), limit: limit === 0 ? DEFAULT_FIND_LIMIT : limit } };
    }
    case 'insertOne':
      return { dataSource, action, args: { ...base, document: requiredDocument(body, 'document') } };
    case 'insertMany': {
      const documents = body['documents'];
      if (!Array.isArray(documents) || documents.length === 0) throw invalid("'documents' must be a non-empty array of documents");
      documents.forEach((document, index) => {
        if (!isDocument(document)) throw invalid(`'documents[${index}]' must be a document`);
      });
      return { dataSource, action, args: { ...base, documents } };
    }
    case 'updateOne':
    case 'updateMany': {
      const update = body['update'];
      if (!isDocument(update) && !Array.isArray(update)) throw invalid("'update' must be a document or a pipeline");
      return { dataSource, action, args: { ...base, ...query, update, upsert: optionalBoolean(body, 'upsert') } };
    }
    case 'replaceOne':
      // Remote data access replaces through findOneAndReplace (its `update` is the replacement).
      return { dataSource, action: 'findOneAndReplace', args: { ...base, filter: filter ?? {}, update: requiredDocument(body, 'replacement'), upsert: optionalBoolean(body, 'upsert'), returnNewDocument: false } };
    case 'deleteOne':
    case 'deleteMany':
      return { dataSource, action, args: { ...base, ...query } };
    case 'aggregate': {
      const pipeline = body['pipeline'];
      if (!Array.isArray(pipeline) || !pipeline.every(isDocument)) throw invalid("'pipeline' must be an array of stages");
      return { dataSource, action, args: { ...base, pipeline } };
    }
  }
}

/**
 * A replaceOne that may upsert needs the new document's `_id` to report it: the filter's `_id` when it names
 * one value, else one chosen here, given to the replacement (a matched document keeps its own `_id`).
 */
export function withUpsertId(call: DataSourceCall): { call: DataSourceCall; upsertId?: unknown } {
  if (call.action !== 'findOneAndReplace' || call.args['upsert'] !== true) return { call };
  const replacement = call.args['update'] as Record<string, unknown>;
  if (replacement['_id'] !== undefined) return { call, upsertId: replacement['_id'] };
  const filterId = (call.args['filter'] as Record<string, unknown>)['_id'];
  if (filterId !== undefined && !(isDocument(filterId) && Object.keys(filterId).some((key) => key.startsWith('$')))) return { call, upsertId: filterId };
  const upsertId = new ObjectId();
  return { call: { ...call, args: { ...call.args, update: { _id: upsertId, ...replacement } } }, upsertId };
}

/** The Data API's response body for a call's result, and its status (201 for inserts). */
export function toDataApiResponse(action: DataApiAction, result: unknown, upsertId?: unknown): { status: number; body: Record<string, unknown> } {
  switch (action) {
    case 'findOne':
      return { status: 200, body: { document: result ?? null } };
    case 'find':
    case 'aggregate':
      return { status: 200, body: { documents: result } };
    case 'insertOne':
      return { status: 201, body: { insertedId: (result as { insertedId: unknown }).insertedId } };
    case 'insertMany':
      return { status: 201, body: { insertedIds: (result as { insertedIds: unknown }).insertedIds } };
    case 'updateOne':
    case 'updateMany': {
      const { matchedCount, modifiedCount, upsertedId } = result as { matchedCount: unknown; modifiedCount: unknown; upsertedId?: unknown };
      return { status: 200, body: { matchedCount: int(matchedCount), modifiedCount: int(modifiedCount), ...(upsertedId === undefined || upsertedId === null ? {} : { upsertedId }) } };
    }
    case 'replaceOne': {
      // findOneAndReplace gave the matched document before the change (null when none matched).
      const matched = result !== null && result !== undefined ? 1 : 0;
      return { status: 200, body: { matchedCount: new Int32(matched), modifiedCount: new Int32(matched), ...(matched === 0 && upsertId !== undefined ? { upsertedId: upsertId } : {}) } };
    }
    case 'deleteOne':
    case 'deleteMany':
      return { status: 200, body: { deletedCount: int((result as { deletedCount: unknown }).deletedCount) } };
  }
}

function int(value: unknown): Int32 {
  return value instanceof Int32 ? value : new Int32(Number(value));
}

function invalid(message: string): DataApiError {
  return new DataApiError(DataApiErrorCode.InvalidParameter, message);
}

function isDocument(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !('_bsontype' in value) && !(value instanceof Date);
}

function requiredString(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw invalid(`'${name}' must be a non-empty string`);
  return value;
}

function requiredDocument(body: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = body[name];
  if (!isDocument(value)) throw invalid(`'${name}' must be a document`);
  return value;
}

function optionalDocument(body: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!isDocument(value)) throw invalid(`'${name}' must be a document`);
  return value;
}

function optionalBoolean(body: Record<string, unknown>, name: string): boolean {
  const value = body[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`'${name}' must be a boolean`);
  return value;
}

/** A non-negative integer option; EJSON numbers (Int32, Long, Double) count as numbers. */
function optionalCount(body: Record<string, unknown>, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  const number = typeof value === 'number' ? value : value instanceof Long ? value.toNumber() : typeof value === 'object' && '_bsontype' in value ? Number((value as { valueOf(): unknown }).valueOf()) : NaN;
  if (!Number.isInteger(number) || number < 0) throw invalid(`'${name}' must be a non-negative integer`);
  return number;
}

function optional<T>(body: Record<string, unknown>, name: string, read: (body: Record<string, unknown>, name: string) => T | undefined): Record<string, T> {
  const value = read(body, name);
  return value === undefined ? {} : { [name]: value };
}
