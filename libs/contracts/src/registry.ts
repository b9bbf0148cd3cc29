import { type z } from 'zod';
import { AppDeletedSchema } from './schemas/apps-app-deleted.schema';
import { AppDeploymentChangedSchema } from './schemas/apps-deployment-changed.schema';
import { AppAuthEventSchema } from './schemas/apps-auth-event-occurred.schema';
import { SendConfirmationRequestSchema, SendConfirmationResponseSchema } from './schemas/apps-registration-send-confirmation.schema';
import { GraphqlOperationRunRequestSchema, GraphqlOperationRunResponseSchema } from './schemas/graphql-operation-run.schema';
import { AppUserChangedSchema } from './schemas/apps-user-changed.schema';
import { DocumentChangedSchema } from './schemas/datastore-document-changed.schema';
import { ChangeFeedsFollowRequestSchema, ChangeFeedsFollowResponseSchema } from './schemas/functions-change-feeds-follow.schema';
import { FunctionRunRequestSchema, FunctionRunResponseSchema } from './schemas/functions-execution-run.schema';
import { RequestAbandonedSchema } from './schemas/messaging-request-abandoned.schema';
import { AppsDevelopmentSchemaApplyRequestSchema, AppsDevelopmentSchemaApplyResponseSchema } from './schemas/apps-development-schema-apply.schema';
import { SyncFlexibleDocumentChangedSchema } from './schemas/sync-flexible-document-changed.schema';
import { SyncHistoryAppendedSchema } from './schemas/sync-history-appended.schema';
import { SyncClientResetRequestSchema, SyncClientResetResponseSchema, SyncStatusRequestSchema, SyncStatusResponseSchema } from './schemas/sync-status-read.schema';
import { HealthPingRequestSchema, HealthPingResponseSchema } from './schemas/system-health-ping.schema';
import { type Subject, Subjects } from './subjects';

/** Request/reply: exactly one member of a queue group answers; the caller waits with a deadline. */
export interface CommandContract<Request extends z.ZodTypeAny = z.ZodTypeAny, Response extends z.ZodTypeAny = z.ZodTypeAny> {
  readonly kind: 'command';
  readonly description: string;
  readonly request: Request;
  readonly response: Response;
}

/** Fire-and-forget: every queue group receives each event once. */
export interface EventContract<Payload extends z.ZodTypeAny = z.ZodTypeAny> {
  readonly kind: 'event';
  readonly description: string;
  readonly payload: Payload;
}

export type Contract = CommandContract | EventContract;

function command<Request extends z.ZodTypeAny, Response extends z.ZodTypeAny>(
  contract: Omit<CommandContract<Request, Response>, 'kind'>,
): CommandContract<Request, Response> {
  return { kind: 'command', ...contract };
}

function event<Payload extends z.ZodTypeAny>(contract: Omit<EventContract<Payload>, 'kind'>): EventContract<Payload> {
  return { kind: 'event', ...contract };
}

