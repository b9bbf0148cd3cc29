// Server settings: the one place the environment is read and validated.
export * from './settings';
