// The client-facing HTTP edge, as a Nest module the process host mounts.
export * from './graphql-gateway.module';
export * from './location/location.controller';
export * from './client-api/client-api.error';
export * from './client-api/functions/remote-data-access.port';
export { Mailer, OutboxFileMailer, type OutgoingMail } from './client-api/auth/mailer';
export { ClientApps, type ClientApp } from './client-api/client-apps.service';
// The process host's app wire endpoint authenticates with the client API's credential checks.
export { ClientApiModule } from './client-api/client-api.module';
export { AuthService } from './client-api/auth/auth.service';
