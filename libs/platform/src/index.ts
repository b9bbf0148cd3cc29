// Platform state shared by every service, kept in the platform database: the app registry, deployments,
// drafts, administrators, secrets, sync state, logs and signing keys.
export * from './admin-users';
export * from './app-registry';
export * from './deployment-store';
export * from './ids';
export * from './jwt';
export * from './passwords';
export * from './login-throttle';
export * from './signing-keys';
export * from './platform.module';
export * from './platform-database';
export * from './file-import';
export * from './deployed-apps';
export * from './secret-store';
export * from './secrets-cipher';
export * from './draft-store';
export * from './log-store';
export * from './sync-state-store';
export * from './template-store';
export * from './data-sources';
export * from './admin-api-keys';
export * from './app-users';
export * from './partition-value';
export * from './custom-user-data';
