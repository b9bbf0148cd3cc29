// Public entry of @tessera/settings.
export const projectName = 'settings';