/** The typed map subject -> contract. Adding a subject to `Subjects` without a contract fails to compile. */
export const contracts = {
  [Subjects.FunctionsExecutionRun]: command({
    description: 'Run an application function with EJSON arguments for a user or the system; answers its EJSON result or an error.',
    request: FunctionRunRequestSchema,
    response: FunctionRunResponseSchema,
  }),
  [Subjects.FunctionsChangeFeedsFollow]: command({
    description: "Follow an app's data sources as deployed now: one function-runtime replica opens the change feeds the deployment links and answers once they watch (at most 5 s), so a write made as soon as a deploy is answered fires the app's new triggers.",
    request: ChangeFeedsFollowRequestSchema,
    response: ChangeFeedsFollowResponseSchema,
  }),
  [Subjects.AppsDeploymentChanged]: event({
    description: 'An application deployed a new configuration version; every replica reloads it.',
    payload: AppDeploymentChangedSchema,
  }),
  [Subjects.AppsAppDeleted]: event({
    description: 'An application was deleted; every replica drops what it keeps for it (sync: live connections, histories, client files, translation state).',
    payload: AppDeletedSchema,
  }),
  [Subjects.AppsUserChanged]: event({
    description: 'An app user was disabled or deleted, or had every session revoked; every replica closes the live connections of that user (sync, the apps\' wire endpoint).',
    payload: AppUserChangedSchema,
  }),
  [Subjects.AppsAuthEventOccurred]: event({
    description: "An app user was created, logged in or was deleted (App Services' auth event); one function-runtime replica runs the app's authentication triggers on it.",
    payload: AppAuthEventSchema,
  }),
  [Subjects.AppsRegistrationSendConfirmation]: command({
    description: "Send a pending email/password user's confirmation again, as the provider is configured: run its confirmation function or email a new confirmation token; any one client-API replica answers.",
    request: SendConfirmationRequestSchema,
    response: SendConfirmationResponseSchema,
  }),
  [Subjects.GraphqlOperationRun]: command({
    description: "Run a GraphQL operation of an app's API as the system user (rules bypassed), as the admin API's `POST .../graphql` asks; any one gateway replica answers.",
    request: GraphqlOperationRunRequestSchema,
    response: GraphqlOperationRunResponseSchema,
  }),
  [Subjects.DatastoreDocumentChanged]: event({
    description: 'A document changed in a linked data source (change-stream event in canonical EJSON).',
    payload: DocumentChangedSchema,
  }),
  [Subjects.SyncHistoryAppended]: event({
    description: "A sync-service replica appended to a partition's history; every replica (broadcast) sends the new versions to its sessions on that partition.",
    payload: SyncHistoryAppendedSchema,
  }),
  [Subjects.SyncFlexibleDocumentChanged]: event({
    description: 'A document of a flexible-sync type changed (an upload, or the change feed on one replica); every other replica (broadcast) reads it and tells its sessions whose views it enters, changes in or leaves.',
    payload: SyncFlexibleDocumentChangedSchema,
  }),
  [Subjects.AppsDevelopmentSchemaApply]: command({
    description: 'Development mode: the object types a sync client declared become collection schemas of database_name in a new deployment; one admin-api replica answers.',
    request: AppsDevelopmentSchemaApplyRequestSchema,
    response: AppsDevelopmentSchemaApplyResponseSchema,
  }),
  [Subjects.SyncStatusRead]: command({
    description: "The connected clients of an app on every live sync-service replica and the size of each partition's history; any one replica answers from the shared sync database.",
    request: SyncStatusRequestSchema,
    response: SyncStatusResponseSchema,
  }),
  [Subjects.SyncClientReset]: command({
    description: 'Mark one client file of an app expired, so that its next IDENT or UPLOAD gets a client reset; any one replica answers.',
    request: SyncClientResetRequestSchema,
    response: SyncClientResetResponseSchema,
  }),
  [Subjects.SystemHealthPing]: command({
    description: 'Liveness probe across the bus; any one service answering it proves the path works.',
    request: HealthPingRequestSchema,
    response: HealthPingResponseSchema,
  }),
  [Subjects.MessagingRequestAbandoned]: event({
    description: 'A caller stopped waiting for a request (its client disconnected or its deadline passed); every replica hears it and the one handling the request stops.',
    payload: RequestAbandonedSchema,
  }),
} as const satisfies { readonly [S in Subject]: Contract };

export type Contracts = typeof contracts;

export type CommandSubject = { [S in Subject]: Contracts[S] extends CommandContract ? S : never }[Subject];
export type EventSubject = { [S in Subject]: Contracts[S] extends EventContract ? S : never }[Subject];

/** What a caller passes (before defaults and transforms). */
export type CommandRequestInput<S extends CommandSubject> = Contracts[S] extends CommandContract<infer R, z.ZodTypeAny> ? z.input<R> : never;
/** What a handler receives after validation. */
export type CommandRequest<S extends CommandSubject> = Contracts[S] extends CommandContract<infer R, z.ZodTypeAny> ? z.output<R> : never;
/** What a handler returns. */
export type CommandResponseInput<S extends CommandSubject> = Contracts[S] extends CommandContract<z.ZodTypeAny, infer R> ? z.input<R> : never;
/** What a caller receives after validation. */
export type CommandResponse<S extends CommandSubject> = Contracts[S] extends CommandContract<z.ZodTypeAny, infer R> ? z.output<R> : never;
export type EventPayloadInput<S extends EventSubject> = Contracts[S] extends EventContract<infer P> ? z.input<P> : never;
export type EventPayload<S extends EventSubject> = Contracts[S] extends EventContract<infer P> ? z.output<P> : never;

const bySubject: ReadonlyMap<string, Contract> = new Map(Object.entries(contracts));

/** Every subject that has a contract, in declaration order. */
export const allSubjects: readonly Subject[] = Object.values(Subjects);

export function getContract(subject: string): Contract | undefined {
  return bySubject.get(subject);
}

export function isSubject(value: string): value is Subject {
  return bySubject.has(value);
}

export function isCommandSubject(value: string): value is CommandSubject {
  return bySubject.get(value)?.kind === 'command';
}

export function isEventSubject(value: string): value is EventSubject {
  return bySubject.get(value)?.kind === 'event';
}
