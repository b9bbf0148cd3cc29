import { Output } from './output';
import { CliError, ExitCode, exitCodeFor } from './cli-error';

function stream(isTTY: boolean): NodeJS.WriteStream & { text: string } {
  const sink = { isTTY, text: '', write(chunk: string) { sink.text += chunk; return true; } };
  return sink as unknown as NodeJS.WriteStream & { text: string };
}

describe('Output', () => {
  it('draws a progress bar on a terminal and nothing otherwise', () => {
    const tty = stream(true);
    const progress = new Output(false, stream(false), tty, { isTTY: true } as NodeJS.ReadStream).progress('Downloading app');
    progress.update(512, 2048);
    progress.update(2048, 2048);
    progress.finish();
    expect(tty.text).toContain('Downloading app [#####...............] 25% of 2.0 KB');
    expect(tty.text).toContain('[####################] 100% of 2.0 KB');
    const pipe = stream(false);
    const quiet = new Output(false, stream(false), pipe).progress('Downloading app');
    quiet.update(1, 2);
    quiet.finish();
    expect(pipe.text).toBe('');
  });

  it('prints results as JSON with --json and errors as one JSON line with the exit code', () => {
    const out = stream(false);
    const err = stream(false);
    const output = new Output(true, out, err);
    output.result({ a: 1 }, 'text');
    output.error(new CliError('bad', ExitCode.InvalidConfiguration, { errorCode: 'InvalidConfiguration', violations: [{ file: 'f.json', path: 'name', rule: 'r', message: 'm' }] }));
    expect(JSON.parse(out.text)).toEqual({ a: 1 });
    expect(JSON.parse(err.text)).toEqual({ error: 'bad', error_code: 'InvalidConfiguration', exit_code: 5, violations: [{ file: 'f.json', path: 'name', rule: 'r', message: 'm' }] });
  });

  it('lists every violation under the error for people', () => {
    const err = stream(false);
    new Output(false, stream(false), err).error(new CliError('invalid app configuration: 1 violation', ExitCode.InvalidConfiguration, { violations: [{ file: 'triggers/t.json', path: 'function_name', rule: 'trigger.function.missing', message: 'function "x" does not exist' }] }));
    expect(err.text).toBe('Error: invalid app configuration: 1 violation\n  - triggers/t.json at function_name: function "x" does not exist (trigger.function.missing)\n');
  });

  it('does not ask when there is no terminal', async () => {
    await expect(new Output(false, stream(false), stream(false), { isTTY: false } as NodeJS.ReadStream).confirm('Deploy?', false)).resolves.toBeUndefined();
  });
});

describe('exitCodeFor', () => {
  it('maps App Services error codes and statuses to the documented exit codes', () => {
    expect(exitCodeFor('InvalidSession', 401)).toBe(ExitCode.Auth);
    expect(exitCodeFor('TemplateNotFound', 400)).toBe(ExitCode.NotFound);
    expect(exitCodeFor('InvalidConfiguration', 400)).toBe(ExitCode.InvalidConfiguration);
    expect(exitCodeFor('SyncRulesLocked', 409)).toBe(ExitCode.Conflict);
    expect(exitCodeFor(undefined, 404)).toBe(ExitCode.NotFound);
    expect(exitCodeFor('Whatever', 500)).toBe(ExitCode.Failure);
  });
});
