/**
 * A user's change stream on one collection (realm-web's `collection.watch()`), under the same read rules
 * as `find`. The store streams every change of the collection with its images; nothing the user sent is
 * given to the store (a listener runs in the store's commit path: a bad filter there must never fail a
 * write). Each event then passes the rules as the user, and only then the user's filter:
 *
 * - insert, replace, update: shown only when the user may read the document after the change (an
 *   update only when it changed something the user may read);
 *   `fullDocument` is the visible document, `updatedFields` keeps only the paths visible in it (with
 *   their visible values, so withheld subfields of an embedded document are gone too), `removedFields`
 *   only the paths the user could read before the change, `fullDocumentBeforeChange` (when asked for) the
 *   visible pre-image.
 * - delete: shown only when the user could read the document before it went: decided on the pre-image,
 *   else on the last state this stream showed; without either it is not shown (its `_id` would leak).
 *
 * The filter is checked when the stream opens, as a query is: restricted selectors, unknown operators and
 * withheld fields are the caller's 400 before any event flows. This module must not know about HTTP.
 */
import { type ChangeEvent, type ChangeStream, compileDocumentFilter, type Document, idKey, type Matcher } from '@tessera/datastore';
import type { RulesAccess } from '@tessera/rules';
import { DataAccessError, DataAccessErrorCode } from './data-access.error';
import { queryPaths } from './field-references';
import { assertReadablePaths, assertUserQuery } from './restrictions';

export interface WatchArguments {
  /** A change-event filter (`{operationType: 'insert', 'fullDocument.a': 1}`). */
  filter?: unknown;
  /** Only these documents' changes. */
  ids?: unknown;
  /** `whenAvailable` or `required`: include the visible pre-image. */
  fullDocumentBeforeChange?: unknown;
}

/** Ids of documents this stream last showed as readable, bounded (oldest forgotten first). */
class LastKnown {
  private readonly visible = new Set<string>();

  constructor(private readonly limit = 10_000) {}

  remember(id: unknown): void {
    const key = idKey(id);
    this.visible.delete(key);
    this.visible.add(key);
    if (this.visible.size > this.limit) this.visible.delete(this.visible.values().next().value as string);
  }

  forget(id: unknown): void {
    this.visible.delete(idKey(id));
  }

  knows(id: unknown): boolean {
    return this.visible.has(idKey(id));
  }
}

const EVENT_PREFIXES = ['fullDocument.', 'fullDocumentBeforeChange.', 'updateDescription.updatedFields.'];

/** Checks a user's watch filter before the stream opens; answers the compiled matcher. */
export function checkWatchFilter(filter: unknown, access: Pick<RulesAccess, 'canReadPath'>): Matcher | undefined {
  if (filter === undefined || filter === null) return undefined;
  if (typeof filter !== 'object' || Array.isArray(filter) || (filter as { _bsontype?: unknown })._bsontype !== undefined) {
    throw new DataAccessError(DataAccessErrorCode.InvalidParameter, 'the watch filter must be a document');
  }
  assertUserQuery(filter, 'a watch filter');
  const documentPaths: string[] = [];
  for (const path of queryPaths(filter)) {
    const prefix = EVENT_PREFIXES.find((candidate) => path.startsWith(candidate));
    if (prefix) documentPaths.push(path.slice(prefix.length));
  }
  assertReadablePaths(access, documentPaths, 'a watch filter');
  let matcher: Matcher;
  try {
    matcher = compileDocumentFilter(filter as Document);
    // Some operators only fail when they meet a value: try one event of each shape now.
    for (const sample of SAMPLE_EVENTS) matcher(sample);
  } catch (error) {
    throw new DataAccessError(DataAccessErrorCode.InvalidParameter, `invalid watch filter: ${error instanceof Error ? error.message : String(error)}`);
  }
  return matcher;
}

const SAMPLE_EVENTS: Document[] = [
  { _id: { _data: '0' }, operationType: 'insert', ns: { db: 'd', coll: 'c' }, documentKey: { _id: 1 }, fullDocument: { _id: 1, a: 'x', n: 1, o: { a: 1 }, l: [1, 'x', { a: 1 }] } },
  { _id: { _data: '0' }, operationType: 'update', ns: { db: 'd', coll: 'c' }, documentKey: { _id: 1 }, updateDescription: { updatedFields: { a: 1 }, removedFields: ['b'], truncatedArrays: [] } },
];

function valueAt(document: unknown, path: string): unknown {
  let value: unknown = document;
  for (const segment of path.split('.')) {
    if (Array.isArray(value) && /^\d+$/.test(segment)) value = value[Number(segment)];
    else if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, segment)) value = (value as Record<string, unknown>)[segment];
    else return undefined;
  }
  return value;
}

/**
 * The change feed of one user. `stream` must deliver `fullDocument` for updates (updateLookup) and, where
 * the store can, pre-images (`fullDocumentBeforeChange`).
 */
