import { Injectable } from '@nestjs/common';
import type { DataApiConfig } from '@tessera/app-config';
import { type Caller, type CallerUser, type RequestMetadata, ruleUserOf } from '@tessera/contracts';
import { edgeMessageHeaders } from '@tessera/http-edge';
import { decodeEjson, FunctionCalls } from '@tessera/messaging';
import type { AppUser } from '@tessera/platform';
import { evaluateExpression } from '@tessera/rules';
import { AuthService } from '../client-api/auth/auth.service';
import { invalidSession } from '../client-api/client-api.error';
import type { ClientApp } from '../client-api/client-apps.service';
import { canonicalHeaders } from '../endpoints/http-exchange';
import { DataApiError, DataApiErrorCode } from './data-api.error';
import { EndpointCredentials } from './endpoint-credentials';
import { rawQueryOf } from './endpoint-validation';
import type { EndpointRequest } from './endpoint-routes';

/** Who a Data API call runs as: the system (no rules), or a user under the app's rules. */
export type DataApiCaller = { kind: 'system'; userId?: string } | { kind: 'user'; userId: string; user: CallerUser };

/** The function name the run-as script runs under. */
const RUN_AS_SCRIPT = 'data_api';

/**
 * The caller of a Data API request. Credentials are checked by EndpointCredentials (as a login checks them,
 * without a session); the configuration then decides who the call runs as: the system (`run_as_system`), a
 * fixed user (`run_as_user_id`), the user `run_as_user_id_script_source` names (run in the sandbox with the
 * request as `context.request`, and the authenticated user, if any, as `context.user`), or the authenticated
 * user (application authentication, where credentials are required). Credentials sent to a run-as
 * configuration are still checked: a wrong one is refused.
 */
@Injectable()
export class DataApiCallers {
  constructor(
    private readonly auth: AuthService,
    private readonly credentials: EndpointCredentials,
    private readonly functions: FunctionCalls,
  ) {}

  /** `onScriptLogs` receives the run-as script's log lines (before its user is looked up), for the request's log entry. */
  async callerOf(app: ClientApp, config: DataApiConfig, request: EndpointRequest, onScriptLogs?: (logs: string[]) => void): Promise<DataApiCaller> {
    const headers = request.raw.headers;
    const authenticated = await this.credentials.userOf(app, headers, { createUser: config.create_user_on_auth, clientAddress: request.raw.ip });
    if (config.run_as_system) return { kind: 'system', ...(authenticated ? { userId: authenticated._id } : {}) };
    if (config.run_as_user_id !== '') return this.asUser(app, await this.enabledUser(app, config.run_as_user_id));
    if (config.run_as_user_id_script_source !== '') {
      const caller: Caller = authenticated ? { type: 'user', user: await this.auth.callerOf({ app, user: authenticated }) } : { type: 'system' };
      const scripted = await this.scriptedUserId(app, request, caller);
      onScriptLogs?.(scripted.logs);
      return this.asUser(app, await this.enabledUser(app, scripted.userId));
    }
    // As the Data API's OpenAPI description answers a request that carries no credentials at all.
    if (!authenticated) throw new DataApiError(DataApiErrorCode.InvalidParameter, 'no authentication methods were specified');
    return this.asUser(app, authenticated);
  }

  /**
   * `can_evaluate`: the request is served only when the expression holds for `%%request` and `%%user` (the
   * user the call runs as); an empty expression always holds. Refused with 403 NotCallable, as a function
   * whose can_evaluate fails is.
   */
  async assertMayRun(config: DataApiConfig, caller: DataApiCaller, request: EndpointRequest): Promise<void> {
    if (Object.keys(config.can_evaluate).length === 0) return;
    const { origin: _origin, remoteIpAddress, ...info } = requestMetadataOf(request);
    const allowed = await evaluateExpression(config.can_evaluate, {
      ...(caller.kind === 'user' ? { user: ruleUserOf(caller.user) } : {}),
      request: { ...info, ...(remoteIpAddress !== undefined ? { remoteIPAddress: remoteIpAddress } : {}) },
    });
    if (allowed !== true) throw new DataApiError(DataApiErrorCode.NotCallable, 'rule not matched for the Data API: can_evaluate denied the request');
  }

  /**
   * Runs the configuration's script in the sandbox for this request; the id of the user it returned and the
   * script's log lines (the runtime logs no entry of its own: they go in the request's ENDPOINT entry).
   */
  private async scriptedUserId(app: ClientApp, request: EndpointRequest, caller: Caller): Promise<{ userId: string; logs: string[] }> {
    const outcome = await this.functions.run(
      { appId: app.appId, functionName: RUN_AS_SCRIPT, args: [], caller, metadata: requestMetadataOf(request), http: { kind: 'data-api', route: `/${request.path}` } },
      { headers: edgeMessageHeaders(request.raw) },
    );
    const userId = decodeEjson(outcome.result, { relaxed: true });
    if (typeof userId !== 'string' || userId === '') throw invalidSession('error finding user for endpoint');
    return { userId, logs: outcome.logs };
  }

  private async enabledUser(app: ClientApp, userId: string): Promise<AppUser> {
    const user = await app.users.findUser(userId);
    if (!user || user.disabled) throw invalidSession('error finding user for endpoint');
    return user;
  }

  private async asUser(app: ClientApp, user: AppUser): Promise<DataApiCaller> {
    return { kind: 'user', userId: user._id, user: await this.auth.callerOf({ app, user }) };
  }
}

/** The request as `context.request` and `%%request` show it. */
function requestMetadataOf(request: EndpointRequest): RequestMetadata {
  const raw = request.raw;
  const url = raw.raw.url ?? raw.url;
  const userAgent = raw.headers['user-agent'];
  const referrer = raw.headers['referer'];
  return {
    origin: 'endpoint',
    remoteIpAddress: raw.ip,
    httpMethod: raw.method,
    rawQueryString: rawQueryOf(url),
    webhookUrl: url.split('?')[0] ?? url,
    requestHeaders: canonicalHeaders(raw.raw.rawHeaders),
    ...(typeof userAgent === 'string' ? { httpUserAgent: userAgent } : {}),
    ...(typeof referrer === 'string' ? { httpReferrer: referrer } : {}),
  };
}
