// Public entry of @tessera/datastore: the data-access API, its two engines and the cluster mapping.
export * from './api/data-source';
export { DatastoreError, DatastoreErrorCode, isDatastoreError, codeNameOf, type DatastoreErrorCodeName, type WriteErrorDetail } from './api/datastore.error';
export { createDataSourceClient, embeddedClusterDir, type DataSourceClientOptions, type ReadPreference } from './client';
export { openEmbeddedClient, EmbeddedClient } from './embedded/embedded-client';
export { type ServiceStoreOptions } from './embedded/service-store';
export { MongoDataSourceClient, type MongoClientOptions } from './mongodb/mongodb-client';
export { compareValues, normalize, cloneValue, idKey } from './bson/values';
