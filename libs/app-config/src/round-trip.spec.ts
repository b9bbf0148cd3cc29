import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApp, readAppDirectory, readAppFiles, validateApp, writeAppDirectory, writeAppFiles } from './index';
import { EXAMPLE_TODO_DIR, exampleTodo, readDirSync, text } from './__fixtures__/app-files';

describe('examples/todo', () => {
  it('reads with zero violations', () => {
    const { app, layout, violations } = loadApp(exampleTodo());
    expect(layout).toBe('current');
    expect(violations).toEqual([]);
    expect(app.settings.name).toBe('todo');
    expect(app.authProviders.map((p) => [p.name, p.type])).toEqual([
      ['anon-user', 'anon-user'],
      ['local-userpass', 'local-userpass'],
    ]);
    expect(app.authProviders[1].config).toMatchObject({ autoConfirm: true });
    expect(app.functions.map((f) => f.config.name)).toEqual(['addItem', 'greet', 'listMyItems', 'sum']);
    expect(app.functions.find((f) => f.config.name === 'greet')?.source).toContain("context.values.get('greeting')");
    const atlas = app.services[0];
    expect(atlas.config).toMatchObject({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } });
    const items = atlas.collectionRules.find((r) => r.collection === 'items');
    expect(items?.roles?.map((r) => r.name)).toEqual(['owner', 'shared-readonly']);
    expect(items?.relationships?.list_id.ref).toBe('#/relationship/mongodb-atlas/todo/lists');
    expect(app.values).toMatchObject([{ name: 'greeting', value: 'Hello' }]);
    expect(app.sync).toMatchObject({ type: 'partition', partition: { key: '_partition', type: 'string' } });
    expect(app.settings.custom_user_data_config?.mongo_service_id).toBe(atlas.config.id);
  });

  it('writes back byte-identically', () => {
    const files = exampleTodo();
    const written = writeAppFiles(readAppFiles(files).app);
    expect([...written.keys()]).toEqual([...files.keys()].sort());
    for (const [path, bytes] of files) expect(text(written, path), path).toBe(Buffer.from(bytes).toString('utf8'));
  });

  it('round-trips through a real directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'app-config-'));
    try {
      const loaded = await readAppDirectory(EXAMPLE_TODO_DIR);
      await writeAppDirectory(loaded.app, dir);
      const again = readDirSync(dir);
      const original = exampleTodo();
      expect([...again.keys()].sort()).toEqual([...original.keys()].sort());
      for (const [path, bytes] of original) expect(Buffer.compare(again.get(path)!, bytes), path).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives every resource a stable id derived from names, the same on every read', () => {
    const a = readAppFiles(exampleTodo()).app;
    const b = readAppFiles(exampleTodo()).app;
    expect(a.functions.map((f) => f.config.id)).toEqual(b.functions.map((f) => f.config.id));
    for (const f of a.functions) expect(f.config.id).toMatch(/^[0-9a-f]{24}$/);
    expect(validateApp(a)).toEqual([]);
  });

  it('sets config_version on write whatever the model says', () => {
    const app = readAppFiles(exampleTodo()).app;
    app.settings.config_version = 1;
    const config = JSON.parse(text(writeAppFiles(app), 'config.json'));
    expect(config.config_version).toBe(20210101);
  });
});
