import { Controller, UseGuards } from '@nestjs/common';
import { AdminAuthGuard } from '../auth/admin-auth.guard';

/** The admin API's GraphQL configuration, custom resolvers, validation settings and GraphQL runs. */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class GraphqlConfigController {}
