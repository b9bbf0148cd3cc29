// Public entry of @tessera/messaging.
export const projectName = 'messaging';
