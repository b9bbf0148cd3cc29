/**
 * Application authentication of HTTPS endpoints and incoming webhooks: the user a request acts as, from the
 * credentials in its headers (EndpointCredentials, shared with the Data API: checked as a login checks them,
 * with no session). A request without credentials is refused; `customData` reads `context.user.custom_data`.
 */
import { Injectable } from '@nestjs/common';
import { type CallerUser, callerUserOf } from '@tessera/contracts';
import { DataSources, readCustomUserData } from '@tessera/platform';
import type { ClientApp } from '../client-api/client-apps.service';
import { type CredentialOptions, EndpointCredentials, type RequestHeaders } from '../data-api/endpoint-credentials';
import { EndpointError, EndpointErrorCode } from './endpoints.error';

export interface HttpCallerOptions extends CredentialOptions {
  /** fetch_custom_user_data: `context.user.custom_data` is read for the call. */
  customData: boolean;
}

@Injectable()
export class HttpCallerAuth {
  constructor(
    private readonly credentials: EndpointCredentials,
    private readonly dataSources: DataSources,
  ) {}

  /** The user the request authenticates as; a request without credentials or with bad ones is refused. */
  async callerOf(app: ClientApp, headers: RequestHeaders, options: HttpCallerOptions): Promise<CallerUser> {
    const user = await this.credentials.userOf(app, headers, options);
    if (!user) throw new EndpointError(EndpointErrorCode.InvalidSession, 'no authentication methods were specified');
    return callerUserOf(user, options.customData ? await readCustomUserData(app.config, this.dataSources, user._id) : undefined);
  }
}
