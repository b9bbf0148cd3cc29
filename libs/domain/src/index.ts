// Domain types shared by every service: plain data and errors, no framework, no I/O.
export * from './errors';
export * from './cancellation';
