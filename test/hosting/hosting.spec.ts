import { createHash } from 'node:crypto';
import { readAppFiles } from '@tessera/app-config';
import { hashPassword } from '@tessera/credentials';
import { newObjectIdHex, PlatformDatabase } from '@tessera/platform';
import { eventually } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';
import { startTestHost, type TestHost } from '../support/test-host';
import { curl, multipartUpload, zipDirectory, type DirectoryFiles } from './hosting-support';

const md5 = (data: string | Uint8Array) => createHash('md5').update(data).digest('hex');
const password = 'hosting-admin-password';

const indexHtml = '<!doctype html><h1>shop</h1>\n';
const aboutHtml = '<h1>about</h1>\n';
const docsHtml = '<h1>docs</h1>\n';
const notFoundHtml = '<h1>lost?</h1>\n';
const appJs = 'console.log("shop");\n';
const logo = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 0xff]);

const site: DirectoryFiles = {
  'hosting/files/index.html': indexHtml,
  'hosting/files/about.html': aboutHtml,
  'hosting/files/docs/index.html': docsHtml,
  'hosting/files/404.html': notFoundHtml,
  'hosting/files/static/app.js': appJs,
  'hosting/files/img/logo.png': logo,
  'hosting/files/old.html': '<h1>old</h1>\n',
  'hosting/metadata.json': JSON.stringify([
    { path: '/static/app.js', attrs: [{ name: 'Cache-Control', value: 'public, max-age=31536000' }] },
    { path: '/about.html', attrs: [{ name: 'Content-Language', value: 'en-US' }, { name: 'Cache-Control', value: 'no-cache' }] },
    { path: '/img/logo.png', attrs: [{ name: 'Content-Disposition', value: 'inline' }] },
    { path: '/old.html', attrs: [{ name: 'Website-Redirect-Location', value: 'https://example.com/new' }] },
  ]),
};

