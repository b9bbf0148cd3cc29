/** context.services.get(name): the data-access API (spec 4.4); every operation runs on the host, under rules. */
import { type Call, type Frame, type HostOp, withoutUndefined as clean } from './host-op';

type Run = (action: string, args: Record<string, unknown>) => Promise<unknown>;
type RunIn = (database: string | undefined, collection: string | undefined, action: string, args: Record<string, unknown>) => Promise<unknown>;
type Options = Record<string, unknown> | undefined;

interface Cursor {
  skip(n: unknown): Cursor;
  limit?: (n: unknown) => Cursor;
  sort?: (spec: unknown) => Cursor;
  next(): Promise<unknown>;
  hasNext(): Promise<boolean>;
  toArray(): Promise<unknown[]>;
  toJSON(): never;
}

const cursors = new WeakSet<object>();

/** A cursor this module made: a function that returns one answers its documents (see the prelude's invoke). */
export function isCursor(value: unknown): value is Cursor {
  return typeof value === 'object' && value !== null && cursors.has(value);
}

function makeCursor(run: Run, kind: 'find' | 'aggregate', baseArgs: Record<string, unknown>): Cursor {
  const options: { skip?: number; limit?: number; sort?: unknown } = {};
  let buffer: unknown[] = [];
  let loading: Promise<void> | null = null;
  const guard = (method: string): void => {
    if (loading) throw new Error('cannot call ' + method + '() on a cursor after documents were retrieved from it');
  };
  const load = (): Promise<void> => {
    if (!loading) {
      let args: Record<string, unknown>;
      if (kind === 'aggregate') {
        const pipeline = (baseArgs['pipeline'] as unknown[]).slice();
        if (options.skip !== undefined) pipeline.push({ $skip: options.skip });
        args = clean(Object.assign({}, baseArgs, { pipeline }));
      } else args = clean(Object.assign({}, baseArgs, options));
      loading = run(kind, args).then((docs) => {
        buffer = Array.isArray(docs) ? (docs as unknown[]) : [];
      });
    }
    return loading;
  };
  const cursor: Cursor = {
    skip(n) {
      guard('skip');
      options.skip = Number(n);
      return cursor;
    },
    async next() {
      await load();
      return buffer.length > 0 ? buffer.shift() : null;
    },
    async hasNext() {
      await load();
      return buffer.length > 0;
    },
    async toArray() {
      await load();
      const docs = buffer;
      buffer = [];
      return docs;
    },
    // Returned itself, a cursor answers its documents; inside a result it cannot be written.
    toJSON() {
      throw new Error('a cursor cannot be returned inside a function result: call toArray() or next() and return the result');
    },
  };
  if (kind === 'find') {
    cursor.limit = (n) => {
      guard('limit');
      options.limit = Number(n);
      return cursor;
    };
    cursor.sort = (spec) => {
      guard('sort');
      options.sort = spec;
      return cursor;
    };
  }
  cursors.add(cursor);
  return Object.freeze(cursor);
}

function collectionHandle(runIn: RunIn, database: string, name: string) {
  const run: Run = (action, args) => runIn(database, name, action, args);
  return Object.freeze({
    get name() {
      return name;
    },
    find: (query: unknown, projection?: unknown, options?: Options) => makeCursor(run, 'find', clean(Object.assign({}, options, { query: query || {}, project: projection }))),
    findOne: (query: unknown, projection?: unknown, options?: Options) => run('findOne', clean(Object.assign({}, options, { query: query || {}, project: projection }))),
    findOneAndUpdate: (filter: unknown, update: unknown, options?: Options) => run('findOneAndUpdate', clean(Object.assign({}, options, { filter, update }))),
    findOneAndReplace: (filter: unknown, replacement: unknown, options?: Options) => run('findOneAndReplace', clean(Object.assign({}, options, { filter, update: replacement }))),
    findOneAndDelete: (filter: unknown, options?: Options) => run('findOneAndDelete', clean(Object.assign({}, options, { filter }))),
    insertOne: (document: unknown) => run('insertOne', { document }),
    insertMany: (documents: unknown, options?: Options) => run('insertMany', clean(Object.assign({}, options, { documents }))),
    updateOne: (query: unknown, update: unknown, options?: Options) => run('updateOne', clean(Object.assign({}, options, { query, update }))),
    updateMany: (query: unknown, update: unknown, options?: Options) => run('updateMany', clean(Object.assign({}, options, { query, update }))),
    deleteOne: (query: unknown, options?: Options) => run('deleteOne', clean(Object.assign({}, options, { query: query || {} }))),
    deleteMany: (query: unknown, options?: Options) => run('deleteMany', clean(Object.assign({}, options, { query: query || {} }))),
    aggregate: (pipeline: unknown, options?: Options) => {
      if (!Array.isArray(pipeline)) throw new TypeError('aggregate expects an array of pipeline stages');
      return makeCursor(run, 'aggregate', clean(Object.assign({}, options, { pipeline })));
    },
    count: (query: unknown, options?: Options) => run('count', clean(Object.assign({}, options, { query: query || {} }))),
    distinct: (field: unknown, query: unknown, options?: Options) => run('distinct', clean(Object.assign({}, options, { key: field, query: query || {} }))),
    bulkWrite: (operations: unknown, options?: Options) => run('bulkWrite', clean(Object.assign({}, options, { operations }))),
    watch: () => {
      throw new Error('watch() is not supported in functions by this runtime');
    },
  });
}

export function serviceClient(hostOp: HostOp, call: Call, frame: Frame, service: string) {
  const runIn: RunIn = (database, collection, action, args) => hostOp(call, frame.id, 'data', clean({ service, database, collection, action, arguments: [args] }));
  return Object.freeze({
    db(database: unknown) {
      const db = String(database);
      return Object.freeze({
        get name() {
          return db;
        },
        collection: (name: unknown) => collectionHandle(runIn, db, String(name)),
        getCollectionNames: () => runIn(db, undefined, 'getCollectionNames', {}),
      });
    },
    admin() {
      return Object.freeze({ getDBNames: () => runIn(undefined, undefined, 'getDBNames', {}) });
    },
  });
}