export class UserChangeFeed implements AsyncIterable<ChangeEvent> {
  private readonly lastKnown = new LastKnown();
  private readonly matcher: Matcher | undefined;
  private readonly ids: Set<string> | undefined;
  private readonly withPreImage: boolean;

  private readonly stream: ChangeStream;

  /** Checks the arguments first (throws DataAccessError), then opens the store's stream with `open`. */
  constructor(
    private readonly access: RulesAccess,
    args: WatchArguments,
    open: () => ChangeStream,
  ) {
    this.matcher = checkWatchFilter(args.filter, access);
    if (args.ids !== undefined && args.ids !== null && !Array.isArray(args.ids)) throw new DataAccessError(DataAccessErrorCode.InvalidParameter, 'ids must be an array');
    this.stream = open();
    this.ids = Array.isArray(args.ids) ? new Set(args.ids.map((id) => idKey(id))) : undefined;
    this.withPreImage = args.fullDocumentBeforeChange === 'whenAvailable' || args.fullDocumentBeforeChange === 'required';
  }

  /** The event as the user may see it, or undefined when it must not reach the user. */
  async visible(event: ChangeEvent): Promise<ChangeEvent | undefined> {
    const id = event.documentKey?._id;
    if (this.ids && !this.ids.has(idKey(id))) return undefined;
    const pre = event.fullDocumentBeforeChange ?? undefined;
    switch (event.operationType) {
      case 'delete': {
        const readable = pre ? (await this.access.canRead(pre)).allowed : this.lastKnown.knows(id);
        this.lastKnown.forget(id);
        if (!readable) return undefined;
        const shown: ChangeEvent = { ...event, fullDocument: undefined, fullDocumentBeforeChange: undefined };
        if (this.withPreImage && pre) shown.fullDocumentBeforeChange = (await this.access.canRead(pre)).document ?? null;
        return this.passes(shown);
      }
      case 'insert':
      case 'replace':
      case 'update': {
        const post = event.fullDocument ?? undefined;
        const visible = post ? (await this.access.canRead(post)).document : undefined;
        if (!visible) {
          this.lastKnown.forget(id);
          return undefined;
        }
        this.lastKnown.remember(id);
        const shown: ChangeEvent = { ...event, fullDocument: visible, fullDocumentBeforeChange: undefined };
        const visiblePre = pre ? ((await this.access.canRead(pre)).document ?? undefined) : undefined;
        if (event.updateDescription) {
          const description = this.visibleUpdate(event.updateDescription, visible, pre ? (visiblePre ?? null) : undefined);
          // An update that changed only withheld fields is not shown: its mere arrival would tell that they changed.
          if (Object.keys(description.updatedFields).length === 0 && description.removedFields.length === 0 && description.truncatedArrays.length === 0) return undefined;
          shown.updateDescription = description;
        }
        if (this.withPreImage && pre) shown.fullDocumentBeforeChange = visiblePre ?? null;
        return this.passes(shown);
      }
      case 'drop':
      case 'dropDatabase':
      case 'rename':
      case 'invalidate':
      case 'create':
      case 'createIndexes':
      case 'dropIndexes':
      case 'modify':
        // Not a change of a document the user can be shown (realm-web's watch reports document changes).
        return undefined;
    }
  }

  /**
   * The update description restricted to what the user may read: updated paths present in the visible
   * document (with its values), removed paths the user could read before the change (on the visible
   * pre-image; null when the user could not read the document before; without a pre-image, only paths
   * readable in every document the user can see).
   */
  private visibleUpdate(description: NonNullable<ChangeEvent['updateDescription']>, visible: Document, visiblePre: Document | null | undefined): NonNullable<ChangeEvent['updateDescription']> {
    const updatedFields: Document = {};
    for (const path of Object.keys(description.updatedFields)) {
      const value = valueAt(visible, path);
      if (value !== undefined) updatedFields[path] = value;
    }
    const removedFields = description.removedFields.filter((path) => (visiblePre === undefined ? this.access.canReadPath(path) : visiblePre !== null && valueAt(visiblePre, path) !== undefined));
    const truncatedArrays = description.truncatedArrays.filter((entry) => {
      const field = (entry as { field?: unknown } | null)?.field;
      return typeof field === 'string' && valueAt(visible, field) !== undefined;
    });
    return { updatedFields, removedFields, truncatedArrays };
  }

  private passes(event: ChangeEvent): ChangeEvent | undefined {
    if (!this.matcher) return event;
    return this.matcher(event as unknown as Document) ? event : undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<ChangeEvent> {
    return {
      next: async (): Promise<IteratorResult<ChangeEvent>> => {
        for (;;) {
          const event = await this.stream.next();
          if (event.operationType === 'invalidate') {
            // The collection was dropped or renamed: its stream is over, and so is the user's watch.
            await this.stream.close();
            return { done: true, value: undefined };
          }
          const shown = await this.visible(event);
          if (shown) return { done: false, value: shown };
        }
      },
      return: async (): Promise<IteratorResult<ChangeEvent>> => {
        await this.stream.close();
        return { done: true, value: undefined };
      },
    };
  }
}
