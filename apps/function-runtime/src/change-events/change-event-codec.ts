/**
 * Change events between the datastore's change feed and the `datastore.document.changed` contract, and
 * back into the change event a trigger function receives (App Services' shape, BSON-typed values).
 */
import { type ChangeOrigin, type DocumentChanged, type JsonValue } from '@tessera/contracts';
import { type ChangeEvent, type Document, type ResumeToken } from '@tessera/datastore';
import { decodeEjson, encodeEjson } from '@tessera/messaging';

/** Where a change came from: the app and the linked data-source service (and the cluster it links). */
export interface ChangeSource {
  appId: string;
  service: string;
  cluster: string;
}

const documentOperations = new Set<string>(['insert', 'update', 'replace', 'delete']);

/** The stream's idempotency key of a change: the same change published twice (a replica, a restart) is stored once. */
export function changeMessageId(source: ChangeSource, token: ResumeToken): string {
  return `${source.appId}/${source.service}/${token._data}`;
}

/**
 * The contract payload of a feed event, or undefined for what the subject does not carry (drops). `origin`
 * is the writer's mark on the event's transaction (see TransactionOrigins); `readAt`, when the publisher
 * read the event from the feed (epoch milliseconds with their fraction), for consumers that measure delays.
 */
export function toDocumentChanged(source: ChangeSource, event: ChangeEvent, origin?: ChangeOrigin, readAt?: number): DocumentChanged | undefined {
  if (!documentOperations.has(event.operationType) || event.ns.coll === undefined || !event.documentKey) return undefined;
  const ejson = (value: unknown): Record<string, JsonValue> => encodeEjson(value) as Record<string, JsonValue>;
  return {
    appId: source.appId,
    service: source.service,
    cluster: source.cluster,
    db: event.ns.db,
    coll: event.ns.coll,
    operationType: event.operationType as DocumentChanged['operationType'],
    documentKey: ejson(event.documentKey),
    ...(event.fullDocument !== undefined ? { fullDocument: event.fullDocument === null ? null : ejson(event.fullDocument) } : {}),
    ...(event.fullDocumentBeforeChange !== undefined ? { fullDocumentBeforeChange: event.fullDocumentBeforeChange === null ? null : ejson(event.fullDocumentBeforeChange) } : {}),
    ...(event.updateDescription
      ? {
          updateDescription: {
            updatedFields: ejson(event.updateDescription.updatedFields),
            removedFields: event.updateDescription.removedFields,
            truncatedArrays: event.updateDescription.truncatedArrays.filter(isTruncation),
          },
        }
      : {}),
    ...(event.clusterTime ? { clusterTime: encodeEjson(event.clusterTime) } : {}),
    ...(event.wallTime ? { wallTime: encodeEjson(event.wallTime) } : {}),
    resumeToken: encodeEjson(event._id),
    ...(origin ? { origin } : {}),
    ...(readAt !== undefined ? { readAt } : {}),
  };
}

function isTruncation(value: unknown): value is { field: string; newSize: number } {
  return typeof value === 'object' && value !== null && typeof (value as { field?: unknown }).field === 'string' && typeof (value as { newSize?: unknown }).newSize === 'number';
}

/** The change event as App Services hands it to a trigger function: `_id` is the resume token, values BSON-typed. */
export function toTriggerEvent(change: DocumentChanged): Document {
  const decode = (value: JsonValue): unknown => decodeEjson(value);
  const event: Document = {
    _id: decode(change.resumeToken),
    operationType: change.operationType,
    ...(change.clusterTime !== undefined ? { clusterTime: decode(change.clusterTime) } : {}),
    ...(change.wallTime !== undefined ? { wallTime: decode(change.wallTime) } : {}),
    ns: { db: change.db, coll: change.coll },
    documentKey: decode(change.documentKey),
  };
  if (change.updateDescription) {
    event['updateDescription'] = {
      updatedFields: decode(change.updateDescription.updatedFields),
      removedFields: change.updateDescription.removedFields,
      truncatedArrays: change.updateDescription.truncatedArrays ?? [],
    };
  }
  if (change.fullDocument !== undefined) event['fullDocument'] = change.fullDocument === null ? null : decode(change.fullDocument);
  if (change.fullDocumentBeforeChange !== undefined) event['fullDocumentBeforeChange'] = change.fullDocumentBeforeChange === null ? null : decode(change.fullDocumentBeforeChange);
  return event;
}
