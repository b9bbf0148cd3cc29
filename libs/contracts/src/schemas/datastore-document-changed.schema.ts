import { z } from 'zod';
import { EjsonDocumentSchema, EjsonValueSchema } from './ejson.schema';

/** Document-level change kinds; collection-level changes (drop, rename) would get their own subject. */
export const DocumentOperationTypeSchema = z.enum(['insert', 'update', 'replace', 'delete']);
export type DocumentOperationType = z.infer<typeof DocumentOperationTypeSchema>;

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
});
export type DocumentChanged = z.infer<typeof DocumentChangedSchema>;
