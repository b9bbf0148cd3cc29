import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { AdminSession } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';

// The real host (admin API, function runtime with its isolates, platform database) on a random port: an app's
// node_modules goes up through the admin API's dependencies endpoint and its functions require the packages
// inside the sandbox, run through realm-cli's `function run` call.

const password = 'function-deps-password';

type Tree = Record<string, string | Uint8Array>;

const json = (value: unknown): string => JSON.stringify(value);

/** A pure-JS tree: a left-pad-like package, one with a nested dependency, JSON and an `exports` map, and one using built-ins. */
const pureTree: Tree = {
  'node_modules/pad-left/package.json': json({ name: 'pad-left', version: '1.2.3', main: 'lib/pad.js' }),
  'node_modules/pad-left/lib/pad.js': "module.exports = function pad(s, n, c) { s = String(s); while (s.length < n) s = (c || ' ') + s; return s; };",
  'node_modules/greeter/package.json': json({ name: 'greeter', version: '2.0.0', dependencies: { 'pad-left': '^0.1.0' }, exports: { '.': { import: './esm.mjs', require: './cjs/index.js' }, './words': './words.json' } }),
  'node_modules/greeter/cjs/index.js': "const pad = require('pad-left'); const words = require('../words.json'); const { shout } = require('./shout'); exports.greet = (n) => shout(words.hello + ' ' + pad(n, 6, '.'));",
  'node_modules/greeter/cjs/shout.js': 'exports.shout = (s) => s.toUpperCase();',
  'node_modules/greeter/words.json': json({ hello: 'hello' }),
  'node_modules/greeter/esm.mjs': 'export const greet = () => "esm";',
  // greeter's own, older pad-left: Node's nearest-node_modules-first lookup must pick it.
  'node_modules/greeter/node_modules/pad-left/package.json': json({ name: 'pad-left', version: '0.1.0' }),
  'node_modules/greeter/node_modules/pad-left/index.js': "module.exports = (s, n, c) => String(s).padStart(n, c || '-') + '!';",
  'node_modules/hasher/package.json': json({ name: 'hasher', version: '1.0.0' }),
  'node_modules/hasher/index.js':
    "const util = require('util'); const crypto = require('crypto'); const { EventEmitter } = require('events'); const path = require('node:path'); const qs = require('querystring'); const zlib = require('zlib');" +
    "function Em() { EventEmitter.call(this); } util.inherits(Em, EventEmitter); class Loud extends EventEmitter {}" +
    "module.exports = (s) => { const e = new Em(); const l = new Loud(); let seen; e.on('x', (v) => { seen = v; }); l.once('y', (v) => e.emit('x', v)); l.emit('y', 'heard'); l.emit('y', 'twice');" +
    " return [util.format('%s=%d', 'n', 42), crypto.createHash('sha256').update(s).digest('hex'), seen, path.join('/a', '../b', 'c.js'), qs.stringify({ a: [1, 2] }), zlib.gunzipSync(zlib.gzipSync(Buffer.from(s))).toString()]; };",
};

function zipTree(tree: Tree): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(tree).map(([path, content]) => [path, typeof content === 'string' ? Buffer.from(content) : content])));
}

