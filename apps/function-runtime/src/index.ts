// Public entry of @tessera/function-runtime: the execution engine, its ports and its Nest module.
export const projectName = 'function-runtime';
export * from './function-runtime.error';
export * from './function-runtime.options';
export * from './function-runtime.service';
export * from './function-runtime.module';
export * from './config/function-config';
export * from './execution-logs/execution-log.store';
export * from './ports/identity';
export * from './ports/data-access.port';
export * from './ports/app-functions.port';
export * from './ports/values.port';
export * from './ports/http.port';
export * from './testing/in-memory-ports';
export * from './service/function-runtime-service.module';
