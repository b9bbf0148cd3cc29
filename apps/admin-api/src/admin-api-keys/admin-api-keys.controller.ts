import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import { AdminApiKeyStore, type AdminApiKey } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';

/** `/api/admin/v3.0/admin_api_keys`: the calling admin's API key pairs, for non-interactive logins (CI). */
@Controller('api/admin/v3.0/admin_api_keys')
@UseGuards(AdminAuthGuard)
export class AdminApiKeysController {
  constructor(private readonly apiKeys: AdminApiKeyStore) {}

  @Get()
  list(@Req() request: AdminRequest): Promise<AdminApiKey[]> {
    return this.apiKeys.list(request.admin!._id);
  }

  /** 201 with the private key, which is never shown again. */
  @Post()
  @HttpCode(201)
  create(@Req() request: AdminRequest, @Body() body: { name?: unknown } | undefined): Promise<AdminApiKey & { private_key: string }> {
    return this.apiKeys.create(request.admin!._id, body?.name);
  }

  @Delete(':keyId')
  @HttpCode(204)
  async remove(@Req() request: AdminRequest, @Param('keyId') keyId: string): Promise<void> {
    await this.apiKeys.remove(request.admin!._id, keyId);
  }
}
