// The data-access API callers use: datastore operations by wire name, with the app's rules applied to users.
export * from './data-access.error';
export * from './data-access.service';
export * from './namespace-rules';
export * from './restrictions';
export * from './user-transaction';
export * from './field-references';
export { UserChangeFeed, checkWatchFilter, type WatchArguments } from './watch-events';
export * from './data-access.module';
