import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleFiles } from './console-files';

describe('ConsoleFiles', () => {
  const root = mkdtempSync(join(tmpdir(), 'console-files-'));
  const dist = join(root, 'dist');
  mkdirSync(join(dist, 'assets'), { recursive: true });
  writeFileSync(join(dist, 'index.html'), '<!doctype html>');
  writeFileSync(join(dist, 'assets', 'console-0123456789ab.js'), 'export {};');
  writeFileSync(join(dist, 'assets', 'notes.md'), '# not served');
  writeFileSync(join(root, 'outside.txt'), 'outside');
  symlinkSync(join(root, 'outside.txt'), join(dist, 'linked.txt'));
  symlinkSync(root, join(dist, 'up'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('answers the files the build wrote, with their type, caching and security headers', () => {
    const files = new ConsoleFiles(dist);
    expect(files.get('index.html')?.headers).toMatchObject({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'x-frame-options': 'DENY' });
    expect(files.get('assets/console-0123456789ab.js')?.headers).toMatchObject({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable' });
    expect(files.get('index.html')?.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('answers nothing else: other types, links out of the directory, dot segments, encoded names', () => {
    const files = new ConsoleFiles(dist);
    for (const name of ['assets/notes.md', 'linked.txt', 'up/outside.txt', '../outside.txt', 'assets/../index.html', 'assets%2fconsole-0123456789ab.js', '/index.html', '', 'ASSETS/console-0123456789ab.js']) {
      expect(files.get(name), name).toBeUndefined();
    }
  });

  it('has nothing when the console is not built, finds it once it is, and serves a new build without a restart', () => {
    const later = join(root, 'later');
    const files = new ConsoleFiles(later);
    expect(files.get('index.html')).toBeUndefined();
    mkdirSync(join(later, 'assets'), { recursive: true });
    writeFileSync(join(later, 'index.html'), 'first build');
    writeFileSync(join(later, 'assets', 'console-aaaaaaaaaaaa.js'), 'first');
    expect(files.get('index.html')?.body.toString()).toBe('first build');
    writeFileSync(join(later, 'assets', 'console-bbbbbbbbbbbb.js'), 'second');
    writeFileSync(join(later, 'index.html'), 'second build');
    utimesSync(join(later, 'index.html'), new Date(), new Date(Date.now() + 5_000));
    expect(files.get('index.html')?.body.toString()).toBe('second build');
    expect(files.get('assets/console-bbbbbbbbbbbb.js')?.body.toString()).toBe('second');
  });
});
