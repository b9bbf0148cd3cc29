import { Command, CommanderError } from 'commander';
import { CliError, ExitCode } from './cli-error';
import { registerAppsCommands } from './commands/apps.command';
import { registerAuthCommands } from './commands/auth.command';
import { registerDataCommands } from './commands/data.command';
import { registerManageCommands } from './commands/manage.command';
import { registerAccessListCommands } from './commands/access-list.command';
import { addRealmCliNames, registerProfilesCommand } from './commands/realm-cli-names';
import { registerSchemaCommands } from './commands/schema.command';
import { registerSyncCommands } from './commands/sync.command';
import { registerTransferCommands } from './commands/transfer.command';
import { registerTriggerCommands } from './commands/triggers.command';
import { CliContext, type GlobalOptions } from './context';
import { Output } from './output';

const exitCodesHelp = `
Exit codes:
  0  success                        5  invalid app configuration (every violation printed)
  1  the server refused / failed    6  conflict (draft exists, sync rules locked, name taken)
  2  bad flags or arguments         7  declined at a confirmation prompt
  3  not logged in / session ended  8  server unreachable
  4  app, template or other resource not found

Environment: TESSERA_URL, TESSERA_ACCESS_TOKEN (+ TESSERA_REFRESH_TOKEN) for CI without a profile,
TESSERA_PASSWORD for login, TESSERA_CONFIG_DIR for where profiles are kept.`;

export function buildProgram(env: NodeJS.ProcessEnv, makeOutput: (json: boolean) => Output): { program: Command; output: () => Output } {
  const program = new Command('tessera');
  let output: Output | undefined;
  const context = (): CliContext => {
    const options = program.opts<GlobalOptions>();
    output = makeOutput(options.json === true);
    return new CliContext(options, output, env);
  };
  program
    .description('Manage Tessera apps: log in, create, pull, push, diff, logs, secrets, data')
    .option('--profile <name>', 'the login profile to use', 'default')
    .option('--url <url>', 'server base URL (default: the profile\'s, or http://localhost:8080)')
    .option('--project <group id>', 'the project (group) to work in (default: your first)')
    .option('--json', 'print machine-readable JSON on stdout')
    .addHelpText('after', exitCodesHelp)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerAuthCommands(program, context);
  registerAppsCommands(program, context);
  registerTransferCommands(program, context);
  registerManageCommands(program, context);
  registerAccessListCommands(program, context);
  registerTriggerCommands(program, context);
  registerSyncCommands(program, context);
  registerSchemaCommands(program, context);
  registerDataCommands(program, context);
  registerProfilesCommand(program, context);
  addRealmCliNames(program);
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return { program, output: () => output ?? makeOutput(program.opts<GlobalOptions>().json === true) };
}

/** Runs the CLI and returns its exit code; nothing here calls process.exit. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env, makeOutput: (json: boolean) => Output = (json) => new Output(json)): Promise<ExitCode> {
  const { program, output } = buildProgram(env, makeOutput);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.Ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help' || error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
    }
    if (error instanceof CliError) {
      output().error(error);
      return error.exitCode;
    }
    output().error(new CliError(`unexpected error: ${error instanceof Error ? error.message : String(error)}`));
    return ExitCode.Failure;
  }
}
