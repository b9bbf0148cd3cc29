import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Patch, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { SETTINGS, type Settings } from '@tessera/settings';
import { z } from 'zod';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AppStateService } from '../deploy/app-state.service';
import { checkAttributes, checkResourcePath, HostingAssetsService, type HostedAssetBody } from './hosting-assets.service';
import { HostingError, HostingErrorCode } from './hosting.exception';
import { multipartBoundary, parseMultipart } from './multipart';

const attributesBody = z.object({ attributes: z.array(z.unknown()) });
const moveCopyBody = z.union([z.object({ move_from: z.string(), move_to: z.string() }), z.object({ copy_from: z.string(), copy_to: z.string() })]);
const cacheBody = z.object({ invalidate: z.boolean(), path: z.string().optional() });
const configBody = z.object({ enabled: z.boolean() });
const uploadMeta = z.object({ path: z.string().optional(), hash: z.string().optional(), size: z.number().optional(), attrs: z.array(z.unknown()).nullish() });

function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new HostingError(HostingErrorCode.InvalidParameter, `invalid ${what} body: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ')}`);
  return parsed.data;
}

/**
 * `/groups/{groupId}/apps/{appId}/hosting/...`: App Services' hosting endpoints as realm-cli calls them
 * (list, upload as multipart `meta` + `file`, attributes, delete, cache invalidation) and as the admin API
 * documents them (config, move and copy). Only an administrator of the app's group reaches an app's files.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/hosting')
@UseGuards(AdminAuthGuard)
export class HostingAssetsController {
  constructor(
    private readonly hosting: HostingAssetsService,
    private readonly state: AppStateService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Get('config')
  async config(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string): Promise<object> {
    return this.hosting.config(await this.app(request, groupId, appId));
  }

  @Patch('config')
  @HttpCode(204)
  async setConfig(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    const record = await this.app(request, groupId, appId);
    await this.hosting.setEnabled(record, request.admin?._id, parse(configBody, body, 'hosting config').enabled);
  }

  @Get('assets')
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('prefix') prefix: string | undefined, @Query('recursive') recursive: string | undefined): Promise<HostedAssetBody[]> {
    const record = await this.app(request, groupId, appId);
    return this.hosting.list(record, this.baseUrl(request), prefix ? checkPrefix(prefix) : '/', recursive === 'true');
  }

  @Post('assets')
  @HttpCode(204)
  async moveOrCopy(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    const record = await this.app(request, groupId, appId);
    const parsed = parse(moveCopyBody, body, 'move or copy');
    if ('move_from' in parsed) await this.hosting.moveOrCopy(record, checkResourcePath(parsed.move_from, 'move_from'), checkResourcePath(parsed.move_to, 'move_to'), true);
    else await this.hosting.moveOrCopy(record, checkResourcePath(parsed.copy_from, 'copy_from'), checkResourcePath(parsed.copy_to, 'copy_to'), false);
  }

  @Get('assets/asset')
  async get(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('path') path: unknown): Promise<HostedAssetBody> {
    const record = await this.app(request, groupId, appId);
    return this.hosting.get(record, this.baseUrl(request), checkResourcePath(path));
  }

  /** realm-cli's upload: a multipart body with the asset metadata (`meta`, JSON) and the file (`file`). */
  @Put('assets/asset')
  @HttpCode(204)
  async upload(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('path') queryPath: unknown, @Headers('content-type') contentType: string | undefined, @Body() body: unknown): Promise<void> {
    const record = await this.app(request, groupId, appId);
    const boundary = multipartBoundary(contentType);
    if (!boundary || !Buffer.isBuffer(body)) throw new HostingError(HostingErrorCode.InvalidParameter, 'upload a hosted file as multipart/mixed with a "meta" part (JSON) and a "file" part');
    const parts = parseMultipart(body, boundary);
    const metaPart = parts?.find((part) => part.name === 'meta');
    const filePart = parts?.find((part) => part.name === 'file');
    if (!metaPart || !filePart) throw new HostingError(HostingErrorCode.InvalidParameter, 'the upload needs a "meta" part and a "file" part');
    let metaJson: unknown;
    try {
      metaJson = JSON.parse(metaPart.body.toString('utf8'));
    } catch {
      throw new HostingError(HostingErrorCode.InvalidParameter, 'the "meta" part must be JSON');
    }
    const meta = parse(uploadMeta, metaJson, 'asset metadata');
    const path = checkResourcePath(meta.path ?? queryPath);
    if (queryPath !== undefined && meta.path !== undefined && queryPath !== meta.path) throw new HostingError(HostingErrorCode.InvalidParameter, 'the path of the query and of the metadata differ');
    await this.hosting.upload(record, path, filePart.body, checkAttributes(path, meta.attrs), meta.hash);
  }

  @Patch('assets/asset')
  @HttpCode(204)
  async setAttributes(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('path') path: unknown, @Body() body: unknown): Promise<void> {
    const record = await this.app(request, groupId, appId);
    const resourcePath = checkResourcePath(path);
    await this.hosting.setAttributes(record, resourcePath, checkAttributes(resourcePath, parse(attributesBody, body, 'attributes').attributes));
  }

  @Delete('assets/asset')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query('path') path: unknown): Promise<void> {
    await this.hosting.remove(await this.app(request, groupId, appId), checkResourcePath(path));
  }

  /**
   * Accepted as App Services accepted it. Gateways read hosted files from the platform database on every
   * request and keep no copy, so a change is served at once and there is no cache to invalidate.
   */
  @Put('cache')
  @HttpCode(204)
  async invalidate(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Body() body: unknown): Promise<void> {
    await this.app(request, groupId, appId);
    const parsed = parse(cacheBody, body, 'cache invalidation');
    if (parsed.path !== undefined && parsed.path !== '/*') checkResourcePath(parsed.path.replace(/\/\*$/, '/x'));
  }

  private async app(request: AdminRequest, groupId: string, appId: string) {
    requireGroup(request, groupId);
    return this.state.app(groupId, appId);
  }

  private baseUrl(request: AdminRequest): string {
    return (this.settings.publicUrl ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '');
  }
}

function checkPrefix(prefix: string): string {
  return prefix === '/' ? prefix : checkResourcePath(prefix.replace(/\/$/, ''), 'prefix');
}
