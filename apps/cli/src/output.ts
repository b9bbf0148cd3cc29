import { createInterface } from 'node:readline/promises';
import { CliError, ExitCode } from './cli-error';

/** Where the CLI writes: results to stdout (JSON with --json), messages and progress to stderr. */
export class Output {
  constructor(
    readonly json: boolean,
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
    private readonly stdin: NodeJS.ReadStream = process.stdin,
  ) {}

  get interactive(): boolean {
    return Boolean(this.stdin.isTTY && this.stderr.isTTY);
  }

  /** A result: the JSON value with --json, the text otherwise. */
  result(value: unknown, text: string | (() => string)): void {
    this.stdout.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : `${typeof text === 'string' ? text : text()}\n`);
  }

  /** A line for people (stderr, so that stdout stays parseable). */
  info(message: string): void {
    if (!this.json) this.stderr.write(`${message}\n`);
  }

  error(error: CliError): void {
    if (this.json) {
      this.stderr.write(`${JSON.stringify({ error: error.message, error_code: error.details.errorCode, exit_code: error.exitCode, ...(error.details.violations ? { violations: error.details.violations } : {}) })}\n`);
      return;
    }
    this.stderr.write(`Error: ${error.message}\n`);
    for (const violation of error.details.violations ?? []) {
      this.stderr.write(`  - ${violation.file}${violation.path ? ` at ${violation.path}` : ''}: ${violation.message} (${violation.rule})\n`);
    }
  }

  /** A progress line on a terminal, rewritten in place; nothing when not on a terminal or with --json. */
  progress(label: string): { update(done: number, total?: number): void; finish(): void } {
    if (this.json || !this.stderr.isTTY) return { update: () => undefined, finish: () => undefined };
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
