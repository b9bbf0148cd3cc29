import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseGuards } from '@nestjs/common';
import type { AuthProvider } from '@tessera/app-config';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

type ProviderBody = Partial<AuthProvider> | undefined;

/** `.../auth_providers`: each change is a validated deployment of the whole app. */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/auth_providers')
@UseGuards(AdminAuthGuard)
export class AuthProvidersController {
  constructor(private readonly state: AppStateService) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const app = await this.state.liveApp(await this.state.app(groupId, appId));
    return app.authProviders.map((provider) => ({ _id: provider.id, name: provider.name, type: provider.type, disabled: provider.disabled === true }));
  }

  @Get(':providerId')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('providerId') providerId: string): Promise<object> {
    requireGroup(request, groupId);
    return toWire(findProvider((await this.state.liveApp(await this.state.app(groupId, appId))).authProviders, providerId));
  }

  @Post()
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: ProviderBody): Promise<object> {
    requireGroup(request, groupId);
    const type = typeof body?.type === 'string' ? body.type : '';
    const name = typeof body?.name === 'string' && body.name ? body.name : type;
    const prepared = await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      if (app.authProviders.some((provider) => provider.name === name)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `an authentication provider named "${name}" already exists`);
      const { id: _id, ...rest } = body ?? {};
      app.authProviders.push({ ...rest, name, type, disabled: body?.disabled === true });
    });
    return toWire(findProvider(prepared.app.authProviders, name));
  }

  @Put(':providerId')
  @HttpCode(204)
  async update(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('providerId') providerId: string, @Body() body: ProviderBody): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const provider = findProvider(app.authProviders, providerId);
      const { id: _id, name: _name, type: _type, ...rest } = body ?? {};
      Object.assign(provider, rest);
    });
  }

  @Put(':providerId/enable')
  @HttpCode(204)
  async enable(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('providerId') providerId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      findProvider(app.authProviders, providerId).disabled = false;
    });
  }

  @Put(':providerId/disable')
  @HttpCode(204)
  async disable(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('providerId') providerId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      findProvider(app.authProviders, providerId).disabled = true;
    });
  }

  @Delete(':providerId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('providerId') providerId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const provider = findProvider(app.authProviders, providerId);
      app.authProviders = app.authProviders.filter((candidate) => candidate !== provider);
    });
  }
}

function findProvider(providers: AuthProvider[], id: string): AuthProvider {
  const provider = providers.find((candidate) => candidate.id === id) ?? providers.find((candidate) => candidate.name === id);
  if (!provider) throw new AdminApiError(AdminApiErrorCode.AuthProviderNotFound, `authentication provider not found: '${id}'`);
  return provider;
}

function toWire(provider: AuthProvider): object {
  const { id, ...rest } = provider;
  return { _id: id, ...rest, disabled: provider.disabled === true };
}
