import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { AdminAuthError, AdminAuthErrorCode } from './admin-auth.exception';
import { AdminAuthGuard, type AdminRequest } from './admin-auth.guard';
import { AdminAuthService, type AdminTokens } from './admin-auth.service';

/** `/api/admin/v3.0/auth/...`: admin login, session refresh and logout, profile. */
@Controller('api/admin/v3.0/auth')
export class AdminAuthController {
  constructor(private readonly auth: AdminAuthService) {}

  @Get('providers')
  providers(): { name: string; type: string; disabled: boolean }[] {
    return [
      { name: 'local-userpass', type: 'local-userpass', disabled: false },
      { name: 'mongodb-cloud', type: 'mongodb-cloud', disabled: false },
    ];
  }

  @Post('providers/:provider/login')
  @HttpCode(200)
  login(@Param('provider') provider: string, @Body() body: unknown): Promise<AdminTokens> {
    if (provider !== 'local-userpass') throw new AdminAuthError(AdminAuthErrorCode.AuthProviderNotFound, `authentication via '${provider}' is unsupported`);
    const credentials = (typeof body === 'object' && body !== null ? body : {}) as { username?: unknown; password?: unknown };
    return this.auth.login(credentials.username, credentials.password);
  }

  @Post('session')
  @HttpCode(201)
  refresh(@Headers('authorization') authorization: string | undefined): Promise<{ access_token: string }> {
    return this.auth.refresh(authorization);
  }

  @Delete('session')
  @HttpCode(204)
  async logout(@Headers('authorization') authorization: string | undefined): Promise<void> {
    await this.auth.logout(authorization);
  }

  @Get('profile')
  @UseGuards(AdminAuthGuard)
  profile(@Req() request: AdminRequest): object {
    const admin = request.admin!;
    return {
      user_id: admin._id,
      domain_id: admin._id,
      type: 'normal',
      identities: [{ id: admin.username, provider_type: 'local-userpass', provider_id: 'local-userpass' }],
      data: { name: admin.username, email: admin.username },
      roles: admin.groupIds.map((groupId) => ({ role_name: 'GROUP_OWNER', group_id: groupId })),
    };
  }
}
