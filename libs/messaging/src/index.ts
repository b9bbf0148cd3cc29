// Public entry of @tessera/messaging: the two transports of the contracts (NATS and in-process) as Nest
// microservice transports, the typed MessageBus facade, and typed handler decorators. Services import this,
// never nats or the in-process bus directly.
export { abandonRequest, RequestAbandonment } from './cancellation';
export * from './ejson';
export * from './data-source-numbers';
export * from './errors';
export * from './function-calls';
export * from './handlers';
export * from './in-process/in-process-bus';
export * from './in-process/in-process.client';
export * from './in-process/in-process.context';
export * from './in-process/in-process.server';
export * from './message-bus';
export * from './message-context';
export * from './messaging.module';
export * from './nats/nats.client';
export * from './nats/nats.server';
export * from './outbound-message';
export * from './jetstream/durable-events';
export * from './jetstream/durable-events.port';
export * from './jetstream/in-process-durable-events';
export * from './jetstream/durable-events.module';
export * from './readiness';
