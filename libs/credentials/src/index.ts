// Public entry of @tessera/credentials: what proves who a caller is, without keeping anything: HS256 tokens
// and the per-purpose keys that sign them, scrypt password hashes, and the login throttle. The stores that
// keep users, keys and hashes live in @tessera/platform. Only node:crypto: no framework, no store.
export * from './jwt';
export * from './signing-key';
export * from './passwords';
export * from './login-throttle';
