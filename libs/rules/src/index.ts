// Public entry of @tessera/rules.
export const projectName = 'rules';