function multipart(file: Uint8Array, filename = 'node_modules.zip'): { contentType: string; body: Uint8Array<ArrayBuffer> } {
  const boundary = `deps${Math.random().toString(16).slice(2)}`;
  const body = new Uint8Array(Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n\r\n`), Buffer.from(file), Buffer.from(`\r\n--${boundary}--\r\n`)]));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body };
}

describe('function dependencies (admin API upload, require in the sandbox)', () => {
  let host: TestHost;
  let admin: AdminSession;

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    admin = await AdminSession.login(host, 'admin', password);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  async function appWith(name: string, functions: Record<string, string>): Promise<string> {
    const app = await admin.createApp(name);
    for (const [fn, source] of Object.entries(functions)) {
      const created = await admin.request('POST', admin.app(app._id, '/functions'), { name: fn, private: false, source });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    return app._id;
  }

  async function upload(appId: string, archive: Uint8Array, filename?: string, token?: string): Promise<Response> {
    const { contentType, body } = multipart(archive, filename);
    return fetch(`${admin.baseUrl}${admin.app(appId, '/dependencies')}`, { method: 'PUT', headers: { authorization: `Bearer ${token ?? admin.accessToken}`, 'content-type': contentType }, body });
  }

  const run = (appId: string, name: string, args: unknown[] = []) => admin.request<{ result?: unknown; error?: string; error_code?: string }>('POST', admin.app(appId, '/debug/execute_function?run_as_system=true'), { name, arguments: args });

  it('lets a function require an uploaded pure-JS package, with nested dependencies, exports maps and JSON', async () => {
    const appId = await appWith('deps-pure', {
      usePad: "exports = (s) => require('pad-left')(s, 5, '0');",
      useGreeter: "exports = (n) => require('greeter').greet(n) + ' ' + require('greeter/words').hello;",
    });
    const uploaded = zipTree(pureTree);
    const response = await upload(appId, uploaded);
    expect(response.status, await response.clone().text()).toBe(204);

    expect((await run(appId, 'usePad', ['42'])).body.result).toBe('00042');
    // greeter gets its own pad-left 0.1.0 (padStart + '!'), not the top-level one; `require` picks the CommonJS export.
    expect((await run(appId, 'useGreeter', ['ada'])).body.result).toBe('HELLO ...ADA! hello');

    const summary = await admin.request<{ dependencies_list: { name: string; version: string }[] }>('GET', admin.app(appId, '/dependencies'));
    expect(summary.body.dependencies_list).toEqual([
      { name: 'greeter', version: '2.0.0' },
      { name: 'hasher', version: '1.0.0' },
      { name: 'pad-left', version: '1.2.3' },
    ]);
    expect((await admin.request('GET', admin.app(appId, '/dependencies/status'))).body).toEqual({ status: 'successful', status_message: '' });
    const archive = await admin.request('GET', admin.app(appId, '/dependencies/archive'));
    expect(archive.status).toBe(200);
    expect(Buffer.from(archive.bytes).equals(Buffer.from(uploaded))).toBe(true);
  });

  it("gives packages Node's util, crypto, events, path, querystring and zlib", async () => {
    const appId = await appWith('deps-builtins', { hash: "exports = (s) => require('hasher')(s);" });
    expect((await upload(appId, zipTree(pureTree))).status).toBe(204);
    const { body } = await run(appId, 'hash', ['abc']);
    expect(body.result).toEqual(['n=42', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'heard', '/b/c.js', 'a=1&a=2', 'abc']);
  });

  it('runs a function that opens with ES import declarations, as App Services compiled it (Babel)', async () => {
    const source = [
      "import padLeft from 'pad-left';",
      'import { greet } from "greeter";',
      "import * as path from 'path';",
      '',
      'exports = (s) => [padLeft(s, 5, "0"), greet("ada"), path.join("/a", "b")];',
    ].join('\n');
    const appId = await appWith('deps-imports', { imports: source, broken: "import padLeft from 'pad-left';\nexports = () => { throw new Error('line two'); };" });
    expect((await upload(appId, zipTree(pureTree))).status).toBe(204);
    expect((await run(appId, 'imports', ['42'])).body.result).toEqual(['00042', 'HELLO ...ADA!', '/a/b']);
    expect((await run(appId, 'broken')).body.error).toBe('line two');
    expect((await admin.pull(appId)).get('functions/imports/source.js')).toBe(source);
  });

  it("fails a require of a module that is not there as Node does: Cannot find module 'x'", async () => {
    const appId = await appWith('deps-missing', { missing: "exports = () => require('left-pad');", fs: "exports = () => require('fs');" });
    expect((await upload(appId, zipTree(pureTree))).status).toBe(204);
    const missing = await run(appId, 'missing');
    expect(missing.body.error).toMatch(/^Cannot find module 'left-pad'/);
    expect((await run(appId, 'fs')).body.error).toMatch(/^Cannot find module 'fs'/);
  });

  it('refuses a native package at upload, naming it, and keeps the dependencies in use', async () => {
    const appId = await appWith('deps-native', { usePad: "exports = (s) => require('pad-left')(s, 3);" });
    expect((await upload(appId, zipTree(pureTree))).status).toBe(204);
    const natives: Tree[] = [
      { 'node_modules/bcrypt/package.json': json({ name: 'bcrypt', version: '5.1.0', gypfile: true }), 'node_modules/bcrypt/index.js': '' },
      { 'node_modules/sharp/package.json': json({ name: 'sharp', version: '0.33.0' }), 'node_modules/sharp/build/Release/sharp.node': Uint8Array.from([0x7f, 0x45, 0x4c, 0x46]) },
      { 'node_modules/pure/package.json': json({ name: 'pure', version: '1.0.0', dependencies: { addon: '1' } }), 'node_modules/addon/package.json': json({ name: 'addon', version: '1.0.0' }), 'node_modules/addon/binding.gyp': '{}' },
    ];
    for (const native of natives) {
      const response = await upload(appId, zipTree(native));
      const body = (await response.json()) as { error: string; error_code: string };
      expect(response.status).toBe(400);
      expect(body.error_code).toBe('NativeModuleNotSupported');
      expect(body.error).toMatch(/^package '(bcrypt|sharp|addon)' is a native module/);
      const status = await admin.request<{ status: string; status_message: string }>('GET', admin.app(appId, '/dependencies/status'));
      expect(status.body).toEqual({ status: 'failed', status_message: body.error });
    }
    expect((await run(appId, 'usePad', ['7'])).body.result).toBe('  7');
  });

  it('refuses an archive over 15 MB, one that unpacks past the limit, and one that escapes node_modules', async () => {
    const appId = await appWith('deps-large', {});
    const big = await upload(appId, new Uint8Array(15 * 1024 * 1024 + 1).fill(0x50));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error_code: string }).error_code).toBe('ArchiveTooLarge');
    // 120 MB of zeros gzips to about 120 kB: the unpacked limit stops it while inflating.
    const bomb = await upload(appId, gzipSync(Buffer.alloc(120 * 1024 * 1024)), 'node_modules.tar.gz');
    expect(bomb.status).toBe(413);
    const escape = await upload(appId, zipTree({ 'node_modules/../../etc/x.js': 'x' }));
    expect(escape.status).toBe(400);
    expect((await admin.request('GET', admin.app(appId, '/dependencies/archive'))).status).toBe(404);
  });

  it("keeps one app's packages from another app's functions, and from an admin of another group", async () => {
    const owner = await appWith('deps-owner', {});
    expect((await upload(owner, zipTree(pureTree))).status).toBe(204);
    const other = await appWith('deps-other', { steal: "exports = () => require('pad-left')('x', 3);" });
    expect((await run(other, 'steal')).body.error).toMatch(/^Cannot find module 'pad-left'/);
    const foreign = await fetch(`${admin.baseUrl}/groups/000000000000000000000009/apps/${owner}/dependencies`, { headers: { authorization: `Bearer ${admin.accessToken}` } });
    expect([403, 404]).toContain(foreign.status);
    const anonymous = await upload(owner, zipTree(pureTree), undefined, 'forged.token.value');
    expect(anonymous.status).toBe(401);
  });

  it('removes the dependencies: functions can no longer require them', async () => {
    const appId = await appWith('deps-remove', { usePad: "exports = (s) => require('pad-left')(s, 3);" });
    expect((await upload(appId, zipTree(pureTree))).status).toBe(204);
    expect((await run(appId, 'usePad', ['1'])).body.result).toBe('  1');
    expect((await admin.request('DELETE', admin.app(appId, '/dependencies'))).status).toBe(204);
    expect((await run(appId, 'usePad', ['1'])).body.error).toMatch(/^Cannot find module 'pad-left'/);
    expect((await admin.request('DELETE', admin.app(appId, '/dependencies'))).status).toBe(404);
  });
});
