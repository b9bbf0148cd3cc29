// Flexible sync (query-based, `com.mongodb.realm-query-sync#N`): the messages that differ from
// partition-based sync, and the error bodies a flexible-sync server sends. Pure, like the rest of the lib.
export * from './subprotocol';
export * from './messages';
export * from './compensating-writes';
export * from './errors';
