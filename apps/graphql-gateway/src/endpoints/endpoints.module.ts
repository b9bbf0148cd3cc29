import { Module } from '@nestjs/common';
import { FunctionCalls } from '@tessera/messaging';
import { ClientApiModule } from '../client-api/client-api.module';
import { DataApiModule } from '../data-api/data-api.module';
import { HttpCallerAuth } from './http-caller';
import { HttpFunctionCalls } from './http-function-call';
import { HttpFunctionRoutes } from './http-function-routes';
import { HttpsEndpointsService } from './https-endpoints.service';
import { IncomingWebhooksService } from './incoming-webhooks.service';

/**
 * Custom HTTPS endpoints (`/app/<client app id>/endpoint/<route>`) and incoming webhooks
 * (`/api/client/v2.0/app/<client app id>/service/<service>/incoming_webhook/<name>`): functions serving
 * HTTP requests, run through the function runtime with App Services' request and response objects. It
 * imports DataApiModule for the endpoint route table, whose `data/...` entry is added before its own.
 */
@Module({
  imports: [ClientApiModule, DataApiModule],
  providers: [FunctionCalls, HttpCallerAuth, HttpFunctionCalls, HttpsEndpointsService, IncomingWebhooksService, HttpFunctionRoutes],
  exports: [HttpFunctionRoutes],
})
export class EndpointsModule {}
