// Public entry of @tessera/admin-api.
export const projectName = 'admin-api';
