import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHmac, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { unzipSync, zipSync } from 'fflate';
import WebSocket from 'ws';
import { eventually, makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';

// The admin console (apps/console) in Debian's Chromium, headless, against the built server started as
// `npm start` starts it, on a random port. One browser and one page for the file; the tests run in order,
// each from where the previous one left the page, and each saves a screenshot the README shows.
const chromiumPath = process.env['TESSERA_CHROMIUM'] ?? '/usr/bin/chromium';
const hasChromium = existsSync(chromiumPath);
// The screenshots go to docs/console (what the README shows) when TESSERA_CONSOLE_SCREENSHOTS=1, else to a
// temporary directory, so a test run leaves the checkout as it found it.
const screenshots = process.env['TESSERA_CONSOLE_SCREENSHOTS'] === '1' ? join(__dirname, '..', '..', 'docs', 'console') : join(tmpdir(), 'tessera-console-screenshots');
const password = 'console-test-password';

if (!hasChromium) process.stderr.write(`console tests skipped: no Chromium at ${chromiumPath} (apt-get install chromium, or set TESSERA_CHROMIUM)\n`);

// Skipped without Chromium: the console is only ever exercised in a real browser (reason printed above).
describe.skipIf(!hasChromium)('admin console in a real browser', () => {
  const dataDir = makeTempDir('tessera-console-');
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  /** Every admin API call the page made, to replay without a valid session. */
  const calls: { method: string; url: string; body: string | null; contentType: string | undefined }[] = [];
  /** Uncaught errors in the page and CSP violations: none is expected anywhere in the file. */
  const problems: string[] = [];
  let app: { _id: string; client_app_id: string };
  let client: { access_token: string; user_id: string };

  /** Saves the page for the README, after checking that every control on it is named for assistive technology. */
  const shot = async (name: string) => {
    const unnamed = await page.locator('input:not([type=hidden]), select, textarea, button').evaluateAll((controls) =>
      controls
        .filter((control) => {
          const element = control as HTMLInputElement;
          const named = (element.labels?.length ?? 0) > 0 || element.getAttribute('aria-label') || (element.tagName === 'BUTTON' && element.textContent?.trim());
          return !named;
        })
        .map((control) => control.outerHTML.slice(0, 120)),
    );
    expect(unnamed, `controls without a label on ${name}`).toEqual([]);
    await page.screenshot({ path: join(screenshots, `${name}.png`) });
  };
  const api = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const token = (await page.evaluate(() => sessionStorage.getItem('tessera.console.session'))) ?? '{}';
    const { accessToken } = JSON.parse(token) as { accessToken: string };
    const response = await fetch(`${server.url}/api/admin/v3.0${path}`, {
      method,
      headers: { authorization: `Bearer ${accessToken}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const clientCall = (path: string, body: unknown, token?: string) =>
    fetch(`${server.url}/api/client/v2.0/app/${app.client_app_id}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  /** Picks a zip on the Deployments page, reads its diff, then imports it after the stated consequences. */
  const importZip = async (zip: string, action: string, consequence: string, done: string) => {
    await page.getByLabel('App directory as a zip').setInputFiles(zip);
    await page.getByRole('heading', { name: 'What the import changes' }).waitFor();
    await page.getByRole('button', { name: action }).click();
    await page.getByText(consequence).waitFor();
    await page.getByRole('button', { name: `Yes, ${action.toLowerCase()}` }).click();
    await page.getByRole('status').filter({ hasText: done }).waitFor();
  };
  const open = async (appPage: string) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: appPage, exact: true }).click();
    await page.getByRole('heading', { level: 1 }).first().waitFor();
  };

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true });
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, TESSERA_ADMIN_PASSWORD: password } });
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1366, height: 820 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) problems.push(`CSP: ${message.text()}`);
    });
    page.on('request', (request: Request) => {
      if (request.url().includes('/api/admin/v3.0/')) calls.push({ method: request.method(), url: request.url(), body: request.postData(), contentType: request.headers()['content-type'] });
    });
  }, 90_000);

  afterEach(() => {
    expect(problems).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    dataDir.remove();
  });

  it('serves the page and its assets with their types, caching and CSP, and nothing else', async () => {
    const index = await fetch(`${server.url}/console`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await index.text();
    const script = /src="(\/console\/assets\/console-[0-9a-f]{12}\.js)"/.exec(html)?.[1];
    const style = /href="(\/console\/assets\/console-[0-9a-f]{12}\.css)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`${server.url}${script}`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${server.url}${style}`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await fetch(`${server.url}/console/`)).status).toBe(200);
    expect((await fetch(`${server.url}/console/?from=bookmark`)).status).toBe(200);
    const head = await fetch(`${server.url}/console`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-security-policy')).toContain("default-src 'none'");
    const post = await fetch(`${server.url}/console`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);

    // No path reaches the file system: only the names the build wrote are answered.
    const attempts = [
      '/console/../package.json',
      '/console/..%2f..%2fpackage.json',
      '/console/%2e%2e/%2e%2e/package.json',
      '/console/assets/..%2f..%2f..%2f..%2fpackage.json',
      '/console/assets/%2e%2e%2f%2e%2e%2findex.html',
      '/console/..\\..\\package.json',
      '/console/%2fetc%2fpasswd',
      '/console//etc/passwd',
      '/console/assets/',
      '/console/build.mjs',
      '/console/src/main.tsx',
      `/console${script!.slice('/console'.length)}%00.html`,
    ];
    for (const path of attempts) {
      const response = await fetch(`${server.url}${path}`);
      const body = await response.text();
      // fetch normalises `/console/../package.json` to `/package.json`, which is not the console's to answer.
      expect([404, 400], path).toContain(response.status);
      expect(body, path).not.toContain('"workspaces"');
      expect(body, path).not.toContain('root:');
    }
    const raw = await rawGet(server.port, '/console/../../package.json');
    expect(raw).not.toContain('"workspaces"');
    expect(raw).toMatch(/^HTTP\/1\.1 (400|404)/);
  });

  it('signs in with the admin user (a wrong password is refused) and shows the apps', async () => {
    const started = Date.now();
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Username').waitFor();
    const interactiveMs = Date.now() - started;
    process.stdout.write(`console: sign-in page interactive ${interactiveMs} ms after navigation (loopback)\n`);
    // By keyboard alone: the sign-in choice, then the username and password fields, then Enter.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('admin');
    await page.keyboard.press('Tab');
    await page.keyboard.type('not-the-password');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'invalid username/password' }).waitFor();
    expect(await page.getByLabel('Username').inputValue()).toBe('admin');
    await page.getByLabel('Password').fill(password);
    await shot('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Apps', level: 1 }).waitFor();
    await page.getByRole('table').getByRole('link', { name: 'todo' }).waitFor();
  });

  it('creates an app from a template', async () => {
    await page.getByLabel('Name').fill('console-todo');
    await page.getByLabel('Template').selectOption('web.mql.todo');
    await page.getByRole('button', { name: 'Create app' }).click();
    await page.getByRole('status').filter({ hasText: 'Created console-todo' }).waitFor();
    await page.getByRole('table').getByRole('link', { name: 'console-todo' }).waitFor();
    await shot('apps');
    const apps = await api<{ _id: string; name: string; client_app_id: string; template_id?: string }[]>('GET', `/groups/${await groupId()}/apps`);
    app = apps.body.find((candidate) => candidate.name === 'console-todo')!;
    expect(app).toMatchObject({ template_id: 'web.mql.todo' });

    // An empty app, then deleted: the consequences first, then the app is gone from the list and the API.
    await page.getByLabel('Name').fill('console-scratch');
    await page.getByLabel('Template').selectOption('');
    await page.getByRole('button', { name: 'Create app' }).click();
    const scratch = page.getByRole('row').filter({ hasText: 'console-scratch' });
    await scratch.getByRole('button', { name: 'Delete console-scratch' }).click();
    await scratch.getByText('This cannot be undone').waitFor();
    await scratch.getByRole('button', { name: 'Yes, delete console-scratch' }).click();
    await scratch.waitFor({ state: 'detached' });
    const after = await api<{ name: string }[]>('GET', `/groups/${await groupId()}/apps`);
    expect(after.body.map((candidate) => candidate.name).sort()).toEqual(['console-todo', 'todo']);
  });

  it("shows a function call's log entry live, and its whole record", async () => {
    await page.getByRole('table').getByRole('link', { name: 'console-todo' }).click();
    await page.getByRole('heading', { name: 'Logs', level: 1 }).waitFor();
    await page.getByLabel('Live tail').check();
    const login = await clientCall('/auth/providers/anon-user/login', {});
    expect(login.status).toBe(200);
    client = (await login.json()) as { access_token: string; user_id: string };
    const called = await clientCall('/functions/call', { name: 'addItem', arguments: ['written from the test'] }, client.access_token);
    expect(called.status).toBe(200);
    const row = page.getByRole('row').filter({ hasText: 'addItem' });
    await row.first().waitFor({ timeout: 15_000 });
    await row.first().getByRole('button').click();
    const record = page.getByRole('complementary', { name: 'Log entry' });
    await record.getByText('written from the test').first().waitFor();
    await expect(record.getByText(client.user_id).first().isVisible()).resolves.toBe(true);
    await shot('logs');
    // Every filter is the admin API's: what the table holds is what the server matched.
    const caption = page.getByRole('table').locator('caption');
    const filter = async (label: string, value: string) => {
      await page.getByLabel(label, { exact: true }).fill(value);
      await page.getByLabel(label, { exact: true }).press('Enter');
    };
    const logQueries: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/logs?')) logQueries.push(new URL(request.url()).search);
    });
    await filter('Text', 'no such words anywhere');
    await eventually(async () => expect(await caption.textContent()).toMatch(/^0 entries/));
    expect(logQueries.some((search) => new URLSearchParams(search).get('text') === 'no such words anywhere')).toBe(true);
    await filter('Text', 'written from the test');
    await eventually(async () => expect(await caption.textContent()).toMatch(/^1 entry /));
    await page.getByLabel('Status').selectOption('errors');
    await eventually(async () => expect(await caption.textContent()).toMatch(/^0 entries/));
    await page.getByLabel('Status').selectOption('all');
    // By user, with live tail on: a call of another user never shows; the next call of this user does.
    const other = (await (await clientCall('/auth/providers/anon-user/login', {})).json()) as { access_token: string; user_id: string };
    await filter('Text', '');
    await filter('User id', client.user_id);
    const before = await eventually(async () => {
      const [, count] = /^(\d+) entr(?:y|ies) · live/.exec((await caption.textContent()) ?? '') ?? [];
      expect(Number(count)).toBeGreaterThan(0);
      return Number(count);
    });
    expect(await page.getByRole('table').getByText(other.user_id).count()).toBe(0);
    expect((await clientCall('/functions/call', { name: 'addItem', arguments: ['from someone else'] }, other.access_token)).status).toBe(200);
    expect((await clientCall('/functions/call', { name: 'addItem', arguments: ['tailed with a filter'] }, client.access_token)).status).toBe(200);
    await eventually(async () => {
      const rows = await page.getByRole('table').locator('tbody tr').allTextContents();
      expect(rows.length).toBe(before + 1);
      expect(rows.every((row) => row.includes(client.user_id))).toBe(true);
    });
    await filter('User id', '');
    await page.getByLabel('Live tail').uncheck();
  });

  it('looks up a user and disables them: their next client call is refused', async () => {
    await open('Users');
    await page.getByLabel('Search by id, email or provider').fill(client.user_id);
    await page.getByRole('button', { name: client.user_id }).click();
    const user = page.getByRole('complementary', { name: 'User' });
    await user.getByText('anon-user').first().waitFor();
    await user.getByRole('button', { name: 'Disable user' }).click();
    await user.getByText('Their next request is refused').waitFor();
    await shot('users');
    await user.getByRole('button', { name: 'Yes, disable user' }).click();
    await page.getByRole('row').filter({ hasText: client.user_id }).getByText('disabled').waitFor();
    const refused = await clientCall('/functions/call', { name: 'addItem', arguments: ['after the disable'] }, client.access_token);
    expect(refused.status).toBe(401);

    // A registration waiting for its confirmation, confirmed from the console: the account can then sign in.
    const providers = await api<{ _id: string; name: string; config?: Record<string, unknown> }[]>('GET', `/groups/${await groupId()}/apps/${app._id}/auth_providers`);
    const userpass = providers.body.find((provider) => provider.name === 'local-userpass')!;
    const changed = await api('PUT', `/groups/${await groupId()}/apps/${app._id}/auth_providers/${userpass._id}`, { config: { ...userpass.config, autoConfirm: false, emailConfirmationUrl: 'http://localhost/confirm' } });
    expect(changed.status, JSON.stringify(changed.body)).toBe(204);
    const registered = await clientCall('/auth/providers/local-userpass/register', { email: 'waiting@example.com', password: 'waiting-password' });
    expect(registered.status, await registered.text()).toBe(201);
    await page.reload();
    const pending = page.getByRole('row').filter({ hasText: 'waiting@example.com' });
    await pending.getByRole('button', { name: 'Confirm waiting@example.com' }).click();
    await page.getByRole('button', { name: 'Yes, confirm waiting@example.com' }).click();
    await page.getByText('No registration is waiting for confirmation.').waitFor();
    const login = await clientCall('/auth/providers/local-userpass/login', { username: 'waiting@example.com', password: 'waiting-password' });
    expect(login.status).toBe(200);
  });

  it("shows a user's sessions and custom data, and revokes one session: its refresh token is refused", async () => {
    const signedIn = (await (await clientCall('/auth/providers/local-userpass/login', { username: 'waiting@example.com', password: 'waiting-password' })).json()) as { refresh_token: string; user_id: string };
    const refresh = () => fetch(`${server.url}/api/client/v2.0/auth/session`, { method: 'POST', headers: { authorization: `Bearer ${signedIn.refresh_token}` } });
    expect((await refresh()).status).toBe(201);
    await page.reload();
    await page.getByLabel('Search by id, email or provider').fill('waiting@example.com');
    await page.getByRole('button', { name: signedIn.user_id }).click();
    const user = page.getByRole('complementary', { name: 'User' });
    const sessions = user.getByRole('list', { name: /session\(s\)/ });
    // Two sign-ins: the confirmation test's and this one.
    await user.getByText('2 session(s), newest first').waitFor();
    expect(await sessions.getByRole('listitem').count()).toBe(2);
    await user.getByText('The app reads no custom user data').waitFor();
    const listed = await api<{ _id: string; created: number }[]>('GET', `/groups/${await groupId()}/apps/${app._id}/users/${signedIn.user_id}/sessions`);
    // The newest session (this test's) is the first row.
    const newest = listed.body[0];
    await sessions.getByRole('button', { name: 'Revoke session 1' }).click();
    await user.getByText("This session's refresh token and its access tokens stop working").waitFor();
    await sessions.scrollIntoViewIfNeeded();
    await shot('user-sessions');
    await user.getByRole('button', { name: 'Yes, revoke session 1' }).click();
    await user.getByText('1 session(s), newest first').waitFor();
    expect((await refresh()).status).toBe(401);
    const left = await api<{ _id: string }[]>('GET', `/groups/${await groupId()}/apps/${app._id}/users/${signedIn.user_id}/sessions`);
    expect(left.body.map((session) => session._id)).not.toContain(newest._id);
    expect(left.body).toHaveLength(1);
    await user.getByRole('button', { name: 'Revoke all sessions' }).click();
    await user.getByRole('button', { name: 'Yes, revoke all sessions' }).click();
    await user.getByText('No session: the user is signed in nowhere.').waitFor();
  });

  it('runs a function as the system user and as a user, with arguments', async () => {
    await open('Functions');
    await page.getByRole('combobox', { name: 'Function' }).selectOption('addItem');
    await page.getByLabel('Arguments (a JSON array)').fill('["run from the console"]');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Function result').getByText('$oid').waitFor();
    await page.getByText(/Ran in \d+ms/).waitFor();
    // As an app user: the function sees that user as context.user (the log entry of the run names them).
    const other = (await (await clientCall('/auth/providers/anon-user/login', {})).json()) as { user_id: string };
    await page.getByLabel('A user').check();
    await page.getByLabel('User id').fill(other.user_id);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Function result').getByText('$oid').waitFor();
    await eventually(async () => {
      const logs = await api<{ logs: { function_name?: string; user_id?: string }[] }>('GET', `/groups/${await groupId()}/apps/${app._id}/logs?type=FUNCTION`);
      expect(logs.body.logs.some((entry) => entry.function_name === 'addItem' && entry.user_id === other.user_id)).toBe(true);
    });
    await shot('functions');
    // An unknown argument shape is stopped in the page, before any call.
    await page.getByLabel('Arguments (a JSON array)').fill('{"not": "an array"}');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'must be a JSON array' }).waitFor();
  });

  it('explains a rule decision: the role that applied and what decided', async () => {
    await open('Rules');
    await page.getByLabel('User id').fill(client.user_id);
    await page.getByLabel('Operation').selectOption('read');
    await page.getByLabel('Document (JSON)').fill(JSON.stringify({ owner_id: client.user_id, summary: 'mine' }));
    await page.getByRole('button', { name: 'Explain' }).click();
    const decision = page.getByRole('region', { name: 'Decision' }).or(page.locator('[aria-label="Decision"]'));
    await decision.getByRole('heading', { name: 'Allowed' }).waitFor();
    await decision.getByText('owner', { exact: true }).waitFor();
    await shot('rules');
    await page.getByLabel('Document (JSON)').fill(JSON.stringify({ owner_id: 'someone-else', summary: 'theirs' }));
    await page.getByRole('button', { name: 'Explain' }).click();
    await decision.getByRole('heading', { name: 'Refused' }).waitFor();
    // A partition-sync decision on an app without partition-based sync: the API's refusal, shown as it says it.
    await page.getByLabel('Operation').selectOption('sync_read');
    await page.getByLabel(/^Partition value/).fill(JSON.stringify(client.user_id));
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.getByRole('alert').filter({ hasText: 'no partition-based sync permissions' }).waitFor();
  });

  it('terminates and re-enables sync, stating the consequences before the click', async () => {
    const services = await api<{ _id: string; name: string }[]>('GET', `/groups/${await groupId()}/apps/${app._id}/services`);
    const serviceId = services.body.find((service) => service.name === 'mongodb-atlas')!._id;
    const configPath = `/groups/${await groupId()}/apps/${app._id}/services/${serviceId}/config`;
    // Flexible sync needs sync-compatible roles: the template's owner role gets document filters.
    const rulesPath = `/groups/${await groupId()}/apps/${app._id}/services/${serviceId}/rules`;
    const [rule] = (await api<{ _id: string }[]>('GET', rulesPath)).body;
    const full = (await api<{ roles: Record<string, unknown>[] }>('GET', `${rulesPath}/${rule._id}`)).body;
    const filters = { read: { owner_id: '%%user.id' }, write: { owner_id: '%%user.id' } };
    const updated = await api('PUT', `${rulesPath}/${rule._id}`, { ...full, roles: full.roles.map((role) => ({ ...role, document_filters: filters })) });
    expect([200, 204], JSON.stringify(updated.body)).toContain(updated.status);
    const enabled = await api('PATCH', configPath, { flexible_sync: { state: 'enabled', database_name: 'todo', queryable_fields_names: ['owner_id'] } });
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
    await open('Sync');
    await expect(page.getByTestId('sync-state').textContent()).resolves.toBe('enabled');
    await page.getByRole('button', { name: 'Terminate sync' }).click();
    await page.getByText('ends every live sync session now').waitFor();
    await page.getByText('must do a client reset').waitFor();
    await shot('sync');
    await page.getByRole('button', { name: 'Yes, terminate sync' }).click();
    await eventually(async () => expect(await page.getByTestId('sync-state').textContent()).toBe('terminated'));
    const terminated = await api<{ flexible_sync: { state: string; last_disabled?: number } }>('GET', configPath);
    expect(terminated.body.flexible_sync).toMatchObject({ state: 'disabled', last_disabled: expect.any(Number) as number });
    await page.getByRole('button', { name: 'Re-enable sync' }).click();
    await page.getByText('starts a new sync history').waitFor();
    await page.getByRole('button', { name: 'Yes, re-enable sync' }).click();
    await eventually(async () => expect(await page.getByTestId('sync-state').textContent()).toBe('enabled'));
    expect((await api<{ flexible_sync: { state: string } }>('GET', configPath)).body.flexible_sync.state).toBe('enabled');
  });

  it("lists values and secrets and never puts a secret's value in the page", async () => {
    const secretValue = `s3cr3t-${randomBytes(8).toString('hex')}`;
    await open('Values & secrets');
    await page.getByLabel('Secret name').fill('stripe_key');
    await page.getByLabel('Secret value').fill(secretValue);
    await page.getByRole('button', { name: 'Add secret' }).click();
    await page.getByRole('table').getByRole('rowheader', { name: 'stripe_key' }).waitFor();
    await page.getByLabel('From a secret').check();
    await page.getByLabel('Name', { exact: true }).fill('stripe');
    await page.getByRole('combobox', { name: /^Secret/ }).selectOption('stripe_key');
    await page.getByRole('button', { name: 'Add value' }).click();
    await page.getByRole('rowheader', { name: 'stripe', exact: true }).waitFor();
    await page.getByRole('row').filter({ hasText: 'from a secret' }).getByRole('button', { name: 'Show secret name' }).click();
    await page.getByLabel('Value stripe').waitFor();
    await shot('values');
    const html = await page.content();
    const fields = await page.locator('input, textarea').evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
    const storage = await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }));
    expect(html).not.toContain(secretValue);
    expect(fields.join('\n')).not.toContain(secretValue);
    expect(storage).not.toContain(secretValue);
    // The secret exists (the value resolves to it in a function), so the value was sent, not dropped.
    const secrets = await api<{ name: string }[]>('GET', `/groups/${await groupId()}/apps/${app._id}/secrets`);
    expect(secrets.body.map((secret) => secret.name)).toContain('stripe_key');
    expect(JSON.stringify(secrets.body)).not.toContain(secretValue);
  });

  it('exports the app as a zip, imports it back after showing its diff, and shows the deployment history', async () => {
    await open('Deployments');
    const history = page.getByRole('table').filter({ hasText: 'deployment(s)' });
    await history.waitFor();
    const before = await history.getByRole('row').count();
    expect(before).toBeGreaterThan(1);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the app as a zip' }).click()]);
    const zip = join(dataDir.path, 'export.zip');
    await download.saveAs(zip);
    await importZip(zip, 'Import and deploy', "configuration is replaced by the zip's", 'Imported and deployed');
    await eventually(async () => expect(await history.getByRole('row').count()).toBe(before + 1));
    await shot('deployments');
  });

  it("stages an import in a draft and shows the draft's diff before deploying it", async () => {
    const history = page.getByRole('table').filter({ hasText: 'deployment(s)' });
    const before = await history.getByRole('row').count();
    await page.getByRole('button', { name: 'Start a draft' }).click();
    await page.getByText('The draft changes nothing yet.').waitFor();
    // The exported app with one function changed.
    const files = unzipSync(readFileSync(join(dataDir.path, 'export.zip')));
    const source = Object.keys(files).find((path) => /^functions\/addItem(\.js|\/source\.js)$/.test(path))!;
    files[source] = Buffer.concat([Buffer.from(files[source]), Buffer.from('\n// changed in a draft\n')]);
    const changed = join(dataDir.path, 'changed.zip');
    writeFileSync(changed, zipSync(files));
    await importZip(changed, 'Import into the draft', 'nothing goes live until the draft is deployed', 'Imported into the draft');
    const diff = page.getByLabel('Draft diff');
    await diff.getByText(/addItem/).first().waitFor();
    // Staged, not live: the deployed function is unchanged and no deployment was added.
    const functionsPath = `/groups/${await groupId()}/apps/${app._id}/functions`;
    const addItem = (await api<{ _id: string; name: string }[]>('GET', functionsPath)).body.find((fn) => fn.name === 'addItem')!;
    expect((await api<{ source: string }>('GET', `${functionsPath}/${addItem._id}`)).body.source).not.toContain('changed in a draft');
    expect(await history.getByRole('row').count()).toBe(before);
    await page.getByRole('button', { name: 'Deploy the draft' }).click();
    await page.getByText('The changes above go live now').waitFor();
    await diff.scrollIntoViewIfNeeded();
    await shot('draft');
    await page.getByRole('button', { name: 'Yes, deploy the draft' }).click();
    await page.getByRole('button', { name: 'Start a draft' }).waitFor();
    await eventually(async () => expect(await history.getByRole('row').count()).toBe(before + 1));
    expect((await api<{ source: string }>('GET', `${functionsPath}/${addItem._id}`)).body.source).toContain('changed in a draft');
  });

  it('shows the metrics as charts, sync connections and trigger lag among them', async () => {
    // A live sync connection, so the sync chart has something to count.
    const user = (await (await clientCall('/auth/providers/anon-user/login', {})).json()) as { access_token: string };
    const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/client/v2.0/app/${app.client_app_id}/realm-sync?baas_at=${user.access_token}`, ['com.mongodb.realm-query-sync#14']);
    await new Promise<void>((resolve, reject) => {
      socket.on('open', () => resolve());
      socket.on('error', reject);
    });
    try {
      await open('Metrics');
      await page.getByRole('img', { name: 'Requests per period', exact: true }).waitFor();
      await page.getByRole('img', { name: 'Trigger lag (largest) per period', exact: true }).waitFor();
      const syncOpen = page.locator('figure').filter({ has: page.getByRole('img', { name: 'Sync connections open per period', exact: true }) });
      await eventually(async () => {
        await page.getByRole('combobox', { name: /^Period/ }).selectOption('1h');
        await page.getByRole('combobox', { name: /^Period/ }).selectOption('24h');
        expect(await syncOpen.locator('figcaption').textContent()).toMatch(/at most [1-9]/);
      });
      await shot('metrics');
    } finally {
      socket.close();
    }
  });

  it('refreshes an expired access token, and asks to sign in again when the session cannot be refreshed', async () => {
    await page.evaluate(() => {
      const session = JSON.parse(sessionStorage.getItem('tessera.console.session')!) as Record<string, string>;
      sessionStorage.setItem('tessera.console.session', JSON.stringify({ ...session, accessToken: 'expired.or.forged' }));
    });
    const refreshed = page.waitForResponse((response) => response.url().endsWith('/auth/session') && response.request().method() === 'POST');
    await page.reload();
    expect((await refreshed).status()).toBe(201);
    await page.getByRole('heading', { name: 'Metrics', level: 1 }).waitFor();

    await page.evaluate(() => {
      const session = JSON.parse(sessionStorage.getItem('tessera.console.session')!) as Record<string, string>;
      sessionStorage.setItem('tessera.console.session', JSON.stringify({ ...session, accessToken: 'x.y.z', refreshToken: 'x.y.z' }));
    });
    await page.reload();
    await page.getByRole('status').filter({ hasText: 'Your session has ended' }).waitFor();
    await page.getByLabel('Username').waitFor();
  });

  it('signs in with an admin API key, signs out: the session ends on the server, and every admin API call the console made is refused without a valid session', async () => {
    const key = await adminApiKey(server.url, password);
    await page.getByLabel('Admin API key').check();
    await page.getByLabel('Public API key').fill(key.public_key);
    await page.getByLabel('Private API key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'invalid API key pair' }).waitFor();
    await page.getByLabel('Private API key').fill(key.private_key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the session ended.
    await page.getByRole('heading', { name: 'Metrics', level: 1 }).waitFor();
    const session = JSON.parse((await page.evaluate(() => sessionStorage.getItem('tessera.console.session')))!) as { accessToken: string; refreshToken: string };
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('status').filter({ hasText: 'You are signed out' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('tessera.console.session'))).toBeNull();

    const replayed = calls.filter((call) => !/\/auth\/providers\/[^/]+\/login$/.test(new URL(call.url).pathname) && !new URL(call.url).pathname.endsWith('/auth/session'));
    const distinct = new Map(replayed.map((call) => [`${call.method} ${new URL(call.url).pathname}`, call]));
    // The pages this file visits make at least these calls; all of them are admin API calls under the guard.
    expect(distinct.size).toBeGreaterThan(25);
    process.stdout.write(`console: replaying ${distinct.size} distinct admin API calls with 5 kinds of invalid session\n`);
    const forged = forgeToken();
    const credentials = [undefined, 'Bearer not-a-token', `Bearer ${forged}`, `Bearer ${session.accessToken}`, `Bearer ${session.refreshToken}`];
    for (const call of distinct.values()) {
      for (const authorization of credentials) {
        const response = await fetch(call.url, {
          method: call.method,
          headers: { ...(authorization ? { authorization } : {}), ...(call.contentType ? { 'content-type': call.contentType } : {}) },
          ...(call.body !== null && call.method !== 'GET' ? { body: call.body } : {}),
        });
        const body = (await response.json()) as { error_code?: string };
        expect(`${call.method} ${call.url} ${authorization?.slice(0, 20) ?? 'none'}: ${response.status} ${body.error_code}`).toMatch(/: 401 InvalidSession$/);
      }
    }
  });

  async function groupId(): Promise<string> {
    const session = JSON.parse((await page.evaluate(() => sessionStorage.getItem('tessera.console.session')))!) as { groupId: string };
    return session.groupId;
  }
});

/** A new admin API key pair of the admin user, made through the admin API. */
async function adminApiKey(url: string, adminPassword: string): Promise<{ public_key: string; private_key: string }> {
  const login = await fetch(`${url}/api/admin/v3.0/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: adminPassword }) });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const created = await fetch(`${url}/api/admin/v3.0/admin_api_keys`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'console-test' }) });
  expect(created.status).toBe(201);
  return (await created.json()) as { public_key: string; private_key: string };
}

/** A well-formed access token signed with a key the server does not have. */
function forgeToken(): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ sub: '000000000000000000000000', typ: 'access', sid: 'x', iat: now, exp: now + 600 })}`;
  return `${unsigned}.${createHmac('sha256', randomBytes(32)).update(unsigned).digest('base64url')}`;
}

/** A GET with the path exactly as written (fetch would resolve the dot segments first). */
async function rawGet(port: number, path: string): Promise<string> {
  const { connect } = await import('node:net');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
