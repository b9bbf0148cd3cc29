// The function runtime's test doubles, for specs, end-to-end tests and benches only: imported as
// `@tessera/function-runtime/testing` (or relatively inside the app's specs), never through the public index,
// so production code cannot reach them (eslint.config.mjs refuses a `testing/` import outside specs).
export * from './in-memory-ports';
export * from './in-memory-execution-logs';
export * from './runtime-fixture';
