import { Injectable } from '@nestjs/common';
import { AdminUserStore, SigningKeyStore, signJwt, verifyJwt, type AdminUser } from '@tessera/platform';
import { AdminAuthError, AdminAuthErrorCode } from './admin-auth.exception';

const accessTokenSeconds = 30 * 60;
const refreshTokenSeconds = 60 * 24 * 60 * 60;

export interface AdminTokens {
  access_token: string;
  refresh_token: string;
  user_id: string;
  device_id: string;
}

/** Admin logins and sessions: short-lived access tokens, revocable refresh tokens (one per session). */
@Injectable()
export class AdminAuthService {
  constructor(
    private readonly users: AdminUserStore,
    private readonly keys: SigningKeyStore,
  ) {}

  async login(username: unknown, password: unknown): Promise<AdminTokens> {
    if (typeof username !== 'string' || typeof password !== 'string' || !username || !password) {
      throw new AdminAuthError(AdminAuthErrorCode.BadRequest, 'username and password are required');
    }
    const user = await this.users.authenticate(username, password);
    if (!user) throw new AdminAuthError(AdminAuthErrorCode.InvalidPassword, 'invalid username/password');
    const sessionId = await this.users.openSession(user._id);
    const key = await this.keys.get('admin');
    const now = Math.floor(Date.now() / 1000);
    return {
      access_token: this.accessToken(user, key, now),
      refresh_token: signJwt({ sub: user._id, iat: now, exp: now + refreshTokenSeconds, typ: 'refresh', sid: sessionId }, key),
      user_id: user._id,
      device_id: '000000000000000000000000',
    };
  }

  /** The admin an access token belongs to; 401 InvalidSession otherwise. */
  async authenticate(authorization: string | undefined): Promise<AdminUser> {
    const claims = await this.verify(authorization, 'access');
    const user = await this.users.get(claims.sub);
    if (!user) throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, 'invalid session: user not found');
    return user;
  }

  async refresh(authorization: string | undefined): Promise<{ access_token: string }> {
    const claims = await this.verify(authorization, 'refresh');
    const user = await this.users.sessionUser(String(claims['sid']));
    if (!user) throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, 'invalid session: failed to find refresh token');
    return { access_token: this.accessToken(user, await this.keys.get('admin'), Math.floor(Date.now() / 1000)) };
  }

  async logout(authorization: string | undefined): Promise<void> {
    const claims = await this.verify(authorization, 'refresh');
    if (!(await this.users.closeSession(String(claims['sid'])))) {
      throw new AdminAuthError(AdminAuthErrorCode.InvalidSession, 'invalid session: failed to find refresh token');
    }
  }

  private accessToken(user: AdminUser, key: Buffer, now: number): string {
    return signJwt({ sub: user._id, iat: now, exp: now + accessTokenSeconds, typ: 'access', groups: user.groupIds }, key);
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
