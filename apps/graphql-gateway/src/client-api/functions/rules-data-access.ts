import { DataAccess } from '@tessera/data-access';
import type { ChangeEvent, Document } from '@tessera/datastore';
import type { DataSources } from '@tessera/platform';
import { type DataAccessApp, type DataAccessUser, RemoteDataAccess } from './remote-data-access.port';

/**
 * The production RemoteDataAccess: every action goes through libs/data-access as the calling user, so the
 * app's rules decide. `watch` opens the change feed of the collection (narrowed to `ids` or `filter`) and
 * lets an insert, update or replace event through only when the user may read the document now: its
 * `fullDocument` is what a findOne by `_id` as that user returns (withheld fields removed). Delete events
 * carry only the key.
 */
export class RulesRemoteDataAccess extends RemoteDataAccess {
  constructor(
    private readonly dataSources: DataSources,
    private readonly dataAccess: DataAccess = new DataAccess(dataSources),
  ) {
    super();
  }

  execute(app: DataAccessApp, serviceName: string, action: string, args: Record<string, unknown>, user: DataAccessUser): Promise<unknown> {
    if (action === 'watch') return Promise.resolve(this.watch(app, serviceName, args, user));
    return this.asUser(app, serviceName, action, args, user);
  }

  private asUser(app: DataAccessApp, service: string, action: string, args: Record<string, unknown>, user: DataAccessUser): Promise<unknown> {
    return this.dataAccess.execute({
      app: { id: app.appId, deploymentId: app.deploymentId, config: app.config },
      service,
      action,
      args: args,
      caller: { kind: 'user', user },
    });
  }

  private watch(app: DataAccessApp, service: string, args: Record<string, unknown>, user: DataAccessUser): AsyncIterable<ChangeEvent> {
    const ids = Array.isArray(args['ids']) ? (args['ids'] as unknown[]) : undefined;
    const filter = typeof args['filter'] === 'object' && args['filter'] !== null ? (args['filter'] as Document) : undefined;
    const pipeline: Document[] = ids ? [{ $match: { 'documentKey._id': { $in: ids } } }] : filter ? [{ $match: filter }] : [];
    const database = String(args['database']);
    const collection = String(args['collection']);
    const stream = this.dataSources.forService(app.config, service).client.db(database).collection(collection).watch(pipeline);
    const visible = async (event: ChangeEvent): Promise<ChangeEvent | undefined> => {
      if (event.operationType === 'delete') return { ...event, fullDocument: undefined, fullDocumentBeforeChange: undefined };
      if (event.operationType !== 'insert' && event.operationType !== 'update' && event.operationType !== 'replace') return undefined;
      const readable = (await this.asUser(app, service, 'findOne', { database, collection, query: { _id: event.documentKey?._id } }, user)) as Document | null;
      return readable ? { ...event, fullDocument: readable, fullDocumentBeforeChange: undefined } : undefined;
    };
    return {
      [Symbol.asyncIterator]: () => ({
        async next(): Promise<IteratorResult<ChangeEvent>> {
          for (;;) {
            const shown = await visible(await stream.next());
            if (shown) return { done: false, value: shown };
          }
        },
        async return(): Promise<IteratorResult<ChangeEvent>> {
          await stream.close();
          return { done: true, value: undefined };
        },
      }),
    };
  }
}
