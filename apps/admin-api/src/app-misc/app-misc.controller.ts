import { Controller, UseGuards } from '@nestjs/common';
import { AdminAuthGuard } from '../auth/admin-auth.guard';

/** Regions, event subscriptions, a user's devices and email, test runs of function source, flexible sync information. */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class AppMiscController {}
