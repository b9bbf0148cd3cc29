import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { AdminUser } from '@tessera/platform';
import type { FastifyRequest } from 'fastify';
import { AdminAuthService } from './admin-auth.service';

export type AdminRequest = FastifyRequest & { admin?: AdminUser };

/** Requires a valid admin access token and attaches the admin to the request. */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(private readonly auth: AdminAuthService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    request.admin = await this.auth.authenticate(request.headers.authorization);
    return true;
  }
}
