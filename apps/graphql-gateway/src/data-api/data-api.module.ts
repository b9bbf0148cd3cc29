import { Module } from '@nestjs/common';
import { FunctionCalls } from '@tessera/messaging';
import { ClientApiModule } from '../client-api/client-api.module';
import { DataApiCallers } from './data-api-caller';
import { DataApiService } from './data-api.service';
import { EndpointCredentials } from './endpoint-credentials';
import { EndpointRoutes } from './endpoint-routes';

/**
 * The `/app/<client app id>/endpoint/` tree: its route table (EndpointRoutes, exported so HTTPS endpoints
 * add their routes after the Data API's), the credential check every HTTP surface shares
 * (EndpointCredentials) and the Data API. Needs the platform and DataAccessModule.
 */
@Module({
  imports: [ClientApiModule],
  providers: [FunctionCalls, EndpointRoutes, EndpointCredentials, DataApiCallers, DataApiService],
  exports: [EndpointRoutes, EndpointCredentials],
})
export class DataApiModule {}
