import { unzipSync, zipSync } from 'fflate';
import type { ServerProcess } from '@tessera/testing';

export interface AdminResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
  bytes: Uint8Array;
}

/** A logged-in admin talking to a running server, as realm-cli does (bearer token, JSON bodies). */
export class AdminSession {
  private constructor(
    readonly baseUrl: string,
    readonly accessToken: string,
    readonly groupId: string,
  ) {}

  static async login(server: Pick<ServerProcess, 'url'>, username: string, password: string): Promise<AdminSession> {
    const baseUrl = `${server.url}/api/admin/v3.0`;
    const login = await fetch(`${baseUrl}/auth/providers/local-userpass/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
    const { access_token: accessToken } = (await login.json()) as { access_token: string };
    const profile = (await (await fetch(`${baseUrl}/auth/profile`, { headers: { authorization: `Bearer ${accessToken}` } })).json()) as { roles: { group_id: string }[] };
    return new AdminSession(baseUrl, accessToken, profile.roles[0].group_id);
  }

  app(appId: string, rest = ''): string {
    return `/groups/${this.groupId}/apps/${appId}${rest}`;
  }

  async request<T = unknown>(method: string, path: string, body?: unknown, options: { zip?: Uint8Array; token?: string } = {}): Promise<AdminResponse<T>> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? this.accessToken}` };
    let payload: string | Uint8Array<ArrayBuffer> | undefined;
    if (options.zip) {
      headers['content-type'] = 'application/zip';
      payload = new Uint8Array(options.zip);
    } else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const type = response.headers.get('content-type') ?? '';
    const parsed = type.startsWith('application/json') && bytes.length ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as T) : (undefined as T);
    return { status: response.status, body: parsed, headers: response.headers, bytes };
  }

  async createApp(name: string, extra: Record<string, unknown> = {}): Promise<{ _id: string; client_app_id: string; name: string }> {
    const response = await this.request<{ _id: string; client_app_id: string; name: string }>('POST', `/groups/${this.groupId}/apps`, { name, ...extra });
    if (response.status !== 201) throw new Error(`create ${name}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }

  async pull(appId: string): Promise<Map<string, string>> {
    const response = await this.request('GET', this.app(appId, '/pull'));
    if (response.status !== 200) throw new Error(`pull: ${response.status}`);
    return unzipText(response.bytes);
  }

  push(appId: string, files: Map<string, string>, dryRun = false): Promise<AdminResponse<{ diffs: string[]; error?: string; error_code?: string; violations?: { file: string; path: string; rule: string }[] }>> {
    return this.request('PATCH', this.app(appId, `/push${dryRun ? '?dry_run=true' : ''}`), undefined, { zip: zipText(files) });
  }
}

export function unzipText(zip: Uint8Array): Map<string, string> {
  return new Map(Object.entries(unzipSync(zip)).map(([path, bytes]) => [path, Buffer.from(bytes).toString('utf8')]));
}

export function zipText(files: Map<string, string>): Uint8Array {
  return zipSync(Object.fromEntries([...files].map(([path, text]) => [path, Buffer.from(text)])));
}

/** The canonical form configuration files are written in: sorted keys, 2-space indent, final newline. */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])])) : v;
  return `${JSON.stringify(sort(value), null, 2)}\n`;
}
