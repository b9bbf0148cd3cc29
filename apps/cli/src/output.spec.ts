import { Output } from './output';
import { CliError, ExitCode, exitCodeFor } from './cli-error';
import { goDuration, goUtcString, logsDate, realmCliLog } from './realm-cli-log';

function stream(isTTY: boolean): NodeJS.WriteStream & { text: string } {
  const sink = { isTTY, text: '', write(chunk: string) { sink.text += chunk; return true; } };
  return sink as unknown as NodeJS.WriteStream & { text: string };
}

describe('Output', () => {
  it('draws a progress bar on a terminal and nothing otherwise', () => {
    const tty = stream(true);
    const progress = new Output('text', stream(false), tty, { isTTY: true } as NodeJS.ReadStream).progress('Downloading app');
    progress.update(512, 2048);
    progress.update(2048, 2048);
    progress.finish();
    expect(tty.text).toContain('Downloading app [#####...............] 25% of 2.0 KB');
    expect(tty.text).toContain('[####################] 100% of 2.0 KB');
    const pipe = stream(false);
    const quiet = new Output('text', stream(false), pipe).progress('Downloading app');
    quiet.update(1, 2);
    quiet.finish();
    expect(pipe.text).toBe('');
  });

  it('prints results as JSON with --json and errors as one JSON line with the exit code', () => {
    const out = stream(false);
    const err = stream(false);
    const output = new Output('json', out, err);
    output.result({ a: 1 }, 'text', 'A');
    output.error(new CliError('bad', ExitCode.InvalidConfiguration, { errorCode: 'InvalidConfiguration', violations: [{ file: 'f.json', path: 'name', rule: 'r', message: 'm' }] }));
    expect(JSON.parse(out.text)).toEqual({ a: 1 });
    expect(JSON.parse(err.text)).toEqual({ error: 'bad', error_code: 'InvalidConfiguration', exit_code: 5, violations: [{ file: 'f.json', path: 'name', rule: 'r', message: 'm' }] });
  });

  it('lists every violation under the error for people', () => {
    const err = stream(false);
    new Output('text', stream(false), err).error(new CliError('invalid app configuration: 1 violation', ExitCode.InvalidConfiguration, { violations: [{ file: 'triggers/t.json', path: 'function_name', rule: 'trigger.function.missing', message: 'function "x" does not exist' }] }));
    expect(err.text).toBe('Error: invalid app configuration: 1 violation\n  - triggers/t.json at function_name: function "x" does not exist (trigger.function.missing)\n');
  });

  it('does not ask when there is no terminal', async () => {
    await expect(new Output('text', stream(false), stream(false), { isTTY: false } as NodeJS.ReadStream).confirm('Deploy?', false)).resolves.toBeUndefined();
  });
});

describe('Output with -f json (realm-cli log lines)', () => {
  const lines = (text: string): Record<string, unknown>[] => text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  const print = (realmCli: Parameters<Output['result']>[2], value: unknown = { a: 1 }): Record<string, unknown>[] => {
    const out = stream(false);
    new Output('realm-cli', out, stream(false)).result(value, 'text', realmCli);
    return lines(out.text);
  };

  it('prints a text log as time, level and message, in that order', () => {
    const [line] = print(realmCliLog.text('Successfully logged in'));
    expect(Object.keys(line)).toEqual(['time', 'level', 'message']);
    expect(line).toMatchObject({ level: 'info', message: 'Successfully logged in' });
    expect(new Date(line['time'] as string).toISOString()).toBe(line['time']);
  });

  it('prints a list log with its items as text, and a follow-up list at level debug', () => {
    const [found, followup] = print([realmCliLog.list('Found 2 apps', ['a-abcde (g1)', 7]), realmCliLog.followup('Try instead', ['tessera push'])]);
    expect(Object.keys(found)).toEqual(['time', 'level', 'message', 'data']);
    expect(found).toMatchObject({ level: 'info', message: 'Found 2 apps', data: ['a-abcde (g1)', '7'] });
    expect(followup).toMatchObject({ level: 'debug', message: 'Try instead', data: ['tessera push'] });
  });

  it('prints a Go string slice given as one list item as Go does: "[first second]"', () => {
    expect(print(realmCliLog.list('Logs', [['hello', 'world']]))[0]['data']).toEqual(['[hello world]']);
  });

  it('prints a table log with its rows as text cells of its headers only, then the headers', () => {
    const [line] = print(realmCliLog.table('Found 1 secrets', ['ID', 'Name'], [{ ID: 's1', Name: 'token', extra: 'x' }, {}]));
    expect(Object.keys(line)).toEqual(['time', 'level', 'message', 'data', 'headers']);
    expect(line).toMatchObject({ message: 'Found 1 secrets', headers: ['ID', 'Name'], data: [{ ID: 's1', Name: 'token' }] });
    const [cells] = print(realmCliLog.table('Provider type: User/Password', ['Email', 'Enabled', 'Details'], [{ Email: undefined, Enabled: false }]));
    expect(cells['data']).toEqual([{ Details: '', Email: '', Enabled: 'false' }]);
  });

  it('prints a JSON document log, and a message alone as a document of the result', () => {
    const [described] = print(realmCliLog.doc('App description', { name: 'x' }));
    expect(Object.keys(described)).toEqual(['time', 'level', 'message', 'doc']);
    expect(described).toMatchObject({ message: 'App description', doc: { name: 'x' } });
    expect(print('Triggers', [{ name: 't' }])).toEqual([expect.objectContaining({ level: 'info', message: 'Triggers', doc: [{ name: 't' }] })]);
    expect(print(realmCliLog.doc('Result', undefined))[0]['doc']).toBeNull();
  });

  it('prints a warning at level warn, and nothing for people on stderr', () => {
    const err = stream(false);
    const out = stream(false);
    const output = new Output('realm-cli', out, err);
    output.info('Comparing...');
    output.result(null, 'text', [realmCliLog.warning('careful'), realmCliLog.debug('by the way')]);
    expect(lines(out.text).map((line) => [line['level'], line['message']])).toEqual([['warn', 'careful'], ['debug', 'by the way']]);
    expect(err.text).toBe('');
  });

  it('prints the error as realm-cli\'s error line on stderr, named after realm-cli\'s command, and into the -o file too', () => {
    const err = stream(false);
    const out = stream(false);
    new Output('realm-cli', out, err).error(new CliError('app not found: "x"', ExitCode.NotFound), 'apps describe');
    const [line] = lines(err.text);
    expect(Object.keys(line)).toEqual(['time', 'level', 'err']);
    expect(line).toMatchObject({ level: 'error', err: 'app describe failed: app not found: "x"' });
    expect(out.text).toBe('');
    const file = Object.assign(stream(false), { file: 'out.json' });
    new Output('realm-cli', file, stream(false)).error(new CliError('bad', ExitCode.InvalidConfiguration, { violations: [{ file: 'f.json', path: 'name', rule: 'r', message: 'm' }] }), 'push');
    expect(lines(file.text)).toEqual([expect.objectContaining({ level: 'error', err: 'push failed: bad\n  - f.json at name: m (r)' })]);
  });

  it("formats durations, log dates and Unix times as realm-cli's Go code does", () => {
    expect([0, 12, 1500, 65_250, 3_725_000].map(goDuration)).toEqual(['0s', '12ms', '1.5s', '1m5.25s', '1h2m5s']);
    expect(logsDate(new Date('2024-03-05T07:08:09.012Z'))).toBe('2024-03-05T07:08:09.012+0000');
    expect(goUtcString(1_700_000_000)).toBe('2023-11-14 22:13:20 +0000 UTC');
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
