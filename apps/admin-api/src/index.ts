// The admin API v3.0, as a Nest module the process host mounts.
export * from './admin-api.module';
