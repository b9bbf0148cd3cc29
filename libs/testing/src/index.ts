// Shared test helpers: used by specs and end-to-end tests, never by production code.
export * from './eventually';
export * from './free-port';
export * from './nats-server';
export * from './temp-dir';
export * from './server-process';
export * from './shared-material';
export * from './test-apps';
export * from './fixtures/shop-app';
export * from './property-seed';
