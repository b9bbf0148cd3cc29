import { diffAppFiles } from './file-diff';

const files = (entries: Record<string, string>) => new Map(Object.entries(entries).map(([path, text]) => [path, new TextEncoder().encode(text)]));

describe('diffAppFiles', () => {
  it('reports added, removed and modified files with their changed lines only', () => {
    const before = files({ 'a.js': 'one\ntwo\nthree\n', 'gone.json': '{}\n', 'same.txt': 'x\n' });
    const after = files({ 'a.js': 'one\n2\nthree\n', 'new.json': '{\n  "k": 1\n}\n', 'same.txt': 'x\n' });
    expect(diffAppFiles(before, after)).toEqual(['~ modified a.js\n-two\n+2', '- removed gone.json\n-{}', '+ added new.json\n+{\n+  "k": 1\n+}']);
  });

  it('is empty when nothing changes', () => {
    expect(diffAppFiles(files({ a: 'b' }), files({ a: 'b' }))).toEqual([]);
  });
});
