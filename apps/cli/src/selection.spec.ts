import { PassThrough } from 'node:stream';
import { Output } from './output';
import { asksForRealmCliJson } from './program';
import { parseSelection } from './selection';

function terminal(): NodeJS.WriteStream & { text: string } {
  const sink = { isTTY: true, text: '', write(chunk: string) { sink.text += chunk; return true; }, on: () => sink, once: () => sink, removeListener: () => sink, columns: 80 };
  return sink as unknown as NodeJS.WriteStream & { text: string };
}

describe('parseSelection', () => {
  it('reads numbers, ranges and "all", and a blank answer as none', () => {
    expect(parseSelection('1,3', 4)).toEqual([0, 2]);
    expect(parseSelection(' 2-4 1 ', 4)).toEqual([0, 1, 2, 3]);
    expect(parseSelection('all', 3)).toEqual([0, 1, 2]);
    expect(parseSelection('', 3)).toEqual([]);
  });

  it('refuses numbers out of range and words, so that the question is asked again', () => {
    expect(parseSelection('0', 3)).toBeUndefined();
    expect(parseSelection('4', 3)).toBeUndefined();
    expect(parseSelection('3-1', 3)).toBeUndefined();
    expect(parseSelection('yes', 3)).toBeUndefined();
  });
});

describe('Output.select', () => {
  it('lists the options by number on a terminal and returns those picked, asking again after a bad answer', async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true }) as unknown as NodeJS.ReadStream;
    const err = terminal();
    const output = new Output('text', terminal(), err, input);
    const picked = output.select('Which user(s) would you like to delete?', ['User/Password - a@x - 1', 'User/Password - b@x - 2', 'Anonymous - 3'], '-u, --user');
    (input as unknown as PassThrough).write('9\n');
    await vi.waitFor(() => expect(err.text).toContain('Answer with numbers from 1 to 3'));
    (input as unknown as PassThrough).write('1,3\n');
    await expect(picked).resolves.toEqual([0, 2]);
    expect(err.text).toContain('? Which user(s) would you like to delete?\n  1) User/Password - a@x - 1\n  2) User/Password - b@x - 2\n  3) Anonymous - 3\n');
    expect(err.text).toContain('Answer with numbers from 1 to 3');
  });

  it("fails as realm-cli's prompt did without a terminal (EOF), naming the flag, whatever -y says", async () => {
    const output = new Output('text', terminal(), terminal(), { isTTY: false } as NodeJS.ReadStream);
    await expect(output.select('Select App(s)', ['a (g)'], '-a, --app')).rejects.toMatchObject({ message: 'EOF: no terminal to ask on; name them with -a, --app', exitCode: 2 });
  });
});

describe('asksForRealmCliJson', () => {
  it('finds -f json in every spelling before parsing, and lets --json win', () => {
    for (const argv of [['-f', 'json', 'apps', 'list'], ['apps', 'list', '-fjson'], ['-f=json'], ['--output-format', 'json'], ['--output-format=json']]) expect(asksForRealmCliJson(argv)).toBe(true);
    for (const argv of [['apps', 'list'], ['-f', '', 'apps'], ['--json', '-f', 'json'], ['function', 'run', '--', '-f', 'json']]) expect(asksForRealmCliJson(argv)).toBe(false);
  });
});
