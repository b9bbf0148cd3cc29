import { Body, Controller, HttpCode, Ip, Post } from '@nestjs/common';
import { LoginRateLimiter } from '@tessera/credentials';
import { AdminApiKeyStore, AdminUserStore } from '@tessera/platform';
import { AdminAuthError, AdminAuthErrorCode } from './admin-auth.exception';
import { AdminAuthService, type AdminTokens } from './admin-auth.service';

/**
 * `POST /api/admin/v3.0/auth/providers/mongodb-cloud/login` `{ username: <public key>, apiKey: <private key> }`:
 * realm-cli's default login, with an admin API key pair. The session is the key owner's. Failed attempts
 * count per client address (each guess is another secret, not one identity), as the client API counts them.
 */
@Controller('api/admin/v3.0/auth/providers/mongodb-cloud')
export class ApiKeyLoginController {
  constructor(
    private readonly apiKeys: AdminApiKeyStore,
    private readonly users: AdminUserStore,
    private readonly auth: AdminAuthService,
    private readonly limiter: LoginRateLimiter,
  ) {}

  @Post('login')
  @HttpCode(200)
  async login(@Body() body: { username?: unknown; apiKey?: unknown } | undefined, @Ip() clientAddress: string): Promise<AdminTokens> {
    const publicKey = body?.username;
    const privateKey = body?.apiKey;
    if (typeof publicKey !== 'string' || typeof privateKey !== 'string' || !publicKey || !privateKey) {
      throw new AdminAuthError(AdminAuthErrorCode.BadRequest, 'username (public API key) and apiKey (private API key) are required');
    }
    const user = await this.limiter.attempt(
      `admin-api-key\u0000${clientAddress}`,
      async () => {
        const userId = await this.apiKeys.authenticate(publicKey, privateKey);
        const owner = userId ? await this.users.get(userId) : undefined;
        if (!owner) throw new AdminAuthError(AdminAuthErrorCode.InvalidPassword, 'invalid API key pair');
        return owner;
      },
      isFailedLogin,
    );
    return this.auth.startSession(user);
  }
}

function isFailedLogin(error: unknown): boolean {
  return error instanceof AdminAuthError && error.errorCode === AdminAuthErrorCode.InvalidPassword;
}
