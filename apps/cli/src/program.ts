import { Command, CommanderError, Option } from 'commander';
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
import { fileSink, Output, type OutputSettings } from './output';

const exitCodesHelp = `
Exit codes:
  0  success                        5  invalid app configuration (every violation printed)
  1  the server refused / failed    6  conflict (draft exists, sync rules locked, name taken)
  2  bad flags or arguments         7  declined at a confirmation prompt
  3  not logged in / session ended  8  server unreachable
  4  app, template or other resource not found

Environment: TESSERA_URL, TESSERA_ACCESS_TOKEN (+ TESSERA_REFRESH_TOKEN) for CI without a profile,
TESSERA_PASSWORD for login, TESSERA_CONFIG_DIR for where profiles are kept.`;

/** The global options as parsed: Tessera's own and realm-cli's inherited ones (see `globalOptions`). */
interface ParsedGlobals extends GlobalOptions {
  realmUrl?: string;
  outputFormat?: string;
  outputTarget?: string;
  disableColors?: boolean;
  yes?: boolean;
}

/**
 * The options every command takes, before or after its name: Tessera's own, then realm-cli's global flags
 * (its root command's persistent flags, realm-cli 2.6.3 `cmd/root.go`), so that its scripts run as written.
 */
function globalOptions(): Option[] {
  return [
    new Option('--profile <name>', 'the login profile to use').default('default'),
    new Option('--url <url>', "server base URL (default: the profile's, or http://localhost:8080)"),
    new Option('--realm-url <url>', "realm-cli's name for --url (its hidden base-URL flag)"),
    new Option('--atlas-url <url>', "realm-cli's Atlas base URL: no effect, as Tessera's own server (--url) answers what Atlas did"),
    new Option('--project <group id>', 'the project (group) to work in (default: your first)'),
    new Option('--json', 'print machine-readable JSON on stdout'),
    new Option('-f, --output-format <format>', 'realm-cli\'s output format: "json" prints realm-cli\'s JSON log lines ({"time","level","message",...} per message, errors as {"time","level":"error","err"} on stderr), blank (the default) is text').choices(['', 'json']),
    new Option('-o, --output-target <file>', 'write the output to this file (appended to, as realm-cli does) instead of stdout; messages and errors stay on stderr'),
    new Option('--disable-colors', 'no output styling: Tessera prints no colors or font styles; this also turns off the progress line redrawn on a terminal'),
    new Option('--telemetry <mode>', "realm-cli's usage tracking switch (on, off): accepted and ignored, as Tessera's CLI collects no usage data").choices(['', 'on', 'off', 'stdout']),
    new Option('-y, --yes', 'answer yes to every confirmation (realm-cli\'s global --yes); commands that ask nothing ignore it'),
  ];
}

/** A command's path below the program (`apps list`), as realm-cli names it in its error line. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/**
 * Whether argv asks for realm-cli's JSON lines (`-f json`, `-fjson`, `-f=json`, `--output-format json` or
 * `=json`), read before parsing so that commander's own parse errors can be printed as realm-cli's error line.
 * Tessera's --json wins, as it does after parsing. Nothing after `--` counts.
 */
export function asksForRealmCliJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  const args = end === -1 ? argv : argv.slice(0, end);
  if (args.includes('--json')) return false;
  let format: string | undefined;
  args.forEach((arg, index) => {
    if (arg === '-f' || arg === '--output-format') format = args[index + 1];
    else if (arg.startsWith('--output-format=')) format = arg.slice('--output-format='.length);
    else if (arg.startsWith('-f')) format = arg.slice(arg.startsWith('-f=') ? 3 : 2);
  });
  return format === 'json';
}

export function buildProgram(env: NodeJS.ProcessEnv, makeOutput: (settings: OutputSettings) => Output, realmCliJson = false): { program: Command; output: () => Output; running: () => string | undefined } {
  const program = new Command('tessera');
  // Under -f json, commander's parse errors (unknown option, missing argument) are printed by runCli as
  // realm-cli's error line; the setting reaches every command, as commander copies it to each one made below.
  if (realmCliJson) program.configureOutput({ outputError: () => undefined }).showHelpAfterError(false);
  let output: Output | undefined;
  // The command about to run: realm-cli's per-command --product reaches the context from it.
  let running: Command | undefined;
  const parsed = (): ParsedGlobals => program.opts<ParsedGlobals>();
  const settings = (): OutputSettings => {
    const options = parsed();
    // Tessera's --json wins over realm-cli's -f json when both are given.
    return { format: options.json === true ? 'json' : options.outputFormat === 'json' ? 'realm-cli' : 'text', styling: options.disableColors !== true };
  };
  const context = (): CliContext => {
    const { realmUrl, outputFormat: _format, outputTarget, disableColors: _colors, yes: _yes, ...options } = parsed();
    const products = running?.opts<{ product?: string[] }>().product;
    output = makeOutput({ ...settings(), ...(outputTarget !== undefined ? { stdout: fileSink(outputTarget) } : {}) });
    return new CliContext({ ...options, ...(options.url === undefined && realmUrl !== undefined ? { url: realmUrl } : {}), ...(products?.length ? { products } : {}) }, output, env);
  };
  for (const option of globalOptions()) program.addOption(option);
  program
    .description('Manage Tessera apps: log in, create, pull, push, diff, logs, secrets, data')
    .addHelpText('after', exitCodesHelp)
    .showHelpAfterError(realmCliJson ? false : '(run with --help for usage)')
    .configureHelp({ showGlobalOptions: true })
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
  program.hook('preAction', (_program, action) => {
    running = action;
    // The global -y reaches the command's own --yes (every command has one: see addRealmCliNames).
    if (parsed().yes === true) action.setOptionValue('yes', true);
  });
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return { program, output: () => output ?? makeOutput(settings()), running: () => (running ? commandPath(running) : undefined) };
}

/** Runs the CLI and returns its exit code; nothing here calls process.exit. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env, makeOutput: (settings: OutputSettings) => Output = (settings) => new Output(settings.format, settings.stdout, undefined, undefined, settings.styling)): Promise<ExitCode> {
  const realmCliJson = asksForRealmCliJson(argv);
  const { program, output, running } = buildProgram(env, makeOutput, realmCliJson);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.Ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      const failed = !(error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help' || error.exitCode === 0);
      // realm-cli (cobra) printed a parse error as its error line, without the "<command> failed:" of a command's error.
      if (failed && realmCliJson) makeOutput({ format: 'realm-cli', styling: false }).error(new CliError(error.message.replace(/^error: /, ''), ExitCode.Usage));
      return failed ? ExitCode.Usage : ExitCode.Ok;
    }
    if (error instanceof CliError) {
      output().error(error, running());
      return error.exitCode;
    }
    output().error(new CliError(`unexpected error: ${error instanceof Error ? error.message : String(error)}`), running());
    return ExitCode.Failure;
  }
}
