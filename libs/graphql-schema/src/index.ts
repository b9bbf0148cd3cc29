// Public entry of @tessera/graphql-schema: the App Services GraphQL schema of an app (names, types, inputs,
// relationships, custom resolvers), its SDL, and the pure translation of GraphQL arguments to datastore
// arguments. No store, no transport: the gateway executes, the admin API prints.
export * from './model';
export * from './build-schema';
export * from './scalars';
export * from './sdl';
export * from './translate';
export { pluralize, singularize } from './inflection';
