import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Req, UseGuards } from '@nestjs/common';
import { type IpAccessEntry, ipAccessCheck, isIpOrCidr } from '@tessera/app-config';
import { newObjectIdHex } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { isObject } from './environment-values';

const APP = 'groups/:groupId/apps/:appId/security/access_list';

/** What the admin API shows of an entry: realm-cli's fields, and whether the caller's address is in it. */
type AccessEntryView = IpAccessEntry & { includes_current: boolean };

/**
 * The app's IP access list (realm-cli's `accessList` commands): the addresses and CIDR blocks client requests
 * may come from (the client API, GraphQL, sync, the Data API and HTTPS endpoints; the gateway enforces it). An
 * app without entries serves every address. The list lives in config.json's security settings, so every
 * gateway gets it with the deployment; a push that does not name it keeps it (AppStateService).
 */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class AccessListController {
  constructor(private readonly state: AppStateService) {}

  @Get(APP)
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<{ allowed_ips: AccessEntryView[]; current_ip: string }> {
    requireGroup(request, groupId);
    const app = await this.state.liveApp(await this.state.app(groupId, appId));
    const current = callerAddress(request);
    return { allowed_ips: (app.settings.security?.ip_access_list ?? []).map((entry) => view(entry, current)), current_ip: current };
  }

  @Post(APP)
  @HttpCode(201)
  async create(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<AccessEntryView> {
    requireGroup(request, groupId);
    const fields = isObject(body) ? body : {};
    const address = fields['use_current'] === true && (fields['address'] === undefined || fields['address'] === '') ? callerAddress(request) : parseAddress(fields['address']);
    const entry: IpAccessEntry = { _id: newObjectIdHex(), address, ...optionalComment(fields['comment']) };
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const list = app.settings.security?.ip_access_list ?? [];
      if (list.some((existing) => existing.address === address)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${address} is already on the access list`);
      app.settings.security = { ...app.settings.security, ip_access_list: [...list, entry] };
    });
    return view(entry, callerAddress(request));
  }

  /** realm-cli's `accessList update` (PATCH in the published spec, answered with the entry). */
  @Patch(`${APP}/:ipId`)
  @HttpCode(200)
  async patch(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('ipId') ipId: string, @Body() body: unknown): Promise<AccessEntryView> {
    return view(await this.update(request, groupId, appId, ipId, body), callerAddress(request));
  }

  /** The same change as PUT, which realm-cli 2.x sent (answered with no content). */
  @Put(`${APP}/:ipId`)
  @HttpCode(204)
  async put(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('ipId') ipId: string, @Body() body: unknown): Promise<void> {
    await this.update(request, groupId, appId, ipId, body);
  }

  @Delete(`${APP}/:ipId`)
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('ipId') ipId: string): Promise<void> {
    requireGroup(request, groupId);
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const list = app.settings.security?.ip_access_list ?? [];
      if (!list.some((entry) => entry._id === ipId)) throw notFound(ipId);
      app.settings.security = { ...app.settings.security, ip_access_list: list.filter((entry) => entry._id !== ipId) };
    });
  }

  private async update(request: AdminRequest, groupId: string, appId: string, ipId: string, body: unknown): Promise<IpAccessEntry> {
    requireGroup(request, groupId);
    const fields = isObject(body) ? body : {};
    const address = fields['address'] === undefined || fields['address'] === '' ? undefined : parseAddress(fields['address']);
    if (address === undefined && fields['comment'] === undefined) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'set address or comment to change the entry');
    let updated: IpAccessEntry | undefined;
    await this.state.edit(await this.state.app(groupId, appId), request.admin?._id, (app) => {
      const list = app.settings.security?.ip_access_list ?? [];
      const existing = list.find((entry) => entry._id === ipId);
      if (!existing) throw notFound(ipId);
      if (address !== undefined && list.some((entry) => entry !== existing && entry.address === address)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${address} is already on the access list`);
      const comment = fields['comment'] === undefined ? existing.comment : optionalComment(fields['comment']).comment;
      updated = { _id: existing._id, address: address ?? existing.address, ...(comment ? { comment } : {}) };
      app.settings.security = { ...app.settings.security, ip_access_list: list.map((entry) => (entry === existing ? (updated as IpAccessEntry) : entry)) };
    });
    return updated as IpAccessEntry;
  }
}

function parseAddress(value: unknown): string {
  if (typeof value !== 'string' || !isIpOrCidr(value.trim())) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'address must be an IP address or a CIDR block (such as 203.0.113.7 or 10.0.0.0/8)');
  return value.trim();
}

function optionalComment(value: unknown): { comment?: string } {
  if (value === undefined || value === null || value === '') return {};
  if (typeof value !== 'string' || value.length > 256) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'comment must be a string of at most 256 characters');
  return { comment: value };
}

function notFound(ipId: string): AdminApiError {
  return new AdminApiError(AdminApiErrorCode.AccessListEntryNotFound, `access list entry not found: '${ipId}'`);
}

/** The address the admin's request came from, as the HTTP edge read it (behind trusted proxies, the client's). */
function callerAddress(request: AdminRequest): string {
  const ip = (request as unknown as { ip?: unknown }).ip;
  return typeof ip === 'string' ? ip.replace(/^::ffff:/, '') : '';
}

function view(entry: IpAccessEntry, current: string): AccessEntryView {
  return { ...entry, includes_current: current !== '' && ipAccessCheck([entry.address])(current) };
}
