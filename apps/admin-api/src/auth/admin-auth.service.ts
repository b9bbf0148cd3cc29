import { Inject, Injectable } from '@nestjs/common';
import { LoginRateLimiter, signJwt, verifyJwt } from '@tessera/credentials';
import { AdminUserStore, SigningKeyStore, type AdminUser } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { AdminAuthError, AdminAuthErrorCode } from './admin-auth.exception';

export interface AdminTokens {
  access_token: string;
  refresh_token: string;
  user_id: string;
  device_id: string;
}

/**
 * Admin logins and sessions. Each login opens a session with an end (the refresh token's lifetime); both
 * tokens carry its id (`sid`), and every request checks the session is still open, so logging out revokes
 * the access token at once rather than when it expires. Lifetimes: TESSERA_ADMIN_ACCESS_TOKEN_TTL_SECONDS,
 * TESSERA_ADMIN_REFRESH_TOKEN_TTL_SECONDS.
 */
@Injectable()
export class AdminAuthService {
  private readonly accessSeconds: number;
  private readonly refreshSeconds: number;

  constructor(
    private readonly users: AdminUserStore,
    private readonly keys: SigningKeyStore,
    private readonly limiter: LoginRateLimiter,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.accessSeconds = settings.adminAccessTokenTtlSeconds;
    this.refreshSeconds = settings.adminRefreshTokenTtlSeconds;
  }

  async login(username: unknown, password: unknown): Promise<AdminTokens> {
    if (typeof username !== 'string' || typeof password !== 'string' || !username || !password) {
      throw new AdminAuthError(AdminAuthErrorCode.BadRequest, 'username and password are required');
    }
    // Failed logins count per username, as the client API's email/password provider counts them; the
    // password hashing behind them is bounded process-wide (passwords.ts), whatever the usernames.
    const user = await this.limiter.attempt(
      `admin-userpass\u0000${username}`,
      async () => {
        const found = await this.users.authenticate(username, password);
        if (!found) throw new AdminAuthError(AdminAuthErrorCode.InvalidPassword, 'invalid username/password');
        return found;
      },
      (error) => error instanceof AdminAuthError && error.errorCode === AdminAuthErrorCode.InvalidPassword,
    );
    return this.startSession(user);
  }

  /** Opens a session for an authenticated admin (password or API key login) and issues its tokens. */
  async startSession(user: AdminUser): Promise<AdminTokens> {
    const sessionId = await this.users.openSession(user._id, this.refreshSeconds);
    const key = await this.keys.get('admin');
    const now = Math.floor(Date.now() / 1000);
    return {
      access_token: this.accessToken(user, sessionId, key, now),
      refresh_token: signJwt({ sub: user._id, iat: now, exp: now + this.refreshSeconds, typ: 'refresh', sid: sessionId }, key),
      user_id: user._id,
      device_id: '000000000000000000000000',
    };
  }

  /** The admin an access token belongs to, while its session is open; 401 InvalidSession otherwise. */
  async authenticate(authorization: string | undefined): Promise<AdminUser> {
    const claims = await this.verify(authorization, 'access');
    const user = await this.sessionUser(claims, 'access');
    if (user._id !== claims.sub) throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, 'invalid session: invalid token');
    return user;
  }

  async refresh(authorization: string | undefined): Promise<{ access_token: string }> {
    const claims = await this.verify(authorization, 'refresh');
    const user = await this.sessionUser(claims, 'refresh');
    return { access_token: this.accessToken(user, String(claims['sid']), await this.keys.get('admin'), Math.floor(Date.now() / 1000)) };
  }

  async logout(authorization: string | undefined): Promise<void> {
    const claims = await this.verify(authorization, 'refresh');
    if (typeof claims['sid'] !== 'string' || !(await this.users.closeSession(claims['sid']))) {
      throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, 'invalid session: failed to find refresh token');
    }
  }

  private async sessionUser(claims: { sub: string; [claim: string]: unknown }, type: 'access' | 'refresh'): Promise<AdminUser> {
    const sessionId = claims['sid'];
    const user = typeof sessionId === 'string' ? await this.users.sessionUser(sessionId) : undefined;
    if (!user) throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, type === 'refresh' ? 'invalid session: failed to find refresh token' : 'invalid session: the session has ended');
    return user;
  }

  private accessToken(user: AdminUser, sessionId: string, key: Buffer, now: number): string {
    return signJwt({ sub: user._id, iat: now, exp: now + this.accessSeconds, typ: 'access', sid: sessionId, groups: user.groupIds }, key);
  }

  private async verify(authorization: string | undefined, type: 'access' | 'refresh'): Promise<{ sub: string; [claim: string]: unknown }> {
    const token = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1];
    if (!token) throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, 'invalid session: missing Authorization bearer token');
    const result = verifyJwt(token, await this.keys.get('admin'));
    if (!result.valid) {
      const message = result.reason === 'expired' ? `invalid session: ${type} token expired` : 'invalid session: invalid token';
      throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, message);
    }
    if (result.claims['typ'] !== type) throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, `invalid ${type} token: incorrect token type`);
    return result.claims;
  }
}
