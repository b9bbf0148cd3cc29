// The process host: runs every service (standalone) or the named ones (distributed) behind one HTTP edge.
export * from './host';
export type { ServiceReplacements } from './host.module';
export { AppWireService } from './wire/app-wire.service';
export { DatastoreWireService } from './datastore-service';
