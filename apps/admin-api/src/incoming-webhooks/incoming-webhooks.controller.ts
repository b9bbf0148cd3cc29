import { Controller, UseGuards } from '@nestjs/common';
import { AdminAuthGuard } from '../auth/admin-auth.guard';

/** Incoming webhooks of services, schemas and service commands. */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class IncomingWebhooksController {}
