import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { repositoryRoot } from '@tessera/testing';
import { AdminSession } from '../admin-api/admin-session';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const binary = join(repositoryRoot, 'apps', 'cli', 'dist', 'main.js');

/** Writes a file of a local app directory, making its directories. */
export function writeAppFile(path: string, content: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** Runs a command to its end and captures its output (no TTY, so nothing prompts). */
export function runCommand(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs the built `tessera` binary as a subprocess, with only PATH from this environment. */
export function tessera(args: string[], env: Record<string, string>, cwd = repositoryRoot): Promise<CliRun> {
  return runCommand(process.execPath, [binary, ...args], { cwd, env: { PATH: process.env['PATH'] ?? '', ...env } });
}

/** Starts `tessera` and leaves it running (for `logs list --tail`). */
export function startTessera(args: string[], env: Record<string, string>): { child: ChildProcess; stdout(): string } {
  const child = spawn(process.execPath, [binary, ...args], { cwd: repositoryRoot, env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return { child, stdout: () => stdout };
}

/** Every file under a directory, relative POSIX path -> bytes as base64 (for byte-exact comparisons). */
export async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (directory: string): Promise<void> => {
    for (const entry of await readdir(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out[relative(root, path).split(sep).join('/')] = (await readFile(path)).toString('base64');
    }
  };
  await walk(root);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * A CLI profile logged in to `url` as the admin (config in `<workDir>/config`) and a new app created with
 * `apps create --local <local>`: the set-up of every test that pushes with the CLI.
 */
export async function cliWithApp(url: string, password: string, workDir: string, name: string, local: string): Promise<{ env: Record<string, string>; clientAppId: string }> {
  const env = { TESSERA_CONFIG_DIR: join(workDir, 'config') };
  const login = await tessera(['login', '--url', url, '--username', 'admin', '--password', password], env);
  if (login.code !== 0) throw new Error(`tessera login: ${login.stderr}`);
  const created = await tessera(['apps', 'create', '--name', name, '--local', local, '--json'], env);
  if (created.code !== 0) throw new Error(`tessera apps create: ${created.stderr}`);
  return { env, clientAppId: (JSON.parse(created.stdout) as { client_app_id: string }).client_app_id };
}

/**
 * Turns on email/password logins (confirmed at once) for an app the CLI created, through the admin API as
 * `admin`; answers the admin session and the app's `_id`.
 */
export async function enableEmailPassword(server: { url: string }, password: string, clientAppId: string): Promise<{ admin: AdminSession; appId: string }> {
  const admin = await AdminSession.login(server, 'admin', password);
  const apps = (await admin.request<{ _id: string; client_app_id: string }[]>('GET', `/groups/${admin.groupId}/apps`)).body;
  const appId = apps.find((app) => app.client_app_id === clientAppId)?._id;
  if (!appId) throw new Error(`no app ${clientAppId} in the admin's group`);
  const provider = await admin.request('POST', admin.app(appId, '/auth_providers'), { type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } });
  if (provider.status !== 201) throw new Error(`auth provider: ${provider.status} ${JSON.stringify(provider.body)}`);
  return { admin, appId };
}
