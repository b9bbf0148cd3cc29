// Public entry of @tessera/cli: the `tessera` command-line tool (binary: dist/main.js).
export { runCli, buildProgram } from './program';
export { ExitCode, CliError } from './cli-error';
export { configDirectory, ProfileStore, type Profile } from './profiles';
