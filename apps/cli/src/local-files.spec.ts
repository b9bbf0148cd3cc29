import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { appDirectory, readLocalFiles, replaceLocalFiles, unzip, zip } from './local-files';

describe('local app directories', () => {
  it('reads app files, skipping hidden entries and node_modules', async () => {
    const dir = makeTempDir();
    try {
      mkdirSync(join(dir.path, '.git'));
      mkdirSync(join(dir.path, 'node_modules', 'x'), { recursive: true });
      mkdirSync(join(dir.path, 'functions', 'f'), { recursive: true });
      writeFileSync(join(dir.path, '.git', 'HEAD'), 'ref');
      writeFileSync(join(dir.path, 'node_modules', 'x', 'i.js'), '');
      writeFileSync(join(dir.path, 'config.json'), '{}');
      writeFileSync(join(dir.path, 'functions', 'f', 'source.js'), 'exports = 1;');
      expect([...(await readLocalFiles(dir.path)).keys()].sort()).toEqual(['config.json', 'functions/f/source.js']);
    } finally {
      dir.remove();
    }
  });

  it('reads the dot entries of hosted files (/.well-known), but not macOS folder metadata', async () => {
    const dir = makeTempDir();
    try {
      mkdirSync(join(dir.path, 'hosting', 'files', '.well-known'), { recursive: true });
      writeFileSync(join(dir.path, 'config.json'), '{}');
      writeFileSync(join(dir.path, '.DS_Store'), '');
      writeFileSync(join(dir.path, 'hosting', 'files', '.DS_Store'), '');
      writeFileSync(join(dir.path, 'hosting', 'files', 'index.html'), '<h1>site</h1>');
      writeFileSync(join(dir.path, 'hosting', 'files', '.well-known', 'apple-app-site-association'), '{}');
      expect([...(await readLocalFiles(dir.path)).keys()].sort()).toEqual(['config.json', 'hosting/files/.well-known/apple-app-site-association', 'hosting/files/index.html']);
    } finally {
      dir.remove();
    }
  });

  it('replaces the app files but keeps hidden entries, and finds backend/ of a template directory', async () => {
    const dir = makeTempDir();
    try {
      mkdirSync(join(dir.path, 'backend', '.git'), { recursive: true });
      writeFileSync(join(dir.path, 'backend', 'stale.json'), '{}');
      await replaceLocalFiles(join(dir.path, 'backend'), unzip(zip(new Map([['config.json', new TextEncoder().encode('{"name":"a"}')]]))));
      expect(existsSync(join(dir.path, 'backend', 'stale.json'))).toBe(false);
      expect(existsSync(join(dir.path, 'backend', '.git'))).toBe(true);
      expect(readFileSync(join(dir.path, 'backend', 'config.json'), 'utf8')).toBe('{"name":"a"}');
      expect(await appDirectory(dir.path)).toBe(join(dir.path, 'backend'));
    } finally {
      dir.remove();
    }
  });

  it('refuses to write outside the directory', async () => {
    const dir = makeTempDir();
    try {
      await expect(replaceLocalFiles(join(dir.path, 'app'), new Map([['../escape.txt', new Uint8Array()]]))).rejects.toThrow('refusing to write outside');
    } finally {
      dir.remove();
    }
  });
});
