import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { cliWithApp, tessera, writeAppFile } from '../cli/tessera-cli';
import { startTestHost, type TestHost } from '../support/test-host';

const password = 'function-deps-cli-password';

const write = writeAppFile;

// The built `tessera` binary as a subprocess against the real host: `push --include-package-json` sends the
// app's functions with their node_modules, and an anonymous user's call of a function gets what the package
// computed in the sandbox; a native package in node_modules stops the push before anything is deployed.
describe('tessera push --include-node-modules / --include-package-json', () => {
  const work = makeTempDir('tessera-deps-cli-');
  let host: TestHost;
  let env: Record<string, string>;
  let clientAppId: string;
  const local = join(work.path, 'app');

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    ({ env, clientAppId } = await cliWithApp(host.url, password, work.path, 'deps', local));
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  it('pushes the packages package.json names with the functions, and a client call requires them', async () => {
    const functions = join(local, 'functions');
    write(join(functions, 'slug', 'config.json'), JSON.stringify({ name: 'slug', private: false }));
    write(join(functions, 'slug', 'source.js'), "exports = (title) => require('slugger')(title);");
    write(join(functions, 'package.json'), JSON.stringify({ name: 'functions', dependencies: { slugger: '1.0.0' } }));
    write(join(functions, 'node_modules', 'slugger', 'package.json'), JSON.stringify({ name: 'slugger', version: '1.0.0', dependencies: { lower: '1.0.0' } }));
    write(join(functions, 'node_modules', 'slugger', 'index.js'), "const lower = require('lower'); module.exports = (s) => lower(s).split(/\\s+/).join('-');");
    write(join(functions, 'node_modules', 'lower', 'package.json'), JSON.stringify({ name: 'lower', version: '1.0.0' }));
    write(join(functions, 'node_modules', 'lower', 'index.js'), 'module.exports = (s) => String(s).toLowerCase();');
    // Installed but not named by package.json: not uploaded, so a native module here does no harm.
    write(join(functions, 'node_modules', 'stray', 'package.json'), JSON.stringify({ name: 'stray', version: '1.0.0', gypfile: true }));
    const config = JSON.parse(readFileSync(join(local, 'config.json'), 'utf8')) as Record<string, unknown>;
    write(join(local, 'auth_providers', 'anon-user.json'), JSON.stringify({ name: 'anon-user', type: 'anon-user', disabled: false }));
    write(join(local, 'config.json'), JSON.stringify(config));

    const push = await tessera(['push', '--local', local, '--include-package-json', '--yes', '--json'], env);
    expect(push.code, push.stderr).toBe(0);

    const token = (await host.anonymousLogin(clientAppId)).accessToken;
    const call = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'slug', arguments: ['Hello Tessera World'] }),
    });
    expect(await call.json()).toBe('hello-tessera-world');

    // Now a native package is one package.json names: the push is refused, naming it, and nothing is deployed.
    write(join(functions, 'package.json'), JSON.stringify({ name: 'functions', dependencies: { slugger: '1.0.0', stray: '1.0.0' } }));
    write(join(functions, 'slug', 'source.js'), "exports = () => 'changed';");
    const refused = await tessera(['push', '--local', local, '--include-node-modules', '--include-package-json', '--yes'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/package 'stray' is a native module/);
    const again = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'slug', arguments: ['Still Here'] }),
    });
    expect(await again.json()).toBe('still-here');
  });

  // realm-cli's `push --include-package-json` with nothing installed: App Services installed the packages on its
  // side. Tessera's server installs nothing, so the CLI runs the user's npm in a directory of its own, and the
  // functions directory is left as it was. Local `file:` packages keep the test off the network.
  it('installs what package.json names when nothing is installed, and pushes that', async () => {
    const functions = join(local, 'functions');
    rmSync(join(functions, 'node_modules'), { recursive: true, force: true });
    const packages = join(work.path, 'packages');
    write(join(packages, 'shout', 'package.json'), JSON.stringify({ name: 'shout', version: '2.0.0', main: 'shout.js', dependencies: { bang: 'file:../bang' } }));
    write(join(packages, 'shout', 'shout.js'), "module.exports = (s) => String(s).toUpperCase() + require('bang');");
    write(join(packages, 'bang', 'package.json'), JSON.stringify({ name: 'bang', version: '1.0.0' }));
    write(join(packages, 'bang', 'index.js'), "module.exports = '!';");
    write(join(functions, 'package.json'), JSON.stringify({ name: 'functions', dependencies: { shout: 'file:../../packages/shout' }, devDependencies: { 'not-needed': 'file:../../missing' } }));
    write(join(functions, 'slug', 'source.js'), "exports = (s) => require('shout')(s);");

    const push = await tessera(['push', '--local', local, '--include-package-json', '--yes'], env);
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout + push.stderr).toMatch(/Installing what functions\/package\.json names \(npm install\)/);
    expect(existsSync(join(functions, 'node_modules'))).toBe(false);
    const token = (await host.anonymousLogin(clientAppId)).accessToken;
    const call = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'slug', arguments: ['hey'] }),
    });
    expect(await call.json()).toBe('HEY!');

    // A package npm cannot find fails the push with npm's own words, and nothing is deployed.
    write(join(functions, 'package.json'), JSON.stringify({ name: 'functions', dependencies: { shout: 'file:../../packages/nowhere' } }));
    write(join(functions, 'slug', 'source.js'), "exports = () => 'changed';");
    const failed = await tessera(['push', '--local', local, '--include-package-json', '--yes'], env);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/npm install of what functions\/package\.json names failed/);
    const again = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'slug', arguments: ['still'] }),
    });
    expect(await again.json()).toBe('STILL!');
  });
});
