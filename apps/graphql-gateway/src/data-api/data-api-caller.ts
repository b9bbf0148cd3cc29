import { Injectable } from '@nestjs/common';
import type { CallerUser } from '@tessera/contracts';
import type { AppUser } from '@tessera/platform';
import { AuthService } from '../client-api/auth/auth.service';
import { invalidSession } from '../client-api/client-api.error';
import type { ClientApp } from '../client-api/client-apps.service';
import type { DataApiConfig } from '@tessera/app-config';
import { DataApiError, DataApiErrorCode } from './data-api.error';
import { EndpointCredentials, type RequestHeaders } from './endpoint-credentials';

/** Who a Data API call runs as: the system (no rules), or a user under the app's rules. */
export type DataApiCaller = { kind: 'system'; userId?: string } | { kind: 'user'; userId: string; user: CallerUser };

/**
 * The caller of a Data API request. Credentials are checked by EndpointCredentials (as a login checks them,
 * without a session); the configuration then decides who the call runs as: the system (`run_as_system`), a
 * fixed user (`run_as_user_id`), or the authenticated user (application authentication, where credentials
 * are required). Credentials sent to a run-as endpoint are still checked: a wrong one is refused.
 */
@Injectable()
export class DataApiCallers {
  constructor(
    private readonly auth: AuthService,
    private readonly credentials: EndpointCredentials,
  ) {}

  async callerOf(app: ClientApp, config: DataApiConfig, headers: RequestHeaders, clientAddress: string): Promise<DataApiCaller> {
    const authenticated = await this.credentials.userOf(app, headers, { createUser: config.create_user_on_auth, clientAddress });
    if (config.run_as_system) return { kind: 'system', ...(authenticated ? { userId: authenticated._id } : {}) };
    if (config.run_as_user_id !== '') {
      const user = await app.users.findUser(config.run_as_user_id);
      if (!user || user.disabled) throw invalidSession('error finding user for endpoint');
      return this.asUser(app, user);
    }
    if (config.run_as_user_id_script_source !== '') throw new DataApiError(DataApiErrorCode.NotImplemented, 'running Data API requests as the user a script names is not supported');
    if (!authenticated) throw new DataApiError(DataApiErrorCode.MissingAuthReq, 'must specify some form of authentication (either email+password, api-key, or jwt) in the request header or body');
    return this.asUser(app, authenticated);
  }

  private async asUser(app: ClientApp, user: AppUser): Promise<DataApiCaller> {
    return { kind: 'user', userId: user._id, user: await this.auth.callerOf({ app, user }) };
  }
}
