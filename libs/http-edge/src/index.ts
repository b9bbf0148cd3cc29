// HTTP edge plumbing shared by the admin API and the client API.
export * from './app-services-exception.filter';
export * from './json-content-type';
export * from './client-gone';
export * from './correlation';
export * from './edge-errors';
export * from './token-buckets';
