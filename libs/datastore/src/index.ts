// Public entry of @tessera/datastore: the data-access API, its two engines and the cluster mapping.
export * from './api/data-source';
export { DatastoreError, DatastoreErrorCode, isDatastoreError, isDuplicateKeyError, codeNameOf, type DatastoreErrorCodeName, type WriteErrorDetail } from './api/datastore.error';
export { createDataSourceClient, embeddedClusterDir, type DataSourceClientOptions, type ReadPreference } from './client';
export { openEmbeddedClient, EmbeddedClient, embeddedStoreProblems } from './embedded/embedded-client';
export { configureEmbeddedDatastore, type EmbeddedDatastoreOptions, type DatastoreLogLevel } from './embedded/embedded-reporting';
export { type ServiceStoreOptions } from './embedded/service-store';
export { traceDataSource } from './tracing/traced-client';
export { MongoDataSourceClient, type MongoClientOptions } from './mongodb/mongodb-client';
// isPlainObject and typeRank also serve the conformance runner (@tessera/datastore-testing).
export { compareValues, normalize, cloneValue, idKey, isPlainObject, typeRank } from './bson/values';
// Document-level helpers the rules layer (libs/data-access) uses to evaluate writes and reads in memory.
export { applyUpdate, upsertBase, checkUpdate as checkUpdateDocument, checkReplacement, type UpdateContext } from './engine/update';
export { buildProjector, type Projector } from './engine/projection';
// Tests and diagnostics observe what the embedded planner's queries examine.
export { observeSelects, type ObservedSelect } from './engine/query';
export { runPipeline, compileFilter as compileDocumentFilter, type Matcher } from './engine/mingo';
export { WireServer, errorReply, type WireServerOptions } from './wire/wire-server';
// The wire listener and authentication helpers serve the process host's app endpoint too.
export { WireListener, type WireListenerOptions, type WireConnectionInfo, type WireConnectionLoad } from './wire/wire-listener';
export { WireCommandError } from './wire/errors';
export { isOpenCommand, unauthorized, authenticationFailed, commandName, saslPayload } from './wire/wire-auth';
