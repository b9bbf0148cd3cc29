import { Controller, UseGuards } from '@nestjs/common';
import { AdminAuthGuard } from '../auth/admin-auth.guard';

/** The app's environment, environment values, security settings and deployment configuration. */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class EnvironmentController {}
