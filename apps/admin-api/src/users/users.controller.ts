import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { type PendingUserView, UserRegistrationsService } from './user-registrations.service';
import { type CustomDataView, type SessionView, UsersService, type UserView } from './users.service';

/** `.../users`: the app's users, with realm-cli's statuses (create 201; delete, enable, disable, logout 204). */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId')
@UseGuards(AdminAuthGuard)
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly state: AppStateService,
    private readonly registrations: UserRegistrationsService,
  ) {}

  @Get('users')
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('status') status: string | undefined, @Query('provider_types') providerTypes: string | undefined): Promise<UserView[]> {
    requireGroup(request, groupId);
    return this.users.list(await this.state.app(groupId, appId), { ...(status ? { status } : {}), ...(providerTypes ? { providerTypes: providerTypes.split(',') } : {}) });
  }

  @Post('users')
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: { email?: unknown; password?: unknown } | undefined): Promise<UserView> {
    requireGroup(request, groupId);
    return this.users.createEmailUser(await this.state.app(groupId, appId), body?.email, body?.password);
  }

  /** Tessera: users exported from App Services, created with the same ids and identities (`tessera users import`). */
  @Post('users/import')
  @HttpCode(200)
  async importUsers(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<Awaited<ReturnType<UsersService['importUsers']>>> {
    requireGroup(request, groupId);
    return this.users.importUsers(await this.state.app(groupId, appId), body);
  }

  @Get('users/:userId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string): Promise<UserView> {
    requireGroup(request, groupId);
    return this.users.get(await this.state.app(groupId, appId), userId);
  }

  @Delete('users/:userId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.users.remove(await this.state.app(groupId, appId), userId);
  }

  @Put('users/:userId/enable')
  @HttpCode(204)
  async enable(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.users.setDisabled(await this.state.app(groupId, appId), userId, false);
  }

  @Put('users/:userId/disable')
  @HttpCode(204)
  async disable(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.users.setDisabled(await this.state.app(groupId, appId), userId, true);
  }

  @Patch('users/:userId/reset_email')
  @HttpCode(204)
  async resetEmail(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string, @Body() body: { email?: unknown } | undefined): Promise<void> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'the body must be an object with email');
    await this.users.changeEmail(record, userId, body.email);
  }

  @Put('users/:userId/logout')
  @HttpCode(204)
  async logout(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.users.logout(await this.state.app(groupId, appId), userId);
  }

  /** Tessera: the user's refresh-token sessions (ids, device, created, last used, end); never a token. */
  @Get('users/:userId/sessions')
  async sessions(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string): Promise<SessionView[]> {
    requireGroup(request, groupId);
    return this.users.sessions(await this.state.app(groupId, appId), userId);
  }

  /** Tessera: ends one session (`PUT .../logout` ends them all). */
  @Delete('users/:userId/sessions/:sessionId')
  @HttpCode(204)
  async revokeSession(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string, @Param('sessionId') sessionId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.users.revokeSession(await this.state.app(groupId, appId), userId, sessionId);
  }

  /** Tessera: the user's custom data document, as the client API reads it into tokens. */
  @Get('users/:userId/custom_data')
  async customData(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string): Promise<CustomDataView> {
    requireGroup(request, groupId);
    return this.users.customData(await this.state.app(groupId, appId), userId);
  }

  @Get('user_registrations/pending_users')
  async pendingUsers(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('after') after: string | undefined): Promise<PendingUserView[]> {
    requireGroup(request, groupId);
    return this.registrations.pending(await this.state.app(groupId, appId), after);
  }

  @Delete('user_registrations/by_email/:email')
  @HttpCode(204)
  async deletePending(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('email') email: string): Promise<void> {
    requireGroup(request, groupId);
    await this.registrations.remove(await this.state.app(groupId, appId), email);
  }

  @Post('user_registrations/by_email/:email/confirm')
  @HttpCode(204)
  async confirmPending(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('email') email: string): Promise<void> {
    requireGroup(request, groupId);
    await this.registrations.confirm(await this.state.app(groupId, appId), email);
  }

  @Post('user_registrations/by_email/:email/run_confirm')
  @HttpCode(202)
  async rerunConfirmation(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('email') email: string): Promise<void> {
    requireGroup(request, groupId);
    await this.registrations.runConfirmation(await this.state.app(groupId, appId), email);
  }

  @Post('user_registrations/by_email/:email/send_confirm')
  @HttpCode(200)
  async sendConfirmation(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('email') email: string): Promise<void> {
    requireGroup(request, groupId);
    await this.registrations.sendConfirmation(await this.state.app(groupId, appId), email);
  }
}
