import { CliError, exitCodeFor, ExitCode, type Violation } from './cli-error';
import type { Output } from './output';

export interface Tokens {
  accessToken: string;
  refreshToken?: string;
}

export interface RequestOptions {
  json?: unknown;
  zip?: Uint8Array;
  /** One file as multipart/form-data (realm-cli's uploads: the dependencies archive as `file`). */
  file?: { field: string; filename: string; bytes: Uint8Array };
  /** Statuses that count as success (realm-cli checks exact ones); any 2xx when absent. */
  expect?: number[];
  /** Label of a progress line for a large download. */
  progress?: string;
  /** Send the refresh token instead of the access token. */
  useRefreshToken?: boolean;
  /** No Authorization header (login). */
  anonymous?: boolean;
}

export interface Reply<T> {
  status: number;
  body: T;
  bytes: Uint8Array;
  headers: Headers;
}

/**
 * The admin API v3.0 over fetch. A 401 InvalidSession is answered by one session refresh with the
 * refresh token and one retry, as realm-cli does; `onRefresh` lets the caller store the new token.
 */
export class AdminClient {
  constructor(
    readonly baseUrl: string,
    private tokens: Tokens | undefined,
    private readonly output: Output,
    private readonly onRefresh: (accessToken: string) => Promise<void> = async () => undefined,
  ) {}

  get api(): string {
    return `${this.baseUrl.replace(/\/+$/, '')}/api/admin/v3.0`;
  }

  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    let reply = await this.send<T>(method, path, options);
    if (reply.status === 401 && !options.anonymous && !options.useRefreshToken && this.tokens?.refreshToken && errorCodeOf(reply) === 'InvalidSession') {
      await this.refresh();
      reply = await this.send<T>(method, path, options);
    }
    if (options.expect ? !options.expect.includes(reply.status) : reply.status < 200 || reply.status >= 300) throw toCliError(reply, method, path);
    return reply;
  }

  private async refresh(): Promise<void> {
    const reply = await this.send<{ access_token?: string }>('POST', '/auth/session', { useRefreshToken: true });
    if (reply.status !== 201 || !reply.body?.access_token) {
      throw new CliError('your session has expired: log in again with `tessera login`', ExitCode.Auth, { errorCode: 'InvalidSession', status: reply.status });
    }
    this.tokens = { ...this.tokens!, accessToken: reply.body.access_token };
    await this.onRefresh(reply.body.access_token);
  }

  private async send<T>(method: string, path: string, options: RequestOptions): Promise<Reply<T>> {
    const headers: Record<string, string> = { accept: 'application/json', 'x-baas-request-origin': 'tessera-cli' };
    if (!options.anonymous) {
      const token = options.useRefreshToken ? this.tokens?.refreshToken : this.tokens?.accessToken;
      if (!token) throw new CliError('not logged in: run `tessera login` first (or set TESSERA_ACCESS_TOKEN)', ExitCode.Auth);
      headers['authorization'] = `Bearer ${token}`;
    }
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (options.zip) {
      headers['content-type'] = 'application/zip';
      body = new Uint8Array(options.zip);
    } else if (options.file) {
      const boundary = `tessera-${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`;
      headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="${options.file.field}"; filename="${options.file.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      body = new Uint8Array(Buffer.concat([Buffer.from(head), options.file.bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]));
    } else if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    let response: Response;
    try {
      response = await fetch(`${this.api}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach the server at ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, ExitCode.Network);
    }
    const bytes = await readBody(response, options.progress ? this.output.progress(options.progress) : undefined);
    const type = response.headers.get('content-type') ?? '';
    let parsed: unknown;
    if (type.startsWith('application/json') && bytes.length > 0) {
      try {
        parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
      } catch {
        parsed = undefined;
      }
    }
    return { status: response.status, body: parsed as T, bytes, headers: response.headers };
  }
}

async function readBody(response: Response, progress: ReturnType<Output['progress']> | undefined): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array();
  const total = Number(response.headers.get('content-length')) || undefined;
  const chunks: Uint8Array[] = [];
  let done = 0;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    chunks.push(next.value);
    done += next.value.length;
    progress?.update(done, total);
  }
  progress?.finish();
  return Buffer.concat(chunks);
}

function errorCodeOf(reply: Reply<unknown>): string | undefined {
  const body = reply.body as { error_code?: unknown } | undefined;
  return typeof body?.error_code === 'string' ? body.error_code : undefined;
}

function toCliError(reply: Reply<unknown>, method: string, path: string): CliError {
  const body = (reply.body ?? {}) as { error?: unknown; error_code?: unknown; violations?: Violation[] };
  const errorCode = typeof body.error_code === 'string' ? body.error_code : undefined;
  let message = typeof body.error === 'string' ? body.error : `${method} ${path} failed with HTTP ${reply.status}`;
  if (errorCode === 'InvalidSession') message = `${message}: log in again with \`tessera login\``;
  // The violations are printed one per line; the summary line is enough above them.
  if (body.violations?.length) message = message.split('\n')[0]!;
  return new CliError(message, exitCodeFor(errorCode, reply.status), { ...(errorCode ? { errorCode } : {}), status: reply.status, ...(body.violations ? { violations: body.violations } : {}) });
}
