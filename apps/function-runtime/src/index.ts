// Public entry of @tessera/function-runtime.
export const projectName = 'function-runtime';
