// Public entry of @tessera/contracts.
export const projectName = 'contracts';
