// Public entry of @tessera/cli.
export const projectName = 'cli';
