/**
 * Small in-memory implementations of the runtime's ports, for tests, benches and running the runtime before
 * the real datastore is wired. InMemoryDataAccess is deliberately minimal: top-level equality queries,
 * no rules; it records every call so tests can see who an operation ran as.
 */
import type { CallerUser } from '@tessera/contracts';
import { EJSON, ObjectId } from 'bson';
import type { FunctionConfig } from '../config/function-config';
import type { AppFunctions, AppFunctionsPort, DeployedFunction } from '../ports/app-functions.port';
import type { DataAccessCall, DataAccessPort, DataSessionPort } from '../ports/data-access.port';
import type { UsersPort } from '../ports/identity';
import type { AppValues, ValuesPort } from '../ports/values.port';

export class InMemoryAppFunctions implements AppFunctionsPort {
  private readonly apps = new Map<string, AppFunctions>();
  private deploys = 0;

  /** Replaces the app's functions (a deploy): name -> source, or name -> { source, config }. */
  deploy(appId: string, functions: Record<string, string | { source: string; config?: Partial<FunctionConfig> }>): string {
    const map = new Map<string, DeployedFunction>();
    for (const [name, spec] of Object.entries(functions)) {
      const source = typeof spec === 'string' ? spec : spec.source;
      const config = typeof spec === 'string' ? {} : (spec.config ?? {});
      map.set(name, { source, config: { ...config, name } });
    }
    const version = `v${++this.deploys}`;
    this.apps.set(appId, { version, functions: map });
    return version;
  }

  getFunctions(appId: string): Promise<AppFunctions | null> {
    return Promise.resolve(this.apps.get(appId) ?? null);
  }
}

export class InMemoryValues implements ValuesPort {
  private readonly apps = new Map<string, AppValues>();

  set(appId: string, values: AppValues): void {
    this.apps.set(appId, values);
  }

  getValues(appId: string): Promise<AppValues> {
    return Promise.resolve(this.apps.get(appId) ?? { values: {}, environment: { tag: '', values: {} } });
  }
}

export class InMemoryUsers implements UsersPort {
  private readonly users = new Map<string, CallerUser>();

  add(user: CallerUser): void {
    this.users.set(user.id, user);
  }

  findUser(_appId: string, userId: string): Promise<CallerUser | null> {
    return Promise.resolve(this.users.get(userId) ?? null);
  }
}

type Doc = Record<string, unknown>;

export class InMemoryDataAccess implements DataAccessPort {
  readonly calls: DataAccessCall[] = [];
  private readonly collections = new Map<string, Doc[]>();

  constructor(private readonly knownServices: string[] = ['mongodb-atlas']) {}

  /**
   * Failures the next operations or commits inside a session's transaction answer with (a MongoDB driver's
   * labelled errors, such as TransientTransactionError), in order; each is used once.
   */
  readonly transactionFailures: Array<{ at: 'operation' | 'commit'; labels: string[] }> = [];
  /** What sessions did, in order: `begin`, `commit`, `abort`, `end` and the actions of their operations. */
  readonly sessionLog: string[] = [];

  seed(database: string, collection: string, docs: Doc[]): void {
    this.collection(database, collection).push(...docs);
  }

  /** A session whose operations run at once (no isolation): for the runtime's session plumbing and retries. */
  startSession(): Promise<DataSessionPort> {
    const fail = (at: 'operation' | 'commit'): void => {
      const next = this.transactionFailures[0];
      if (next?.at !== at) return;
      this.transactionFailures.shift();
      throw Object.assign(new Error(`injected ${next.labels.join(', ')}`), { errorLabels: next.labels });
    };
    return Promise.resolve({
      execute: async (call, begin) => {
        if (begin) this.sessionLog.push('begin');
        this.sessionLog.push(call.action);
        fail('operation');
        return this.execute(call);
      },
      commitTransaction: () => {
        this.sessionLog.push('commit');
        fail('commit');
        return Promise.resolve();
      },
      abortTransaction: () => {
        this.sessionLog.push('abort');
        return Promise.resolve();
      },
      end: () => {
        this.sessionLog.push('end');
        return Promise.resolve();
      },
    });
  }

  execute(call: DataAccessCall): Promise<unknown> {
    this.calls.push(call);
    if (!this.knownServices.includes(call.service)) return Promise.reject(new Error(`service not found: '${call.service}'`));
    try {
      return Promise.resolve(this.run(call));
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private run(call: DataAccessCall): unknown {
    if (call.action === 'getDBNames') return [...new Set([...this.collections.keys()].map((key) => key.split('/')[0]))];
    const db = call.database ?? '';
    if (call.action === 'getCollectionNames') {
      return [...this.collections.keys()].filter((key) => key.startsWith(`${db}/`)).map((key) => key.slice(db.length + 1));
    }
    const docs = this.collection(db, call.collection ?? '');
    const args = (call.arguments[0] ?? {}) as Doc;
    const query = (args['query'] ?? args['filter'] ?? {}) as Doc;
    switch (call.action) {
      case 'insertOne': {
        const doc = { _id: new ObjectId(), ...(args['document'] as Doc) };
        docs.push(doc);
        return { insertedId: doc['_id'] };
      }
      case 'insertMany': {
        const inserted = (args['documents'] as Doc[]).map((d) => ({ _id: new ObjectId(), ...d }));
        docs.push(...inserted);
        return { insertedIds: inserted.map((d) => d['_id']) };
      }
      case 'find': {
        let found = docs.filter((d) => matches(d, query));
        const sort = args['sort'] as Record<string, number> | undefined;
        if (sort) {
          const [[field, dir]] = Object.entries(sort);
          found = [...found].sort((a, b) => (a[field] === b[field] ? 0 : (a[field] as number) < (b[field] as number) ? -dir : dir));
        }
        const skip = Number(args['skip'] ?? 0);
        const limit = args['limit'] === undefined ? found.length : Number(args['limit']);
        return found.slice(skip, skip + limit);
      }
      case 'findOne':
        return docs.find((d) => matches(d, query)) ?? null;
      case 'count':
        return docs.filter((d) => matches(d, query)).length;
      case 'deleteMany': {
        const keep = docs.filter((d) => !matches(d, query));
        const deletedCount = docs.length - keep.length;
        docs.splice(0, docs.length, ...keep);
        return { deletedCount };
      }
      case 'aggregate': {
        let out = [...docs];
        for (const stage of args['pipeline'] as Doc[]) {
          if ('$match' in stage) out = out.filter((d) => matches(d, stage['$match'] as Doc));
          else if ('$skip' in stage) out = out.slice(Number(stage['$skip']));
          else if ('$limit' in stage) out = out.slice(0, Number(stage['$limit']));
          else throw new Error(`unsupported stage in the in-memory store: ${Object.keys(stage)[0]}`);
        }
        return out;
      }
      default:
        throw new Error(`unsupported action in the in-memory store: ${call.action}`);
    }
  }

  private collection(database: string, collection: string): Doc[] {
    const key = `${database}/${collection}`;
    let docs = this.collections.get(key);
    if (!docs) {
      docs = [];
      this.collections.set(key, docs);
    }
    return docs;
  }
}

function matches(doc: Doc, query: Doc): boolean {
  return Object.entries(query).every(([key, value]) => EJSON.stringify(doc[key] ?? null) === EJSON.stringify(value ?? null));
}
