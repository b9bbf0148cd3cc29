import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { CliError, ExitCode } from './cli-error';
import { noTerminalToSelect, parseSelection, selectionMenu } from './selection';
import { realmCliDisplay, realmCliLine, realmCliLog, realmCliLogs, type RealmCliLog, type RealmCliOutput } from './realm-cli-log';

/** Somewhere text goes: stdout, stderr, or the file `-o, --output-target` names. */
export interface TextSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  /** Set on the file of `-o, --output-target`: realm-cli writes its error line there too. */
  readonly file?: string;
}

/**
 * How results are printed: `text` for people; `json`, Tessera's `--json` (the result as one JSON value, errors
 * as one JSON line on stderr); `realm-cli`, realm-cli's `-f json` (one JSON log line per message, see
 * realm-cli-log.ts).
 */
export type OutputFormat = 'text' | 'json' | 'realm-cli';

/** What the global flags ask of the output: its format, where results go, whether to style. */
export interface OutputSettings {
  format: OutputFormat;
  /** Where results go instead of stdout (`-o, --output-target`). */
  stdout?: TextSink;
  /** False with --disable-colors: no progress line redrawn in place (Tessera prints no colors to begin with). */
  styling: boolean;
}

/**
 * A file that results are appended to, as realm-cli's `-o, --output-target` opens its file (create, append).
 * The file is created at once, so an unwritable path fails before the command does anything.
 */
export function fileSink(path: string): TextSink {
  try {
    appendFileSync(path, '', { mode: 0o660 });
  } catch (error) {
    throw new CliError(`cannot write --output-target ${path}: ${error instanceof Error ? error.message : String(error)}`, ExitCode.Usage);
  }
  return { write: (text: string) => appendFileSync(path, text), file: path };
}

/**
 * Where the CLI writes: results to stdout (JSON with --json, realm-cli's log lines with -f json), messages and
 * progress to stderr. Each command hands `result` its value, its text and the realm-cli logs it stands for.
 */
export class Output {
  constructor(
    readonly format: OutputFormat,
    private readonly stdout: TextSink = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
    private readonly stdin: NodeJS.ReadStream = process.stdin,
    private readonly styling = true,
  ) {}

  /** True when the output is for programs (--json or -f json): no prompts for what flags can say, no chatter. */
  get json(): boolean {
    return this.format !== 'text';
  }

  get interactive(): boolean {
    return Boolean(this.stdin.isTTY && this.stderr.isTTY);
  }

  /**
   * A result: the JSON value with --json, realm-cli's logs with -f json (`realmCli`: the logs, or a short
   * message for a JSON document log of the value), the text otherwise.
   */
  result(value: unknown, text: string | (() => string), realmCli: RealmCliOutput): void {
    switch (this.format) {
      case 'json':
        this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
        return;
      case 'realm-cli':
        this.logs(realmCliLogs(realmCli, value));
        return;
      case 'text':
        this.stdout.write(`${typeof text === 'string' ? text : text()}\n`);
    }
  }

  /** realm-cli log lines where results go (with -f json only; streamed results such as `logs list --tail` use it). */
  logs(logs: readonly RealmCliLog[]): void {
    if (this.format !== 'realm-cli') return;
    for (const log of logs) this.stdout.write(`${realmCliLine(log)}\n`);
  }

  /** One line of a streamed result (`logs list --tail`), where results go. */
  line(text: string): void {
    this.stdout.write(`${text}\n`);
  }

  /** A line for people (stderr, so that stdout stays parseable). */
  info(message: string): void {
    if (!this.json) this.stderr.write(`${message}\n`);
  }

  /**
   * The error a command ended with. With -f json it is realm-cli's final line, `{"time","level":"error","err":
   * "<command> failed: <message>"}` (its CommandFactory.Run), on stderr and, with -o, also in the file as
   * realm-cli writes it there; the violations of an invalid app are lines of its message, as in the text form.
   */
  error(error: CliError, commandPath?: string): void {
    if (this.format === 'realm-cli') {
      const violations = (error.details.violations ?? []).map((violation) => `\n  - ${violation.file}${violation.path ? ` at ${violation.path}` : ''}: ${violation.message} (${violation.rule})`).join('');
      const line = `${realmCliLine(realmCliLog.error(`${commandPath ? `${realmCliDisplay(commandPath)} failed: ` : ''}${error.message}${violations}`))}\n`;
      this.stderr.write(line);
      if (this.stdout.file !== undefined) this.stdout.write(line);
      return;
    }
    if (this.json) {
      this.stderr.write(`${JSON.stringify({ error: error.message, error_code: error.details.errorCode, exit_code: error.exitCode, ...(error.details.violations ? { violations: error.details.violations } : {}) })}\n`);
      return;
    }
    this.stderr.write(`Error: ${error.message}\n`);
    for (const violation of error.details.violations ?? []) {
      this.stderr.write(`  - ${violation.file}${violation.path ? ` at ${violation.path}` : ''}: ${violation.message} (${violation.rule})\n`);
    }
  }

  /** A progress line on a terminal, rewritten in place; nothing when not on a terminal, with --json or with --disable-colors. */
  progress(label: string): { update(done: number, total?: number): void; finish(): void } {
    if (this.json || !this.styling || !this.stderr.isTTY) return { update: () => undefined, finish: () => undefined };
    let shown = false;
    return {
      update: (done, total) => {
        shown = true;
        const amount = total ? `${Math.floor((done / total) * 100)}% of ${formatBytes(total)}` : formatBytes(done);
        const bar = total ? `[${'#'.repeat(Math.floor((done / total) * 20)).padEnd(20, '.')}] ` : '';
        this.stderr.write(`\r${label} ${bar}${amount}   `);
      },
      finish: () => {
        if (shown) this.stderr.write('\n');
      },
    };
  }

  /** Asks yes/no on a terminal. Without a terminal it does not ask: it proceeds, as scripts expect. */
  async confirm(question: string, assumeYes: boolean): Promise<void> {
    if (assumeYes || !this.interactive) return;
    const prompt = createInterface({ input: this.stdin, output: this.stderr });
    try {
      const answer = (await prompt.question(`${question} [y/N] `)).trim().toLowerCase();
      if (answer !== 'y' && answer !== 'yes') throw new CliError('aborted: nothing was changed', ExitCode.Aborted);
    } finally {
      prompt.close();
    }
  }

  /**
   * realm-cli's multi-select: the indexes of the options picked from a numbered list on a terminal (asked
   * whatever the output format, as realm-cli asked). Without a terminal it fails with realm-cli's EOF, naming
   * `flag`, the way to name them instead.
   */
  async select(question: string, options: readonly string[], flag: string): Promise<number[]> {
    if (!this.interactive) throw noTerminalToSelect(flag);
    this.stderr.write(`${selectionMenu(question, options)}\n`);
    const prompt = createInterface({ input: this.stdin, output: this.stderr });
    try {
      for (;;) {
        const picked = parseSelection(await prompt.question(`Select by number (e.g. 1,3 or 2-4; all; blank for none): `), options.length);
        if (picked) return picked;
        this.stderr.write(`Answer with numbers from 1 to ${options.length}, ranges such as 1-2, "all", or nothing\n`);
      }
    } finally {
      prompt.close();
    }
  }

  async ask(question: string): Promise<string> {
    const prompt = createInterface({ input: this.stdin, output: this.stderr });
    try {
      return (await prompt.question(question)).trim();
    } finally {
      prompt.close();
    }
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
