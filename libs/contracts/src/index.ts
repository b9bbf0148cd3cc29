// Public entry of @tessera/contracts: every subject, header name and payload schema exchanged between
// services, with parse helpers. Pure data and zod: no Nest, no NATS, no I/O.
export * from './caller-identity';
export * from './errors';
export * from './headers';
export * from './http-credentials';
export * from './json-schema/contracts-schema';
export * from './json-schema/zod-to-json-schema';
export * from './parse';
export * from './registry';
export * from './schemas/apps-app-deleted.schema';
export * from './schemas/apps-auth-event-occurred.schema';
export * from './schemas/apps-deployment-changed.schema';
export * from './schemas/apps-registration-send-confirmation.schema';
export * from './schemas/graphql-operation-run.schema';
export * from './schemas/apps-user-changed.schema';
export * from './schemas/caller.schema';
export * from './schemas/datastore-document-changed.schema';
export * from './schemas/ejson.schema';
export * from './schemas/functions-execution-run.schema';
export * from './schemas/messaging-request-abandoned.schema';
export * from './schemas/remote-error.schema';
export * from './schemas/system-health-ping.schema';
export * from './schemas/sync-history-appended.schema';
export * from './schemas/sync-flexible-document-changed.schema';
export * from './schemas/apps-development-schema-apply.schema';
export * from './schemas/sync-status-read.schema';
export * from './subjects';
