// Platform state shared by every service, kept in the platform database: the app registry, deployments,
// drafts, administrators, secrets, sync state, logs and signing keys. Token, password and login-throttle
// helpers live in @tessera/credentials; partition values in @tessera/sync-protocol.
export * from './admin-users';
export * from './app-registry';
export * from './deployment-store';
export * from './ids';
export * from './signing-keys';
export * from './platform.module';
export * from './platform-database';
export * from './file-import';
export * from './deployed-apps';
export * from './secret-store';
export * from './secrets-cipher';
export * from './draft-store';
export * from './hosting-store';
export * from './dependency-store';
export * from './log-store';
export * from './log-buffer';
export * from './sync-state-store';
export * from './template-store';
export * from './data-sources';
export * from './admin-api-keys';
export * from './app-users';
export * from './user-import';
export * from './custom-user-data';
export * from './trigger-states';
export * from './declared-indexes';
export * from './auth-events';
export { DeploymentFollowers, DEPLOYMENT_FOLLOW_WAIT_MS } from './deployment-followers';
