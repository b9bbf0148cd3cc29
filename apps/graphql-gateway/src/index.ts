// The client-facing HTTP edge, as a Nest module the process host mounts.
export * from './graphql-gateway.module';
export * from './location/location.controller';
