// Public entry of @tessera/app-config: the app configuration model (spec 2.1-2.12 and 8), its readers for
// the current, legacy, 20210101-export and App Services CLI (root_config.json) layouts, a deterministic writer and the validator.
export * from './model';
export { type JsonObject, parseJson, stringifyJson } from './json';
export { type ConfigViolation, AppConfigError, AppConfigErrorCode, formatViolations } from './violations';
export { type FileLocator, type Location } from './origins';
export { readAppFiles, detectLayout, type LoadedApp } from './read/read-app';
export { appEnvironment, ENVIRONMENT_NAMES, type AppEnvironment } from './read/environment';
export { defaultFunctionConfig } from './read/sections';
export { functionSyntaxError, importsAsRequires } from './function-source';
export { writeAppFiles } from './write';
export { validateApp, type ValidateOptions, KNOWN_BSON_TYPES, PARTITION_KEY_TYPES, READ_PREFERENCES, REFRESH_TOKEN_LIFETIME_SECONDS, isRefreshTokenLifetime } from './validate';
export { accessAddress, accessCheckOf, isIpOrCidr, ipAccessCheck } from './ip-access';
export { effectiveSyncConfig } from './effective-sync';
export { keepLinkedClusters } from './linked-clusters';
export { normalizeApp, cloneApp, stableId, contentTypeFor } from './normalize';
export { loadApp, loadValidApp, type CheckedApp, type LoadOptions } from './load';
export { readAppDirectory, writeAppDirectory, readDirectoryFiles, writeDirectoryFiles } from './fs-adapter';
export { layoutPaths } from './paths';
export { toAppData, fromAppData } from './app-data';
export { pathNameProblem, isSafeRelativePath, assertSafeRelativePaths, UnsafePathError } from './safe-names';
export {
  HOSTING_ATTRIBUTE_NAMES,
  HOSTING_FILES_DIR,
  HOSTING_LIMITS,
  HOSTING_METADATA_PATH,
  hostedFileAttributes,
  hostedFiles,
  hostingAttributeName,
  hostingDirectoryFiles,
  hostingResponseCode,
  hostingSettings,
  isHostingContentPath,
  type HostingSettings,
} from './hosting';
export {
  type HttpsEndpointConfig,
  type EndpointProblem,
  HTTPS_ENDPOINTS_FILE,
  ENDPOINT_HTTP_METHODS,
  ENDPOINT_VALIDATION_METHODS,
  ENDPOINT_RETURN_TYPES,
  endpointRouteProblem,
  httpsEndpointProblems,
  httpsEndpointsProblems,
  httpsEndpoints,
} from './https-endpoints';
export { migratePartitionSync, type PartitionMigration, type MigratedCollection, type UntranslatedPermission, type PartitionPermission } from './migrate-partition-sync';
export {
  type DataApiConfig,
  type DataApiConfigFile,
  type DataApiConfigProblem,
  DATA_API_CONFIG_FILE,
  DATA_API_VERSIONS,
  dataApiConfigOf,
  dataApiConfigProblems,
  withDataApiDefaults,
} from './data-api-config';
export {
  type DataModel,
  type DataModelAlert,
  type DataModelLanguage,
  type ModelProperty,
  type ObjectModel,
  type RealmScalar,
  DATA_MODEL_LANGUAGES,
  generateDataModels,
  generateObjectModel,
  isDataModelLanguage,
  readObjectModels,
} from './data-models';
