export * from './graphql.module';
export { GraphqlAuthenticator, type GraphqlPrincipal } from './graphql-authenticator';
export { GraphqlApps } from './graphql-apps.service';
export { type GraphqlRequestContext } from './graphql-executor';
export { MAX_DEPTH_MESSAGE, MAX_QUERIES_MESSAGE } from './graphql.error';
