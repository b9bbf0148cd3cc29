import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, repositoryRoot } from '@tessera/testing';

// A newcomer's broken app directory must stop the server with a message naming file, path and rule:
// never a stack trace, and nothing written to the data directory.
describe('starting with an invalid example app', () => {
  const start = (files: Record<string, string>) => {
    const app = makeTempDir('tessera-bad-app-');
    const data = makeTempDir('tessera-bad-data-');
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(app.path, path, '..'), { recursive: true });
      writeFileSync(join(app.path, path), content);
    }
    const result = spawnSync(process.execPath, ['--no-node-snapshot', 'apps/server/dist/main.js'], {
      cwd: repositoryRoot,
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', TESSERA_DATA_DIR: data.path, TESSERA_EXAMPLE_APP: app.path },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const written = readdirSync(data.path);
    app.remove();
    data.remove();
    return { status: result.status, output: `${result.stdout}${result.stderr}`, written };
  };

  const expectCleanFailure = (output: string) => {
    expect(output).toContain('Tessera failed to start: invalid app configuration');
    expect(output).not.toMatch(/\n\s+at .+:\d+:\d+/);
  };

  it('names a malformed JSON file and where it breaks', () => {
    const { status, output, written } = start({ 'config.json': '{"name": "shop",\n  "location": }\n' });
    expect(status).toBe(1);
    expect(written).toEqual([]);
    expectCleanFailure(output);
    expect(output).toMatch(/config\.json.*line 2/);
  });

  it('names an unknown field type in a schema', () => {
    const { status, output } = start({
      'config.json': '{"name":"shop"}',
      'services/mongodb-atlas/config.json': '{"name":"mongodb-atlas","type":"mongodb-atlas","config":{"clusterName":"Cluster0"}}',
      'services/mongodb-atlas/rules/shop.items.json': '{"database":"shop","collection":"items","roles":[],"schema":{"title":"Item","bsonType":"object","properties":{"price":{"bsonType":"money"}}}}',
    });
    expect(status).toBe(1);
    expectCleanFailure(output);
    expect(output).toContain('services/mongodb-atlas/rules/shop.items.json');
    expect(output).toContain('schema.properties.price.bsonType');
  });

  it('names a function without its source.js', () => {
    const { status, output } = start({ 'config.json': '{"name":"shop"}', 'functions/checkout/config.json': '{"name":"checkout"}' });
    expect(status).toBe(1);
    expectCleanFailure(output);
    expect(output).toContain('functions/checkout/source.js');
  });
});
