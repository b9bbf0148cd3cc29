// Public entry of @tessera/graphql-gateway.
export const projectName = 'graphql-gateway';
