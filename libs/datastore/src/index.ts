// Public entry of @tessera/datastore.
export const projectName = 'datastore';
