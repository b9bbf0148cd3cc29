import { z } from 'zod';

/** The element of a list, set or dictionary property (Realm object types do not nest collections). */
const ItemSchema = z.object({
  type: z.string().min(1).max(32),
  optional: z.boolean().optional(),
  object_type: z.string().min(1).max(256).optional(),
});

/** A property of a synced object type, as a client declared it (the admin API's `sync/development_schemas` body). */
const PropertySchema = ItemSchema.extend({ items: ItemSchema.optional() });

/**
 * Development mode (spec 2.6): a sync client declared object types or fields the app's schema lacks; the
 * admin API makes them collection schemas of `database_name` in a new deployment, as App Services did.
 */
export const AppsDevelopmentSchemaApplyRequestSchema = z.object({
  appId: z.string().min(1),
  types: z
    .array(
      z.object({
        name: z.string().min(1).max(256),
        primary_key: z.string().min(1).max(256).optional(),
        // An embedded type has no collection: it is the sub-document schema of the properties that hold it.
        embedded: z.boolean().optional(),
        properties: z.record(z.string().min(1).max(256), PropertySchema),
      }),
    )
    .min(1)
    .max(1_000)
    .describe('The object types as the client declared them (every field it syncs).'),
});
export type AppsDevelopmentSchemaApplyRequest = z.infer<typeof AppsDevelopmentSchemaApplyRequestSchema>;

export const AppsDevelopmentSchemaApplyResponseSchema = z.object({
  created: z.array(z.string()).describe('Collections that got a schema.'),
  extended: z.array(z.string()).describe('Collections whose schema gained fields.'),
});
export type AppsDevelopmentSchemaApplyResponse = z.infer<typeof AppsDevelopmentSchemaApplyResponseSchema>;
