import { z } from 'zod';
import { EjsonDocumentSchema, EjsonValueSchema } from './ejson.schema';

/** Document-level change kinds; collection-level changes (drop, rename) would get their own subject. */
export const DocumentOperationTypeSchema = z.enum(['insert', 'update', 'replace', 'delete']);
export type DocumentOperationType = z.infer<typeof DocumentOperationTypeSchema>;

/** A change-stream event of one document in a linked data source, every BSON value as canonical EJSON. */
export const DocumentChangedSchema = z.object({
  service: z.string().min(1).describe('Name of the data-source service (for example mongodb-atlas).'),
  db: z.string().min(1),
  coll: z.string().min(1),
  operationType: DocumentOperationTypeSchema,
  documentKey: EjsonDocumentSchema.describe('The changed document key, at least {_id}.'),
  fullDocument: EjsonDocumentSchema.optional(),
  updateDescription: z
    .object({
      updatedFields: EjsonDocumentSchema,
      removedFields: z.array(z.string()),
      truncatedArrays: z.array(z.object({ field: z.string(), newSize: z.number().int().min(0) })).optional(),
    })
    .optional(),
  resumeToken: EjsonValueSchema.describe('Where a consumer resumes the change stream after this event.'),
});
export type DocumentChanged = z.infer<typeof DocumentChangedSchema>;
