import { Module } from '@nestjs/common';
import { ClientApiModule } from '../client-api/client-api.module';
import { DataApiCallers } from './data-api-caller';
import { DataApiService } from './data-api.service';
import { EndpointRoutes } from './endpoint-routes';

/**
 * The `/app/<client app id>/endpoint/` tree: its route table (EndpointRoutes, exported so HTTPS endpoints
 * add their routes beside the Data API's) and the Data API. Needs the platform and DataAccessModule.
 */
@Module({
  imports: [ClientApiModule],
  providers: [EndpointRoutes, DataApiCallers, DataApiService],
  exports: [EndpointRoutes],
})
export class DataApiModule {}
