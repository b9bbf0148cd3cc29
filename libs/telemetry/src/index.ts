// Public entry of @tessera/telemetry.
export const projectName = 'telemetry';
