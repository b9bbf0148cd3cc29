import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { AdminApiKeyStore, AdminUserStore, SigningKeyStore, signJwt } from '@tessera/platform';
import { AdminAuthError, AdminAuthErrorCode } from './admin-auth.exception';
import type { AdminTokens } from './admin-auth.service';

// The same lifetimes and claims as AdminAuthService issues for a password login.
const accessTokenSeconds = 30 * 60;
const refreshTokenSeconds = 60 * 24 * 60 * 60;

/**
 * `POST /api/admin/v3.0/auth/providers/mongodb-cloud/login` `{ username: <public key>, apiKey: <private key> }`:
 * realm-cli's default login, with an admin API key pair. The session is the key owner's.
 */
@Controller('api/admin/v3.0/auth/providers/mongodb-cloud')
export class ApiKeyLoginController {
  constructor(
    private readonly apiKeys: AdminApiKeyStore,
    private readonly users: AdminUserStore,
    private readonly keys: SigningKeyStore,
  ) {}

  @Post('login')
  @HttpCode(200)
  async login(@Body() body: { username?: unknown; apiKey?: unknown } | undefined): Promise<AdminTokens> {
    if (typeof body?.username !== 'string' || typeof body.apiKey !== 'string' || !body.username || !body.apiKey) {
      throw new AdminAuthError(AdminAuthErrorCode.BadRequest, 'username (public API key) and apiKey (private API key) are required');
    }
    const userId = await this.apiKeys.authenticate(body.username, body.apiKey);
    const user = userId ? await this.users.get(userId) : undefined;
    if (!user) throw new AdminAuthError(AdminAuthErrorCode.InvalidPassword, 'invalid API key pair');
    const sessionId = await this.users.openSession(user._id);
    const key = await this.keys.get('admin');
    const now = Math.floor(Date.now() / 1000);
    return {
      access_token: signJwt({ sub: user._id, iat: now, exp: now + accessTokenSeconds, typ: 'access', groups: user.groupIds }, key),
      refresh_token: signJwt({ sub: user._id, iat: now, exp: now + refreshTokenSeconds, typ: 'refresh', sid: sessionId }, key),
      user_id: user._id,
      device_id: '000000000000000000000000',
    };
  }
}
