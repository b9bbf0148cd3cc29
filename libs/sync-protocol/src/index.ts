// Public entry of @tessera/sync-protocol.
export const projectName = 'sync-protocol';
