import { Body, Controller, Delete, Get, Headers, HttpCode, Ip, Param, Post, Put, Query } from '@nestjs/common';
import { fromEjson, objectBody } from '../ejson-body';
import { ApiKeysService, type ApiKeyView } from './api-keys.service';
import { AuthService, type LoginResponse, type ProfileResponse } from './auth.service';
import { UserpassService } from './userpass.service';

/** Logins, sessions, profile and user deletion of the client API v2.0 (reference §1.1, §2.1). */
@Controller('api/client/v2.0')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('app/:appId/auth/providers/:provider/login')
  @HttpCode(200)
  login(@Param('appId') appId: string, @Param('provider') provider: string, @Query('link') link: string | undefined, @Headers('authorization') authorization: string | undefined, @Ip() clientAddress: string, @Body() body: unknown): Promise<LoginResponse> {
    return this.auth.login(appId, provider, fromEjson(body), { link: link === 'true', authorization, clientAddress });
  }

  @Get('auth/profile')
  async profile(@Headers('authorization') authorization: string | undefined): Promise<ProfileResponse> {
    return this.auth.profile(await this.auth.authenticate(authorization, 'access'));
  }

  @Post('auth/session')
  @HttpCode(201)
  refresh(@Headers('authorization') authorization: string | undefined): Promise<{ access_token: string }> {
    return this.auth.refresh(authorization);
  }

  @Delete('auth/session')
  @HttpCode(204)
  async logout(@Headers('authorization') authorization: string | undefined): Promise<void> {
    await this.auth.logout(authorization);
  }

  @Delete('auth/delete')
  @HttpCode(204)
  async deleteUser(@Headers('authorization') authorization: string | undefined): Promise<void> {
    await this.auth.deleteUser(authorization);
  }
}

/** The email/password provider's account endpoints; each answers with an empty body. */
@Controller('api/client/v2.0/app/:appId/auth/providers/local-userpass')
export class UserpassController {
  constructor(private readonly userpass: UserpassService) {}

  @Post('register')
  @HttpCode(201)
  async register(@Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    await this.userpass.register(appId, objectBody(body));
  }

  @Post('confirm')
  @HttpCode(204)
  async confirm(@Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    await this.userpass.confirm(appId, objectBody(body));
  }

  @Post('confirm/send')
  @HttpCode(204)
  async resendConfirmation(@Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    await this.userpass.resendConfirmation(appId, objectBody(body));
  }

  @Post('confirm/call')
  @HttpCode(204)
  async retryConfirmation(@Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    await this.userpass.retryConfirmationFunction(appId, objectBody(body));
  }

  @Post('reset')
  @HttpCode(204)
  async reset(@Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    await this.userpass.reset(appId, objectBody(body));
  }

  @Post('reset/send')
  @HttpCode(204)
  async sendReset(@Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    await this.userpass.sendReset(appId, objectBody(body));
  }

  @Post('reset/call')
  @HttpCode(204)
  async callReset(@Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    await this.userpass.callReset(appId, objectBody(body));
  }
}

/** User API keys; every call carries the refresh token (reference §1.1). */
@Controller('api/client/v2.0/auth/api_keys')
export class ApiKeysController {
  constructor(
    private readonly auth: AuthService,
    private readonly keys: ApiKeysService,
  ) {}

  @Post()
  @HttpCode(201)
  async create(@Headers('authorization') authorization: string | undefined, @Body() body: unknown): Promise<ApiKeyView> {
    const session = await this.auth.authenticate(authorization, 'refresh');
    return this.keys.create(session, objectBody(body)['name']);
  }

  @Get()
  async list(@Headers('authorization') authorization: string | undefined): Promise<ApiKeyView[]> {
    return this.keys.list(await this.auth.authenticate(authorization, 'refresh'));
  }

  @Get(':id')
  async get(@Headers('authorization') authorization: string | undefined, @Param('id') id: string): Promise<ApiKeyView> {
    return this.keys.get(await this.auth.authenticate(authorization, 'refresh'), id);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Headers('authorization') authorization: string | undefined, @Param('id') id: string): Promise<void> {
    await this.keys.remove(await this.auth.authenticate(authorization, 'refresh'), id);
  }

  @Put(':id/enable')
  @HttpCode(204)
  async enable(@Headers('authorization') authorization: string | undefined, @Param('id') id: string): Promise<void> {
    await this.keys.setDisabled(await this.auth.authenticate(authorization, 'refresh'), id, false);
  }

  @Put(':id/disable')
  @HttpCode(204)
  async disable(@Headers('authorization') authorization: string | undefined, @Param('id') id: string): Promise<void> {
    await this.keys.setDisabled(await this.auth.authenticate(authorization, 'refresh'), id, true);
  }
}
