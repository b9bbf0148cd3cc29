import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '@tessera/testing';
import { snapshot, tessera, writeAppFile } from '../cli/tessera-cli';
import { startTestHost, type TestHost } from '../support/test-host';

const password = 'hosting-cli-password';

const write = writeAppFile;

const hostingOf = (files: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(files).filter(([path]) => path.startsWith('hosting/')));

// The built `tessera` binary as a subprocess against the real host: a site goes up with
// `push --include-hosting` and comes back byte for byte with `pull --include-hosting`.
describe('tessera push and pull --include-hosting', () => {
  const work = makeTempDir('tessera-hosting-cli-');
  let host: TestHost;
  let env: Record<string, string>;
  let clientAppId: string;
  const local = join(work.path, 'site');

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    env = { TESSERA_CONFIG_DIR: join(work.path, 'config') };
    const login = await tessera(['login', '--url', host.url, '--username', 'admin', '--password', password], env);
    expect(login.code, login.stderr).toBe(0);
    const created = await tessera(['apps', 'create', '--name', 'site', '--local', local, '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    clientAppId = (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id;
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    work.remove();
  });

  const page = (path: string) => fetch(`${host.url}/hosting/${clientAppId}${path}`);

  it('pushes the hosted files only with --include-hosting, and pulls them back byte for byte', async () => {
    const config = JSON.parse(readFileSync(join(local, 'config.json'), 'utf8')) as Record<string, unknown>;
    write(join(local, 'config.json'), `${JSON.stringify({ ...config, hosting: { enabled: true, default_response_code: 404, default_error_path: '/404.html' } }, null, 2)}\n`);
    write(join(local, 'hosting', 'files', 'index.html'), '<h1>home</h1>\n');
    write(join(local, 'hosting', 'files', '404.html'), '<h1>not here</h1>\n');
    write(join(local, 'hosting', 'files', 'img', 'dot.gif'), Uint8Array.from([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0, 0xff, 0x10]));
    write(join(local, 'hosting', 'metadata.json'), JSON.stringify([{ path: '/index.html', attrs: [{ name: 'Cache-Control', value: 'no-cache' }] }]));

    // Without the flag the settings go up and the files do not.
    const configOnly = await tessera(['push', '--local', local, '--yes', '--json'], env);
    expect(configOnly.code, configOnly.stderr).toBe(0);
    expect((await page('/index.html')).status).toBe(404);

    const diff = await tessera(['diff', '--local', local, '--include-hosting'], env);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('+ added hosted file /index.html');
    expect(diff.stdout).toContain('+ added hosted file /img/dot.gif');

    const push = await tessera(['push', '--local', local, '--include-hosting', '--reset-cdn-cache', '--yes', '--json'], env);
    expect(push.code, push.stderr).toBe(0);
    expect((JSON.parse(push.stdout) as { deployed: boolean }).deployed).toBe(true);
    const home = await page('/');
    expect(home.status).toBe(200);
    expect(home.headers.get('cache-control')).toBe('no-cache');
    expect(await home.text()).toBe('<h1>home</h1>\n');
    expect(await (await page('/missing')).text()).toBe('<h1>not here</h1>\n');

    const copy = join(work.path, 'copy');
    const pull = await tessera(['pull', '--remote', clientAppId, '--local', copy, '--include-hosting', '--yes'], env);
    expect(pull.code, pull.stderr).toBe(0);
    const pulled = await snapshot(copy);
    const pushed = await snapshot(local);
    expect(Object.keys(hostingOf(pulled)).sort()).toEqual(['hosting/files/404.html', 'hosting/files/img/dot.gif', 'hosting/files/index.html', 'hosting/metadata.json']);
    for (const path of ['hosting/files/404.html', 'hosting/files/img/dot.gif', 'hosting/files/index.html']) expect(pulled[path], path).toBe(pushed[path]);
    const metadata = JSON.parse(readFileSync(join(copy, 'hosting', 'metadata.json'), 'utf8')) as { path: string; attrs: { name: string; value: string }[] }[];
    expect(metadata.find((item) => item.path === '/index.html')?.attrs).toEqual([
      { name: 'Cache-Control', value: 'no-cache' },
      { name: 'Content-Type', value: 'text/html' },
    ]);
    expect(metadata.find((item) => item.path === '/img/dot.gif')?.attrs).toEqual([{ name: 'Content-Type', value: 'image/gif' }]);

    // The pulled directory pushes back with no change at all.
    const again = await tessera(['push', '--local', copy, '--include-hosting', '--yes', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ diffs: [], deployed: false });

    // A pull without the flag leaves the local hosted files as they are.
    write(join(copy, 'hosting', 'files', 'draft.html'), 'work in progress');
    const plainPull = await tessera(['pull', '--remote', clientAppId, '--local', copy, '--yes'], env);
    expect(plainPull.code, plainPull.stderr).toBe(0);
    expect(readFileSync(join(copy, 'hosting', 'files', 'draft.html'), 'utf8')).toBe('work in progress');
  });

  it('removes a hosted file deleted locally, and changes only what changed', async () => {
    rmSync(join(local, 'hosting', 'files', 'img'), { recursive: true });
    write(join(local, 'hosting', 'files', 'index.html'), '<h1>home, again</h1>\n');
    const before = (await page('/404.html')).headers.get('last-modified');
    const push = await tessera(['push', '--local', local, '--include-hosting', '--yes', '--json'], env);
    expect(push.code, push.stderr).toBe(0);
    const { diffs } = JSON.parse(push.stdout) as { diffs: string[] };
    expect(diffs).toEqual(expect.arrayContaining(['- removed hosted file /img/dot.gif', '~ modified hosted file /index.html']));
    expect(diffs.join('\n')).not.toContain('/404.html');
    expect((await page('/img/dot.gif')).status).toBe(404);
    expect(await (await page('/')).text()).toBe('<h1>home, again</h1>\n');
    expect((await page('/404.html')).headers.get('last-modified')).toBe(before);
  });
});
