// Public entry of @tessera/sync-service.
export const projectName = 'sync-service';
