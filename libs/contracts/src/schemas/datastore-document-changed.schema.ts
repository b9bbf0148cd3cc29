import { z } from 'zod';
import { EjsonDocumentSchema, EjsonValueSchema } from './ejson.schema';

/** Document-level change kinds; collection-level changes (drop, rename) would get their own subject. */
export const DocumentOperationTypeSchema = z.enum(['insert', 'update', 'replace', 'delete']);
export type DocumentOperationType = z.infer<typeof DocumentOperationTypeSchema>;

/**
 * Who made a change, when the writer marked its transaction (see the change publisher): the sync service's
 * translation of history `version` of partition `partition` (its history key, which names the app). A
 * consumer recognises its own writes by it; no origin means a write made anywhere else.
 */
export const ChangeOriginSchema = z.object({
  writer: z.string().min(1).describe('What wrote the change: "sync-translation" for the sync service applying client changesets.'),
  appId: z.string().min(1).describe('The app whose writer made it (several apps may link one cluster).'),
  partition: z.string().optional().describe("The sync history (partition key) whose changesets were applied."),
  version: z.number().int().min(0).optional().describe('The newest history version the write applied.'),
});
export type ChangeOrigin = z.infer<typeof ChangeOriginSchema>;

/**
 * Where a writer marks a transaction: it writes (inserts or replaces) a document of this namespace, with its
 * `origin` field a ChangeOrigin, as the first write of the transaction; the change publisher then puts that
 * origin on every other change event of the transaction and publishes no event for the marker itself.
 */
export const WriteOriginsNamespace = { db: '__tessera', coll: 'write_origins' } as const;

/** The writer name of the sync service's translation (uploads applied to the synced collections). */
export const SYNC_TRANSLATION_WRITER = 'sync-translation';

/**
 * A change-stream event of one document in a data source an app links, every BSON value as canonical EJSON.
 * One event per app and linked service (apps linking one cluster each get theirs), so a consumer needs no
 * lookup to know whose change it is. The stream's message id is `<appId>/<service>/<resumeToken._data>`.
 */
export const DocumentChangedSchema = z.object({
  appId: z.string().min(1).describe('The app whose linked data source changed.'),
  service: z.string().min(1).describe('Name of the data-source service in the app (for example mongodb-atlas).'),
  cluster: z.string().min(1).describe('The cluster the service links (config.clusterName).'),
  db: z.string().min(1),
  coll: z.string().min(1),
  operationType: DocumentOperationTypeSchema,
  documentKey: EjsonDocumentSchema.describe('The changed document key, at least {_id}.'),
  fullDocument: EjsonDocumentSchema.nullable().optional().describe('The document after the change (after an update: looked up, null when it is gone).'),
  fullDocumentBeforeChange: EjsonDocumentSchema.nullable().optional().describe('The document before an update, replace or delete, when the data source keeps it.'),
  updateDescription: z
    .object({
      updatedFields: EjsonDocumentSchema,
      removedFields: z.array(z.string()),
      truncatedArrays: z.array(z.object({ field: z.string(), newSize: z.number().int().min(0) })).optional(),
    })
    .optional(),
  clusterTime: EjsonValueSchema.optional().describe('Commit time as a BSON Timestamp.'),
  wallTime: EjsonValueSchema.optional().describe('Commit time as a BSON Date.'),
  resumeToken: EjsonValueSchema.describe('Where a consumer resumes the change stream after this event.'),
  origin: ChangeOriginSchema.optional().describe("The writer's mark on its transaction, passed through by the change publisher."),
  readAt: z
    .number()
    .positive()
    .optional()
    .describe("When the change publisher read the change from the data source's feed, in epoch milliseconds with their fraction: the change was durable then."),
});
export type DocumentChanged = z.infer<typeof DocumentChangedSchema>;
