// The console's only way to the server: the admin API v3.0 on the page's own origin, with the session kept
// as the CLI keeps it (apps/cli/src/admin-client.ts): an access token used until the API answers 401
// InvalidSession, then one refresh with the refresh token and one retry; a failed refresh ends the session.
// Tokens live in sessionStorage (this tab only, gone when it closes); the CSP allows no other script to read them.

export type AuthType = 'local' | 'api-key';

export interface Session {
  accessToken: string;
  refreshToken: string;
  groupId: string;
  username: string;
  authType: AuthType;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode: string | undefined,
  ) {
    super(message);
  }
}

const storageKey = 'tessera.console.session';
const api = '/api/admin/v3.0';

export function loadSession(): Session | undefined {
  try {
    const text = sessionStorage.getItem(storageKey);
    return text ? (JSON.parse(text) as Session) : undefined;
  } catch {
    return undefined;
  }
}

function saveSession(session: Session | undefined): void {
  if (session) sessionStorage.setItem(storageKey, JSON.stringify(session));
  else sessionStorage.removeItem(storageKey);
}

interface Tokens {
  access_token: string;
  refresh_token: string;
}

/** Signs in with the admin user's password or an admin API key pair, and finds the admin's group. */
export async function signIn(authType: AuthType, username: string, secret: string): Promise<Session> {
  const login = authType === 'local' ? { path: '/auth/providers/local-userpass/login', body: { username, password: secret } } : { path: '/auth/providers/mongodb-cloud/login', body: { username, apiKey: secret } };
  const tokens = await call<Tokens>('POST', login.path, { json: login.body });
  const profile = await call<{ roles: { group_id: string }[] }>('GET', '/auth/profile', { token: tokens.access_token });
  const groupId = profile.roles[0]?.group_id;
  if (!groupId) throw new ApiError(403, 'this administrator manages no group', undefined);
  const session: Session = { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, groupId, username, authType };
  saveSession(session);
  return session;
}

interface CallOptions {
  json?: unknown;
  body?: Blob | ArrayBuffer;
  contentType?: string;
  token?: string;
  /** Answer the body as bytes (downloads). */
  binary?: boolean;
}

async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let body: BodyInit | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.body !== undefined) {
    headers['content-type'] = options.contentType ?? 'application/octet-stream';
    body = options.body;
  }
  const response = await fetch(`${api}${path}`, { method, headers, ...(body !== undefined ? { body } : {}), credentials: 'omit', cache: 'no-store' });
  if (options.binary && response.ok) return (await response.blob()) as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    const error = (parsed ?? {}) as { error?: unknown; error_code?: unknown };
    throw new ApiError(response.status, typeof error.error === 'string' ? error.error : `${method} ${path}: HTTP ${response.status}`, typeof error.error_code === 'string' ? error.error_code : undefined);
  }
  return parsed as T;
}

/** The signed-in admin's calls. `onEnded` is told when the session can no longer be refreshed. */
export class AdminApi {
  private refreshing: Promise<void> | undefined;

  constructor(
    private session: Session,
    private readonly onEnded: (reason: string) => void,
  ) {}

  get groupId(): string {
    return this.session.groupId;
  }

  get username(): string {
    return this.session.username;
  }

  /** A path under the app: `app(id, '/logs')`. */
  app(appId: string, path = ''): string {
    return `/groups/${this.session.groupId}/apps/${encodeURIComponent(appId)}${path}`;
  }

  async request<T>(method: string, path: string, options: Omit<CallOptions, 'token'> = {}): Promise<T> {
    try {
      return await call<T>(method, path, { ...options, token: this.session.accessToken });
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401 && error.errorCode === 'InvalidSession')) throw error;
      await this.refresh();
      return call<T>(method, path, { ...options, token: this.session.accessToken });
    }
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** Ends the session on the server (its access token stops working at once), then here. */
  async signOut(): Promise<void> {
    try {
      await call('DELETE', '/auth/session', { token: this.session.refreshToken });
    } finally {
      saveSession(undefined);
    }
  }

  private refresh(): Promise<void> {
    // Pages load in parallel: one refresh for all of them.
    this.refreshing ??= call<{ access_token: string }>('POST', '/auth/session', { token: this.session.refreshToken })
      .then(
        (reply) => {
          this.session = { ...this.session, accessToken: reply.access_token };
          saveSession(this.session);
        },
        (error: unknown) => {
          saveSession(undefined);
          this.onEnded('Your session has ended: sign in again.');
          throw error;
        },
      )
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
