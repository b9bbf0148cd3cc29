/** context.services.get(name): the data-access API (spec 4.4); every operation runs on the host, under rules. */
import { type Call, type Frame, type HostOp, withoutUndefined as clean } from './host-op';

type Run = (action: string, args: Record<string, unknown>) => Promise<unknown>;
type RunIn = (database: string | undefined, collection: string | undefined, action: string, args: Record<string, unknown>, session?: SessionRef) => Promise<unknown>;
/** What an operation tells the host of its session: the number, its service, and whether it opens the transaction. */
interface SessionRef {
  id: number;
  service: string;
  begin: boolean;
}
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
  // `{ session }` in an operation's options (a cursor's too) runs it in that session: taken out of the arguments here.
  const run: Run = (action, args) => {
    if (!('session' in args)) return runIn(database, name, action, args);
    const { session, ...rest } = args;
    return session === undefined || session === null ? runIn(database, name, action, rest) : runIn(database, name, action, rest, sessionRef(session));
  };
  return Object.freeze({
    get name() {
      return name;
    },
    find: (query: unknown, projection?: unknown, options?: Options) => makeCursor(run, 'find', clean(Object.assign({}, options, { query: query || {}, project: projection }))),
    findOne: (query: unknown, projection?: unknown, options?: Options) => run('findOne', clean(Object.assign({}, options, { query: query || {}, project: projection }))),
    findOneAndUpdate: (filter: unknown, update: unknown, options?: Options) => run('findOneAndUpdate', clean(Object.assign({}, options, { filter, update }))),
    findOneAndReplace: (filter: unknown, replacement: unknown, options?: Options) => run('findOneAndReplace', clean(Object.assign({}, options, { filter, update: replacement }))),
    findOneAndDelete: (filter: unknown, options?: Options) => run('findOneAndDelete', clean(Object.assign({}, options, { filter }))),
    insertOne: (document: unknown, options?: Options) => run('insertOne', clean(Object.assign({}, options, { document }))),
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

// ---------------------------------------------------------------- sessions and transactions

type TransactionState = 'none' | 'pending' | 'open';

interface SessionState {
  id: number;
  service: string;
  transaction: TransactionState;
  /** The host has seen an operation of this session (and so holds it open). */
  known: boolean;
  ended: boolean;
  end: (op: string) => Promise<unknown>;
  /** Every session of the same call (nested calls included). */
  siblings: Set<SessionState>;
}

const sessions = new WeakMap<object, SessionState>();
const sessionsOfCall = new WeakMap<Call, Set<SessionState>>();
/** How long a function's withTransaction keeps retrying (MongoDB's drivers: 120 s). */
const WITH_TRANSACTION_LIMIT_MS = 120_000;

function hasLabel(error: unknown, label: string): boolean {
  const labels = typeof error === 'object' && error !== null ? (error as { errorLabels?: unknown }).errorLabels : undefined;
  return Array.isArray(labels) && labels.includes(label);
}
let sessionSeq = 0;

function sessionRef(value: unknown): SessionRef {
  const state = typeof value === 'object' && value !== null ? sessions.get(value) : undefined;
  if (!state) throw new TypeError('options.session must be a session from startSession()');
  if (state.ended) throw new Error('Cannot use a session that has ended');
  const begin = state.transaction === 'pending';
  // Refused, the transaction stays pending: the session's next operation starts it once the other has ended.
  if (begin) {
    // The embedded datastore writes one transaction at a time: a second transaction of the same call on the
    // same service would wait for the first, which waits for the function, until the transaction limit.
    for (const other of state.siblings) {
      if (other !== state && other.service === state.service && other.transaction === 'open') {
        throw new Error(`another transaction of this call is open on service "${state.service}": commit or abort it before starting this one`);
      }
    }
    state.transaction = 'open';
  }
  state.known = true;
  return { id: state.id, service: state.service, begin };
}

/**
 * `client.startSession()`: a session whose transactions the function opens and closes, as MongoDB's driver
 * offers them. The transaction starts on the host with its first operation (one that names no operation
 * commits nothing); the host ends whatever the call leaves open when the call ends.
 */
function startSession(hostOp: HostOp, call: Call, frame: Frame, service: string) {
  let siblings = sessionsOfCall.get(call);
  if (!siblings) sessionsOfCall.set(call, (siblings = new Set()));
  const state: SessionState = {
    id: ++sessionSeq,
    service,
    transaction: 'none',
    known: false,
    ended: false,
    end: (op) => hostOp(call, frame.id, op, { id: state.id }),
    siblings,
  };
  siblings.add(state);
  const usable = (): void => {
    if (state.ended) throw new Error('Cannot use a session that has ended');
  };
  const session = {
    get hasEnded() {
      return state.ended;
    },
    inTransaction: () => state.transaction !== 'none',
    startTransaction(): void {
      usable();
      if (state.transaction !== 'none') throw new Error('Transaction already in progress');
      state.transaction = 'pending';
    },
    async commitTransaction(): Promise<void> {
      usable();
      const was = state.transaction;
      if (was === 'none') throw new Error('No transaction started');
      state.transaction = 'none';
      if (was === 'open') await state.end('session.commit');
    },
    async abortTransaction(): Promise<void> {
      // Lenient as App Services' own examples need: they abort in a catch after withTransaction already did.
      const was = state.transaction;
      state.transaction = 'none';
      if (was === 'open' && !state.ended) await state.end('session.abort');
    },
    /**
     * Runs `fn` in a transaction and commits it, as MongoDB's drivers do: a failure labelled
     * TransientTransactionError (a write conflict with another transaction) runs it all again, and a commit
     * labelled UnknownTransactionCommitResult is tried again, for up to 120 s; any other failure aborts and throws.
     */
    async withTransaction(fn: unknown): Promise<unknown> {
      if (typeof fn !== 'function') throw new TypeError('withTransaction expects a function');
      const started = Date.now();
      const within = (): boolean => Date.now() - started < WITH_TRANSACTION_LIMIT_MS;
      for (;;) {
        session.startTransaction();
        let result: unknown;
        try {
          result = await (fn as (s: unknown) => unknown)(session);
        } catch (error) {
          await session.abortTransaction();
          if (hasLabel(error, 'TransientTransactionError') && within()) continue;
          throw error;
        }
        for (;;) {
          try {
            await session.commitTransaction();
            return result;
          } catch (error) {
            if (hasLabel(error, 'UnknownTransactionCommitResult') && within()) {
              state.transaction = 'open';
              continue;
            }
            if (hasLabel(error, 'TransientTransactionError') && within()) break;
            throw error;
          }
        }
      }
    },
    async endSession(): Promise<void> {
      if (state.ended) return;
      state.ended = true;
      state.transaction = 'none';
      if (state.known) await state.end('session.end');
    },
  };
  sessions.set(session, state);
  return Object.freeze(session);
}

/** The actions of an HTTP service (get, post, put, patch, delete, head), made on first use. */
type HttpActions = () => Readonly<Record<string, (...args: never[]) => Promise<unknown>>>;

/**
 * `context.services.get(name)`: a data source's client (db, admin, startSession) and, for Stitch's HTTP
 * services, the HTTP actions; the host answers an action the service does not have with an error.
 */
export function serviceClient(hostOp: HostOp, call: Call, frame: Frame, service: string, httpActions: HttpActions) {
  const runIn: RunIn = (database, collection, action, args, session) => hostOp(call, frame.id, 'data', clean({ service, database, collection, action, arguments: [args], session }));
  const http = (method: string) => (options?: unknown) => (httpActions()[method] as (options?: unknown) => Promise<unknown>)(options);
  return Object.freeze({
    get: http('get'),
    post: http('post'),
    put: http('put'),
    patch: http('patch'),
    delete: http('delete'),
    head: http('head'),
    startSession: () => startSession(hostOp, call, frame, service),
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
