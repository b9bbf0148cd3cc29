import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { readDependencyArchive } from './dependency-archive';
import { buildDependencyBundle } from './dependency-bundle';

const text = (files: Record<string, string>): Map<string, Uint8Array> => new Map(Object.entries(files).map(([path, content]) => [path, Buffer.from(content)]));
const pkg = (name: string, extra: Record<string, unknown> = {}): string => JSON.stringify({ name, version: '1.0.0', ...extra });

describe('dependency bundle', () => {
  it('keeps only the packages package.json names and their dependencies, and only loadable files', () => {
    const { bundle, list } = buildDependencyBundle(
      text({
        'package.json': JSON.stringify({ dependencies: { a: '1' } }),
        'node_modules/a/package.json': pkg('a', { dependencies: { b: '1' } }),
        'node_modules/a/index.js': "require('b')",
        'node_modules/a/README.md': '# a',
        'node_modules/a/esm.mjs': 'export {}',
        'node_modules/b/package.json': pkg('b'),
        'node_modules/b/data.json': '{}',
        'node_modules/unused/package.json': pkg('unused', { gypfile: true }),
        'node_modules/unused/index.js': '',
      }),
    );
    expect(Object.keys(bundle.files).sort()).toEqual(['a/index.js', 'a/package.json', 'b/data.json', 'b/package.json']);
    expect(list).toEqual([{ name: 'a', version: '1.0.0' }]);
  });

  it('refuses a tree missing a dependency, naming both packages', () => {
    expect(() => buildDependencyBundle(text({ 'node_modules/a/package.json': pkg('a', { dependencies: { gone: '1' } }) }))).toThrow("package 'a' depends on 'gone', which is not in node_modules");
  });

  it('refuses package.json alone: nothing is installed from the registry', () => {
    expect(() => buildDependencyBundle(text({ 'package.json': JSON.stringify({ dependencies: { a: '1' } }) }))).toThrow(/does not install packages from the npm registry/);
  });

  it('finds scoped and nested packages as Node does', () => {
    const { bundle } = buildDependencyBundle(
      text({
        'node_modules/@s/x/package.json': pkg('@s/x', { dependencies: { y: '2' } }),
        'node_modules/@s/x/index.js': '',
        'node_modules/@s/x/node_modules/y/package.json': pkg('y'),
        'node_modules/@s/x/node_modules/y/index.js': '',
      }),
    );
    expect(Object.keys(bundle.files).sort()).toEqual(['@s/x/index.js', '@s/x/node_modules/y/index.js', '@s/x/node_modules/y/package.json', '@s/x/package.json']);
  });

  it('reads a tar.gz made by tar, as realm-cli takes functions/node_modules.tar.gz', () => {
    const dir = makeTempDir('deps-tar-');
    try {
      mkdirSync(join(dir.path, 'node_modules', 'a'), { recursive: true });
      writeFileSync(join(dir.path, 'node_modules', 'a', 'package.json'), pkg('a'));
      writeFileSync(join(dir.path, 'node_modules', 'a', 'index.js'), 'module.exports = 1;');
      execFileSync('tar', ['-czf', 'node_modules.tar.gz', 'node_modules'], { cwd: dir.path });
      const files = readDependencyArchive(readFileSync(join(dir.path, 'node_modules.tar.gz')));
      expect(Buffer.from(files.get('node_modules/a/index.js') ?? []).toString()).toBe('module.exports = 1;');
      expect(buildDependencyBundle(files).list).toEqual([{ name: 'a', version: '1.0.0' }]);
    } finally {
      dir.remove();
    }
  });
});
