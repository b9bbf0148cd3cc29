/**
 * Every message subject exchanged between services, named once. Call sites use `Subjects.X`, never a string
 * literal, so a rename or a `.v2` is a one-line change that the compiler follows everywhere.
 *
 * Grammar (docs/decisions/0001-subject-grammar.md): lower-case dot tokens `<domain>.<aggregate>.<action>`,
 * commands imperative (`run`), events past tense (`changed`), and an optional `.v<N>` (N >= 2) for a breaking
 * payload change.
 */
export const Subjects = {
  /** Command: run an application function and answer with its result (function runtime). */
  FunctionsExecutionRun: 'functions.execution.run',
  /** Command: open the change feeds an app's deployment links and answer once they watch (admin API, distributed mode). */
  FunctionsChangeFeedsFollow: 'functions.change-feeds.follow',
  /** Event: an application's deployed configuration changed; every replica of every service reloads it. */
  AppsDeploymentChanged: 'apps.deployment.changed',
  /** Event: an application was deleted; services drop what they keep for it (sync histories, live connections). */
  AppsAppDeleted: 'apps.app.deleted',
  /** Event: an app user was disabled or deleted; services close that user's live connections (sync). */
  AppsUserChanged: 'apps.user.changed',
  /** Event: an app user was created, logged in or was deleted; authentication triggers run on it (function runtime). */
  AppsAuthEventOccurred: 'apps.auth-event.occurred',
  /** Command: send a pending email/password user's confirmation again (admin API `send_confirm`; client API). */
  AppsRegistrationSendConfirmation: 'apps.registration.send-confirmation',
  /** Command: run a GraphQL operation of an app's API as the system user (admin API `POST .../graphql`); any one gateway replica answers. */
  GraphqlOperationRun: 'graphql.operation.run',
  /** Event: a document changed in a linked data source (triggers, sync, change streams). */
  DatastoreDocumentChanged: 'datastore.document.changed',
  /** Event: a sync-service replica appended to a partition's history; every replica wakes its sessions on it. */
  SyncHistoryAppended: 'sync.history.appended',
  /** Event: a document of a flexible-sync type changed; every other replica tells its sessions whose views it concerns. */
  SyncFlexibleDocumentChanged: 'sync.flexible-document.changed',
  /** Command: development mode, the types a sync client declared become collection schemas in a new deployment (admin API). */
  AppsDevelopmentSchemaApply: 'apps.development-schema.apply',
  /** Command: the connected clients and partition histories of an app, across sync-service replicas (admin API). */
  SyncStatusRead: 'sync.status.read',
  /** Command: reset one client file of an app (admin API `sync/force_reset`). */
  SyncClientReset: 'sync.client.reset',
  /** Command: liveness probe across the bus; answered by any one service that handles it. */
  SystemHealthPing: 'system.health.ping',
  /** Event: a caller stopped waiting for a request (client gone, deadline passed); its handler may stop. */
  MessagingRequestAbandoned: 'messaging.request.abandoned',
} as const;

export type Subject = (typeof Subjects)[keyof typeof Subjects];

const token = '[a-z][a-z0-9]*(?:-[a-z0-9]+)*';

/** `<domain>.<aggregate>.<action>` with an optional `.v<N>` version suffix, N >= 2. */
export const SUBJECT_PATTERN = new RegExp(`^${token}\\.${token}\\.${token}(?:\\.v[2-9]|\\.v[1-9][0-9]+)?$`);

/** True when `subject` follows the grammar; wildcards, upper case and empty tokens never do. */
export function isWellFormedSubject(subject: string): boolean {
  return SUBJECT_PATTERN.test(subject);
}

/** The version a subject names: 1 without a suffix, N for `.vN`. */
export function subjectVersion(subject: string): number {
  const match = /\.v([0-9]+)$/.exec(subject);
  return match ? Number(match[1]) : 1;
}
