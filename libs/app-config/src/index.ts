// Public entry of @tessera/app-config.
export const projectName = 'app-config';
