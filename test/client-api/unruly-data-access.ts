import type { ChangeEvent, CollectionHandle, Document } from '@tessera/datastore';
import { type DataAccessApp, type DataAccessUser, RemoteDataAccess } from '@tessera/graphql-gateway';
import type { DataSources } from '@tessera/platform';

/**
 * TESTS ONLY: runs data-source actions on the datastore directly, WITHOUT any rules. It exists to drive
 * the client API's wire contract (argument shapes, results, integer widths, the watch stream) until the
 * rules-enforcing data access is plugged in. Never wire it into a host.
 */
export class UnrulyDataAccessForTests extends RemoteDataAccess {
  readonly calls: Array<{ action: string; args: Record<string, unknown>; user: DataAccessUser }> = [];

  constructor(private readonly dataSources: DataSources) {
    super();
  }

  async execute(app: DataAccessApp, serviceName: string, action: string, args: Record<string, unknown>, user: DataAccessUser): Promise<unknown> {
    this.calls.push({ action, args, user });
    const collection = this.dataSources.forService(app.config, serviceName).client.db(String(args['database'])).collection(String(args['collection']));
    const doc = (name: string): Document => (args[name] as Document | undefined) ?? {};
    const modify = { ...(args['upsert'] !== undefined ? { upsert: Boolean(args['upsert']) } : {}), ...(args['returnNewDocument'] !== undefined ? { returnNewDocument: Boolean(args['returnNewDocument']) } : {}), ...(args['sort'] ? { sort: args['sort'] as Record<string, 1 | -1> } : {}), ...(args['projection'] ? { projection: doc('projection') } : {}) };
    switch (action) {
      case 'find': {
        const cursor = collection.find(doc('query'), args['project'] as Document | undefined);
        if (args['sort']) cursor.sort(args['sort'] as Record<string, 1 | -1>);
        if (typeof args['limit'] === 'number') cursor.limit(args['limit']);
        return cursor.toArray();
      }
      case 'findOne':
        return collection.findOne(doc('query'), args['project'] as Document | undefined, args['sort'] ? { sort: args['sort'] as Record<string, 1 | -1> } : {});
      case 'count':
        return collection.count(doc('query'), typeof args['limit'] === 'number' ? { limit: args['limit'] } : {});
      case 'aggregate':
        return collection.aggregate(args['pipeline'] as Document[]).toArray();
      case 'insertOne':
        return collection.insertOne(doc('document'));
      case 'insertMany':
        return collection.insertMany(args['documents'] as Document[]);
      case 'updateOne':
        return collection.updateOne(doc('query'), doc('update'), { upsert: Boolean(args['upsert']) });
      case 'updateMany':
        return collection.updateMany(doc('query'), doc('update'), { upsert: Boolean(args['upsert']) });
      case 'deleteOne':
        return collection.deleteOne(doc('query'));
      case 'deleteMany':
        return collection.deleteMany(doc('query'));
      case 'findOneAndUpdate':
        return collection.findOneAndUpdate(doc('filter'), doc('update'), modify);
      case 'findOneAndReplace':
        return collection.findOneAndReplace(doc('filter'), doc('update'), modify);
      case 'findOneAndDelete':
        return collection.findOneAndDelete(doc('filter'), { ...(args['sort'] ? { sort: args['sort'] as Record<string, 1 | -1> } : {}) });
      case 'watch':
        return watch(collection, args);
      default:
        throw new Error(`unsupported action ${action}`);
    }
  }
}

function watch(collection: CollectionHandle, args: Record<string, unknown>): AsyncIterable<ChangeEvent> {
  const ids = args['ids'] as unknown[] | undefined;
  const filter = args['filter'] as Document | undefined;
  const pipeline: Document[] = ids ? [{ $match: { 'documentKey._id': { $in: ids } } }] : filter ? [{ $match: filter }] : [];
  const stream = collection.watch(pipeline, { fullDocument: 'updateLookup' });
  return {
    [Symbol.asyncIterator]: () => ({
      next: async () => ({ done: false, value: await stream.next() }),
      return: async () => {
        await stream.close();
        return { done: true, value: undefined };
      },
    }),
  };
}