// The real host (HTTP edge, admin API, client API, platform database) on a random port; the site is
// pushed, uploaded and fetched over HTTP as an administrator and a browser would.
describe('static hosting', () => {
  let host: TestHost;
  let admin: AdminSession;
  let shop: { _id: string; client_app_id: string };
  let other: { _id: string; client_app_id: string };

  /** Pushes the app's live configuration with `hosting` settings and these directory files. */
  async function pushSite(app: { _id: string }, hosting: Record<string, unknown>, files: DirectoryFiles): Promise<{ status: number; body: unknown }> {
    const live = await admin.pull(app._id);
    const config = JSON.parse(live.get('config.json') ?? '{}') as Record<string, unknown>;
    const directory: DirectoryFiles = { ...Object.fromEntries(live), 'config.json': JSON.stringify({ ...config, hosting }), ...files };
    const response = await admin.request('PATCH', admin.app(app._id, '/push'), undefined, { zip: zipDirectory(directory) });
    return { status: response.status, body: response.body };
  }

  const page = (app: { client_app_id: string }, path: string, init?: RequestInit) => fetch(`${host.url}/hosting/${app.client_app_id}${path}`, { redirect: 'manual', ...init });

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: password } });
    admin = await AdminSession.login(host, 'admin', password);
    shop = await admin.createApp('shop');
    other = await admin.createApp('other');
    const pushed = await pushSite(shop, { enabled: true, custom_domain: 'shop.example.com', app_default_domain: 'shop-abcde.tessera.test', default_response_code: 404, default_error_path: '/404.html' }, site);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    expect((await pushSite(other, { enabled: true }, { 'hosting/files/secret.html': '<p>other app only</p>', 'hosting/metadata.json': '[]' })).status).toBe(204);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  it('lists the pushed files with MD5, size, attributes (Content-Type added) and a URL', async () => {
    const listed = await admin.request<Array<{ path: string; hash: string; size: number; attrs: { name: string; value: string }[]; url: string; appId: string }>>('GET', admin.app(shop._id, '/hosting/assets?recursive=true'));
    expect(listed.status).toBe(200);
    expect(listed.body.map((asset) => asset.path)).toEqual(['/404.html', '/about.html', '/docs/index.html', '/img/logo.png', '/index.html', '/old.html', '/static/app.js']);
    const js = listed.body.find((asset) => asset.path === '/static/app.js')!;
    expect(js).toMatchObject({ appId: shop._id, hash: md5(appJs), size: Buffer.byteLength(appJs), url: `${host.url}/hosting/${shop.client_app_id}/static/app.js` });
    expect(js.attrs).toEqual([
      { name: 'Cache-Control', value: 'public, max-age=31536000' },
      { name: 'Content-Type', value: 'text/javascript' },
    ]);
    const top = await admin.request<Array<{ path: string }>>('GET', admin.app(shop._id, '/hosting/assets'));
    expect(top.body.map((asset) => asset.path)).not.toContain('/docs/index.html');
    const one = await admin.request<{ path: string; hash: string }>('GET', admin.app(shop._id, `/hosting/assets/asset?path=${encodeURIComponent('/img/logo.png')}`));
    expect(one.body).toMatchObject({ path: '/img/logo.png', hash: md5(logo) });
    expect((await admin.request('GET', admin.app(shop._id, '/hosting/assets/asset?path=/nope.html'))).status).toBe(404);
  });

  it('serves a page by path with its attributes as headers, an ETag and Last-Modified', async () => {
    const response = await page(shop, '/about.html');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(aboutHtml);
    expect(response.headers.get('content-type')).toBe('text/html');
    expect(response.headers.get('content-language')).toBe('en-US');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('etag')).toBe(`"${md5(aboutHtml)}"`);
    expect(new Date(response.headers.get('last-modified')!).getTime()).toBeGreaterThan(Date.now() - 120_000);
    const binary = await page(shop, '/img/logo.png');
    expect(binary.headers.get('content-type')).toBe('image/png');
    expect(binary.headers.get('content-disposition')).toBe('inline');
    expect(new Uint8Array(await binary.arrayBuffer())).toEqual(logo);
    const redirect = await page(shop, '/old.html');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('https://example.com/new');
  });

  it('serves index.html for a directory, and sends a directory without its slash to it', async () => {
    const root = await page(shop, '/');
    expect(root.status).toBe(200);
    expect(await root.text()).toBe(indexHtml);
    expect(await (await page(shop, '/docs/')).text()).toBe(docsHtml);
    const docs = await page(shop, '/docs?x=1');
    expect(docs.status).toBe(301);
    expect(docs.headers.get('location')).toBe(`/hosting/${shop.client_app_id}/docs/?x=1`);
    const bare = await page(shop, '');
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe(`/hosting/${shop.client_app_id}/`);
  });

  it('answers 304 to a conditional request for the current version, 200 otherwise; HEAD and a byte range', async () => {
    const first = await page(shop, '/static/app.js');
    const etag = first.headers.get('etag')!;
    const lastModified = first.headers.get('last-modified')!;
    const revalidated = await page(shop, '/static/app.js', { headers: { 'if-none-match': etag } });
    expect(revalidated.status).toBe(304);
    expect(await revalidated.text()).toBe('');
    expect(revalidated.headers.get('etag')).toBe(etag);
    expect(revalidated.headers.get('cache-control')).toBe('public, max-age=31536000');
    expect((await page(shop, '/static/app.js', { headers: { 'if-none-match': `"stale", W/${etag}` } })).status).toBe(304);
    expect((await page(shop, '/static/app.js', { headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
    expect((await page(shop, '/static/app.js', { headers: { 'if-modified-since': lastModified } })).status).toBe(304);
    expect((await page(shop, '/static/app.js', { headers: { 'if-modified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' } })).status).toBe(200);
    // If-None-Match wins over If-Modified-Since.
    expect((await page(shop, '/static/app.js', { headers: { 'if-none-match': '"stale"', 'if-modified-since': lastModified } })).status).toBe(200);
    // If-Match and If-Unmodified-Since: the page as it is, or 412 with App Services' error body.
    expect((await page(shop, '/static/app.js', { headers: { 'if-match': etag } })).status).toBe(200);
    const changed = await page(shop, '/static/app.js', { headers: { 'if-match': '"stale"' } });
    expect(changed.status).toBe(412);
    expect(await changed.json()).toMatchObject({ error_code: 'PreconditionFailed' });
    expect((await page(shop, '/static/app.js', { headers: { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' } })).status).toBe(412);
    expect((await page(shop, '/static/app.js', { headers: { 'if-unmodified-since': lastModified } })).status).toBe(200);
    const head = await page(shop, '/static/app.js', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(appJs)));
    expect(await head.text()).toBe('');
    const range = await page(shop, '/static/app.js', { headers: { range: 'bytes=0-6' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 0-6/${Buffer.byteLength(appJs)}`);
    expect(await range.text()).toBe('console');
    expect((await page(shop, '/static/app.js', { headers: { range: 'bytes=999-' } })).status).toBe(416);
  });

  it('serves the custom 404 page with 404 for a path that names no file', async () => {
    const missing = await page(shop, '/no/such/page');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('text/html');
    expect(await missing.text()).toBe(notFoundHtml);
    // Without a custom page: App Services' error body.
    const bare = await page(other, '/missing.html');
    expect(bare.status).toBe(404);
    expect(await bare.json()).toEqual({ error: 'no hosted file at /missing.html', error_code: 'NotFound' });
  });

  it('serves the page by Host on the custom and the default domain, without shadowing the API on the server host', async () => {
    const byHost = await eventually(async () => {
      const result = await curl(['-H', 'Host: shop.example.com', `${host.url}/about.html`]);
      expect(result.status).toBe(200);
      return result;
    });
    expect(byHost.body).toBe(aboutHtml);
    expect(byHost.headers['content-type']).toBe('text/html');
    expect(byHost.headers['etag']).toBe(`"${md5(aboutHtml)}"`);
    expect(byHost.headers['content-language']).toBe('en-US');
    const root = await curl(['-H', 'Host: SHOP-abcde.tessera.test:8443', `${host.url}/`]);
    expect(root.status).toBe(200);
    expect(root.body).toBe(indexHtml);
    const conditional = await curl(['-H', 'Host: shop.example.com', '-H', `If-None-Match: "${md5(aboutHtml)}"`, `${host.url}/about.html`]);
    expect(conditional.status).toBe(304);
    expect(conditional.body).toBe('');
    expect((await curl(['-H', 'Host: shop.example.com', `${host.url}/nowhere`])).body).toBe(notFoundHtml);
    expect((await curl(['-H', 'Host: shop.example.com', '-X', 'POST', `${host.url}/about.html`])).status).toBe(405);
    // The API stays the API, on the site's domain and on the server's own host.
    const location = await curl(['-H', 'Host: shop.example.com', `${host.url}/api/client/v2.0/app/${shop.client_app_id}/location`]);
    expect(location.status).toBe(200);
    expect(JSON.parse(location.body)).toHaveProperty('hostname');
    const endpoint = await curl(['-H', 'Host: shop.example.com', '-X', 'POST', `${host.url}/app/${shop.client_app_id}/endpoint/data/v1/action/find`]);
    expect(endpoint.status).not.toBe(405);
    expect(endpoint.body).not.toBe(notFoundHtml);
    expect((await curl(['-H', 'Host: shop.example.com', `${host.url}/app/dashboard`])).body).toBe(notFoundHtml);
    const plain = await fetch(`${host.url}/about.html`);
    expect(plain.status).toBe(404);
    expect(await plain.text()).not.toContain(aboutHtml);
    // Another app's domain is not a way into this one.
    expect((await curl(['-H', 'Host: unknown.example.com', `${host.url}/about.html`])).status).toBe(404);
  });

  it('falls back to the single-page app root with 200 in SPA mode', async () => {
    const spa = await admin.createApp('spa');
    expect((await pushSite(spa, { enabled: true, default_response_code: 200, default_error_path: '/index.html' }, { 'hosting/files/index.html': indexHtml, 'hosting/files/app.js': appJs, 'hosting/metadata.json': '[]' })).status).toBe(204);
    for (const route of ['/dashboard', '/users/42/edit', '/deep/link/']) {
      const response = await page(spa, route);
      expect(response.status, route).toBe(200);
      expect(await response.text()).toBe(indexHtml);
      expect(response.headers.get('content-type')).toBe('text/html');
    }
    expect(await (await page(spa, '/app.js')).text()).toBe(appJs);
  });

  it('never leaves the app: traversal, encoded dots and slashes, backslashes, NUL, another app id', async () => {
    const base = `${host.url}/hosting/${shop.client_app_id}`;
    for (const path of ['/../other/secret.html', '/%2e%2e/%2e%2e/config.json', '/..%2fconfig.json', '/docs/%2E%2E/about.html', '/a%5c..%5cabout.html', '/about.html%00.png', '/docs//index.html', '/./about.html']) {
      const result = await curl([`${base}${path}`]);
      expect(result.status, path).toBe(400);
      expect(JSON.parse(result.body), path).toEqual({ error: 'invalid resource path', error_code: 'InvalidParameter' });
    }
    // Malformed percent-encoding is refused by the router before any route (Fastify's own 400).
    const malformed = await curl([`${base}/%zz`]);
    expect(malformed.status).toBe(400);
    expect(malformed.body).not.toContain(indexHtml);
    const backslash = await curl([`${base}/docs\\..\\about.html`]);
    expect([400, 404]).toContain(backslash.status);
    expect(backslash.body).not.toContain('about');
    // The other app's file is not reachable through this app's mount, by any spelling.
    expect((await page(shop, '/secret.html')).status).toBe(404);
    expect(await (await page(shop, '/secret.html')).text()).toBe(notFoundHtml);
    expect(await (await page(other, '/secret.html')).text()).toBe('<p>other app only</p>');
    const unknownApp = await page({ client_app_id: 'nope-abcde' }, '/index.html');
    expect(unknownApp.status).toBe(404);
    expect(((await unknownApp.json()) as { error_code: string }).error_code).toBe('AppNotFound');
  });

  it('serves nothing while hosting is disabled, and again once enabled through the admin API', async () => {
    const app = await admin.createApp('dormant');
    expect((await pushSite(app, { enabled: false }, { 'hosting/files/index.html': indexHtml, 'hosting/metadata.json': '[]' })).status).toBe(204);
    const off = await page(app, '/index.html');
    expect(off.status).toBe(404);
    expect(((await off.json()) as { error_code: string }).error_code).toBe('HostingNotEnabled');
    expect((await admin.request<{ enabled: boolean }>('GET', admin.app(app._id, '/hosting/config'))).body).toMatchObject({ enabled: false, status: 'setup_ok' });
    expect((await admin.request('PATCH', admin.app(app._id, '/hosting/config'), { enabled: true })).status).toBe(204);
    expect(await (await page(app, '/index.html')).text()).toBe(indexHtml);
    expect((await admin.request('PATCH', admin.app(app._id, '/hosting/config'), { enabled: 'yes' })).status).toBe(400);
  });

  it('uploads, re-attributes, copies, moves and deletes files through the asset endpoints as realm-cli does', async () => {
    const content = Buffer.from('{"greeting":"hi"}');
    const upload = multipartUpload({ appId: shop._id, path: '/data/greeting.json', hash: md5(content), size: content.length, attrs: [{ name: 'Cache-Control', value: 'max-age=60' }] }, content);
    const put = await fetch(`${admin.baseUrl}${admin.app(shop._id, '/hosting/assets/asset')}`, { method: 'PUT', headers: { authorization: `Bearer ${admin.accessToken}`, 'content-type': upload.contentType }, body: upload.body });
    expect(put.status, await put.clone().text()).toBe(204);
    const served = await page(shop, '/data/greeting.json');
    expect(served.headers.get('content-type')).toBe('application/json');
    expect(served.headers.get('cache-control')).toBe('max-age=60');
    expect(await served.text()).toBe(content.toString());
    const patch = await admin.request('PATCH', admin.app(shop._id, `/hosting/assets/asset?path=${encodeURIComponent('/data/greeting.json')}`), { attributes: [{ name: 'Content-Type', value: 'text/plain' }] });
    expect(patch.status).toBe(204);
    const retyped = await page(shop, '/data/greeting.json');
    expect(retyped.headers.get('content-type')).toBe('text/plain');
    expect(retyped.headers.get('cache-control')).toBeNull();
    expect((await admin.request('POST', admin.app(shop._id, '/hosting/assets'), { copy_from: '/data/greeting.json', copy_to: '/data/copy.json' })).status).toBe(204);
    expect((await admin.request('POST', admin.app(shop._id, '/hosting/assets'), { move_from: '/data/copy.json', move_to: '/data/moved.json' })).status).toBe(204);
    expect(await (await page(shop, '/data/moved.json')).text()).toBe(content.toString());
    expect((await page(shop, '/data/copy.json')).status).toBe(404);
    expect((await admin.request('DELETE', admin.app(shop._id, `/hosting/assets/asset?path=${encodeURIComponent('/data/moved.json')}`))).status).toBe(204);
    expect((await admin.request('DELETE', admin.app(shop._id, `/hosting/assets/asset?path=${encodeURIComponent('/data/greeting.json')}`))).status).toBe(204);
    expect((await page(shop, '/data/greeting.json')).status).toBe(404);
    expect((await admin.request('DELETE', admin.app(shop._id, '/hosting/assets/asset?path=/data/greeting.json'))).status).toBe(404);
    expect((await admin.request('PUT', admin.app(shop._id, '/hosting/cache'), { invalidate: true, path: '/*' })).status).toBe(204);
  });

  it('refuses bad uploads: traversal paths, unknown or header-splitting attributes, a wrong hash, an oversized file', async () => {
    const url = `${admin.baseUrl}${admin.app(shop._id, '/hosting/assets/asset')}`;
    const send = async (meta: unknown, file: Uint8Array) => {
      const upload = multipartUpload(meta, file);
      const response = await fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${admin.accessToken}`, 'content-type': upload.contentType }, body: upload.body });
      return { status: response.status, body: (await response.json()) as { error: string; error_code: string } };
    };
    const small = Buffer.from('x');
    for (const path of ['/../../config.json', 'relative.html', '/a/../b.html', '/a\\b.html', '/a//b.html']) {
      const refused = await send({ path, attrs: [] }, small);
      expect(refused.status, path).toBe(400);
      expect(refused.body.error_code).toBe('InvalidParameter');
    }
    expect((await send({ path: '/x.html', attrs: [{ name: 'Set-Cookie', value: 'a=b' }] }, small)).status).toBe(400);
    expect((await send({ path: '/x.html', attrs: [{ name: 'Cache-Control', value: 'no-cache\r\nSet-Cookie: a=b' }] }, small)).status).toBe(400);
    expect((await send({ path: '/x.html', hash: md5('other'), attrs: [] }, small)).status).toBe(400);
    const notMultipart = await fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${admin.accessToken}`, 'content-type': 'application/json' }, body: '{"path":"/x.html"}' });
    expect(notMultipart.status).toBe(400);
    const oversized = await send({ path: '/huge.bin', attrs: [] }, Buffer.alloc(25 * 1024 * 1024 + 1, 7));
    expect(oversized.status).toBe(413);
    expect(oversized.body.error_code).toBe('RequestTooLarge');
    const wayTooLarge = await send({ path: '/huge.bin', attrs: [] }, Buffer.alloc(30 * 1024 * 1024, 7));
    expect(wayTooLarge.status).toBe(413);
    expect((await admin.request('GET', admin.app(shop._id, '/hosting/assets/asset?path=/huge.bin'))).status).toBe(404);
    // A push carrying an unknown attribute or an oversized file is refused whole.
    const refused = await pushSite(shop, { enabled: true }, { 'hosting/files/a.html': 'a', 'hosting/metadata.json': JSON.stringify([{ path: '/a.html', attrs: [{ name: 'X-Evil', value: '1' }] }]) });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('hosting.attr.name');
    expect(await (await page(shop, '/about.html')).text()).toBe(aboutHtml);
  });

  it('keeps an app\'s files from administrators of another group and from client tokens', async () => {
    const db = host.nest.get(PlatformDatabase);
    const otherGroup = newObjectIdHex();
    await (await db.collection('admin_users')).insertOne({ _id: newObjectIdHex(), username: 'intruder', passwordHash: await hashPassword('intruder-password'), groupIds: [otherGroup], created: new Date().toISOString() });
    const intruder = await AdminSession.login(host, 'intruder', 'intruder-password');
    expect(intruder.groupId).toBe(otherGroup);
    const paths = [`/groups/${admin.groupId}/apps/${shop._id}/hosting/assets`, `/groups/${otherGroup}/apps/${shop._id}/hosting/assets`, `/groups/${otherGroup}/apps/${shop._id}/hosting/assets/asset?path=/index.html`];
    for (const path of paths) {
      const response = await intruder.request<{ error_code: string }>('GET', path);
      expect(response.status, path).toBe(404);
      expect(response.body.error_code).toBe('GroupNotFound');
    }
    const deleted = await intruder.request('DELETE', `/groups/${otherGroup}/apps/${shop._id}/hosting/assets/asset?path=/index.html`);
    expect(deleted.status).toBe(404);
    const upload = multipartUpload({ path: '/index.html', attrs: [] }, Buffer.from('defaced'));
    const put = await fetch(`${admin.baseUrl}/groups/${admin.groupId}/apps/${shop._id}/hosting/assets/asset`, { method: 'PUT', headers: { authorization: `Bearer ${intruder.accessToken}`, 'content-type': upload.contentType }, body: upload.body });
    expect(put.status).toBe(404);
    const user = await host.anonymousLogin(shop.client_app_id).catch(() => undefined);
    const clientToken = user?.accessToken ?? 'not-a-token';
    expect((await admin.request('GET', admin.app(shop._id, '/hosting/assets'), undefined, { token: clientToken })).status).toBe(401);
    expect((await admin.request('GET', admin.app(shop._id, '/hosting/assets'), undefined, { token: `${admin.accessToken.slice(0, -4)}AAAA` })).status).toBe(401);
    expect(await (await page(shop, '/')).text()).toBe(indexHtml);
  });

  it('exports the hosted files and the hosting settings, and an App Services export with hosting imports and serves unchanged', async () => {
    const exported = await admin.request('GET', admin.app(shop._id, '/export?source_control=true'));
    expect(exported.status).toBe(200);
    const { unzipSync } = await import('fflate');
    const files = unzipSync(exported.bytes);
    expect(Buffer.from(files['hosting/files/about.html']).toString()).toBe(aboutHtml);
    expect(new Uint8Array(files['hosting/files/img/logo.png'])).toEqual(logo);
    expect(JSON.parse(Buffer.from(files['hosting/config.json']).toString())).toMatchObject({ enabled: true, custom_domain: 'shop.example.com', default_error_path: '/404.html' });
    const metadata = JSON.parse(Buffer.from(files['hosting/metadata.json']).toString()) as { path: string; attrs: { name: string; value: string }[] }[];
    expect(metadata.find((item) => item.path === '/about.html')?.attrs).toContainEqual({ name: 'Content-Language', value: 'en-US' });

    // An App Services export (20210101 layout) holding hosting, pushed as is into a new app.
    const imported = await admin.createApp('imported');
    const exportDir: DirectoryFiles = {
      'realm_config.json': JSON.stringify({ config_version: 20210101, name: 'legacy-site', location: 'US-VA', deployment_model: 'GLOBAL' }),
      'auth/providers.json': JSON.stringify({ 'anon-user': { name: 'anon-user', type: 'anon-user', disabled: false } }),
      'functions/config.json': '[]',
      'hosting/config.json': JSON.stringify({ enabled: true, app_default_domain: 'legacy-site-abcde.mongodbstitch.com', default_response_code: 200, default_error_path: '/index.html' }),
      'hosting/metadata.json': JSON.stringify([{ path: '/index.html', attrs: [{ name: 'Content-Type', value: 'text/html; charset=utf-8' }, { name: 'Cache-Control', value: 'no-store' }] }]),
      'hosting/files/index.html': '<h1>legacy</h1>',
      'hosting/files/css/site.css': 'body{}',
    };
    const push = await admin.request('PATCH', admin.app(imported._id, '/push'), undefined, { zip: zipDirectory(exportDir) });
    expect(push.status, JSON.stringify(push.body)).toBe(204);
    const served = await page(imported, '/');
    expect(served.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(served.headers.get('cache-control')).toBe('no-store');
    expect(await served.text()).toBe('<h1>legacy</h1>');
    expect((await page(imported, '/css/site.css')).headers.get('content-type')).toBe('text/css');
    expect(await (await page(imported, '/client/route')).text()).toBe('<h1>legacy</h1>');
    const byDomain = await eventually(async () => {
      const result = await curl(['-H', 'Host: legacy-site-abcde.mongodbstitch.com', `${host.url}/css/site.css`]);
      expect(result.status).toBe(200);
      return result;
    });
    expect(byDomain.body).toBe('body{}');
  });

  it('shows hosted file changes in a dry run and leaves the hosted files alone when a push carries none', async () => {
    const live = await admin.pull(shop._id);
    expect([...live.keys()].some((path) => path.startsWith('hosting/'))).toBe(false);
    const dry = await admin.request<{ diffs: string[] }>('PATCH', admin.app(shop._id, '/push?dry_run=true'), undefined, {
      zip: zipDirectory({ ...Object.fromEntries(live), ...site, 'hosting/files/new.html': 'new', 'hosting/files/about.html': 'changed' }),
    });
    expect(dry.status).toBe(200);
    expect(dry.body.diffs).toEqual(expect.arrayContaining(['+ added hosted file /new.html', '~ modified hosted file /about.html']));
    expect((await page(shop, '/new.html')).status).toBe(404);
    const configOnly = await admin.request('PATCH', admin.app(shop._id, '/push'), undefined, { zip: zipDirectory(Object.fromEntries(live)) });
    expect(configOnly.status).toBe(204);
    expect(await (await page(shop, '/about.html')).text()).toBe(aboutHtml);
    const withHosting = await admin.request('GET', admin.app(shop._id, '/pull?include_hosting=true'));
    const { unzipSync } = await import('fflate');
    expect(Object.keys(unzipSync(withHosting.bytes))).toEqual(expect.arrayContaining(['hosting/metadata.json', 'hosting/files/about.html', 'hosting/files/img/logo.png']));
  });

  it('moves the hosted files a deployment of an earlier release carried into the hosting store at the next deployment', async () => {
    const legacy = await admin.createApp('legacy');
    const live = await admin.pull(legacy._id);
    const app = readAppFiles(new Map([...live].map(([path, text]) => [path, Buffer.from(text)]))).app;
    app.hosting = { metadata: [{ path: '/index.html', attrs: [{ name: 'Cache-Control', value: 'max-age=5' }] }], files: new Map([['/index.html', Buffer.from('<h1>kept</h1>')]]) };
    // Stored the way earlier releases stored it: the files inside the deployment.
    await host.redeploy(legacy._id, app);
    expect((await admin.request<unknown[]>('GET', admin.app(legacy._id, '/hosting/assets'))).body).toEqual([]);
    expect((await admin.request('PATCH', admin.app(legacy._id, '/hosting/config'), { enabled: true })).status).toBe(204);
    const served = await page(legacy, '/');
    expect(served.status).toBe(200);
    expect(served.headers.get('cache-control')).toBe('max-age=5');
    expect(await served.text()).toBe('<h1>kept</h1>');
    expect([...(await admin.pull(legacy._id)).keys()].some((path) => path.startsWith('hosting/'))).toBe(false);

    // Deleting the app deletes its hosted files and their content.
    const db = host.nest.get(PlatformDatabase);
    const contentIds = (await (await db.collection('hosting_assets')).find({ app_id: legacy._id }).toArray()).map((asset) => asset['content_id']);
    expect(contentIds).toHaveLength(1);
    expect((await admin.request('DELETE', admin.app(legacy._id))).status).toBe(204);
    expect(await (await db.collection('hosting_assets')).count({ app_id: legacy._id })).toBe(0);
    expect(await (await db.collection('hosting_content')).count({ content_id: { $in: contentIds } })).toBe(0);
    expect((await page(legacy, '/')).status).toBe(404);
  });
});
