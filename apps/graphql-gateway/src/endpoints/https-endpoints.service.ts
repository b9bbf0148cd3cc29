/**
 * Custom HTTPS endpoints: `/app/<client app id>/endpoint/<route>` finds the app's endpoint for the route and
 * method (or `*`), checks the request (secret or payload signature), decides who the function runs as
 * (its run-as setting, or the user the request authenticates as), and runs it with App Services' `request`
 * and `response` objects.
 */
import { Injectable } from '@nestjs/common';
import { type FunctionConfig, type HttpsEndpointConfig, httpsEndpoints } from '@tessera/app-config';
import type { Caller } from '@tessera/contracts';
import { SecretStore } from '@tessera/platform';
import { type ClientApp, ClientApps } from '../client-api/client-apps.service';
import { responseFormat } from '../data-api/data-api-format';
import { endpointNotFoundMessage } from '../data-api/endpoint-routes';
import { ENDPOINT_SIGNATURE, endpointSecret, requestProofRefusal } from '../data-api/endpoint-validation';
import { EndpointError, EndpointErrorCode } from './endpoints.error';
import { HttpCallerAuth } from './http-caller';
import type { HttpExchange, HttpReply } from './http-exchange';
import { type CallContext, type HttpFunctionCall, HttpFunctionCalls } from './http-function-call';

/** Of a route's enabled endpoints, the one serving `method`: an exact method first, then `*`. */
export function matchEndpoint(onRoute: readonly HttpsEndpointConfig[], method: string): { endpoint?: HttpsEndpointConfig; allowed: string[] } {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const endpoint = onRoute.find((candidate) => candidate.http_method === wanted) ?? onRoute.find((candidate) => candidate.http_method === '*');
  return { ...(endpoint ? { endpoint } : {}), allowed: onRoute.map((candidate) => candidate.http_method) };
}

/** What a request needs of a deployed configuration: its enabled endpoints by route (disabled ones serve nothing), and its functions by name. */
interface EndpointTable {
  onRoute: ReadonlyMap<string, readonly HttpsEndpointConfig[]>;
  functions: ReadonlyMap<string, FunctionConfig>;
}

/** The table of each deployed configuration, made once (a deploy makes a new configuration object). */
const tables = new WeakMap<ClientApp['config'], EndpointTable>();

function tableOf(app: ClientApp): EndpointTable {
  let table = tables.get(app.config);
  if (!table) {
    const onRoute = new Map<string, HttpsEndpointConfig[]>();
    for (const endpoint of httpsEndpoints(app.config)) {
      if (endpoint.disabled === true) continue;
      const list = onRoute.get(endpoint.route);
      if (list) list.push(endpoint);
      else onRoute.set(endpoint.route, [endpoint]);
    }
    const functions = new Map<string, FunctionConfig>();
    // The first function of a name, as a search of the list finds it.
    for (const fn of app.config.functions) if (!functions.has(fn.config.name)) functions.set(fn.config.name, fn.config);
    table = { onRoute, functions };
    tables.set(app.config, table);
  }
  return table;
}

@Injectable()
export class HttpsEndpointsService {
  constructor(
    private readonly apps: ClientApps,
    private readonly secrets: SecretStore,
    private readonly callers: HttpCallerAuth,
    private readonly calls: HttpFunctionCalls,
  ) {}

  async serve(clientAppId: string, route: string, exchange: HttpExchange, context: CallContext): Promise<HttpReply> {
    const app = await this.apps.byClientAppId(clientAppId);
    return this.calls.serve('endpoint', app.appId, route, () => this.prepare(app, route, exchange), exchange, context);
  }

  private async prepare(app: ClientApp, route: string, exchange: HttpExchange): Promise<HttpFunctionCall> {
    const table = tableOf(app);
    const { endpoint, allowed } = matchEndpoint(table.onRoute.get(route) ?? [], exchange.method);
    if (!endpoint) {
      if (allowed.length > 0) throw new EndpointError(EndpointErrorCode.MethodNotAllowed, `endpoint ${route} does not accept ${exchange.method} (it accepts ${allowed.join(', ')})`);
      throw new EndpointError(EndpointErrorCode.NotFound, endpointNotFoundMessage(route));
    }
    const secret = endpoint.secret_name ? await endpointSecret(this.secrets, app, endpoint.secret_name) : undefined;
    const refusal = requestProofRefusal(endpoint.validation_method, secret, exchange, ENDPOINT_SIGNATURE);
    if (refusal !== undefined) throw new EndpointError(EndpointErrorCode.AuthFailed, refusal);
    return {
      appId: app.appId,
      functionName: endpoint.function_name,
      http: { kind: 'endpoint', route },
      caller: await this.callerOf(app, endpoint, table.functions.get(endpoint.function_name), exchange),
      respondResult: endpoint.respond_result === true,
      // An `Accept` of application/json or application/ejson picks the format; else the endpoint's return type.
      returnType: responseFormat(headerValue(exchange.headers['accept']), endpoint.return_type === 'EJSON' ? 'EJSON' : 'JSON'),
      emptyStatus: 204,
    };
  }

  /**
   * System, user-id and script authentication are the function's run-as settings, applied by the runtime
   * (the call goes in as system); application authentication is the user the request's credentials name.
   */
  private async callerOf(app: ClientApp, endpoint: HttpsEndpointConfig, config: FunctionConfig | undefined, exchange: HttpExchange): Promise<Caller> {
    if (!config || config.run_as_system === true || nonEmpty(config.run_as_user_id) || nonEmpty(config.run_as_user_id_script_source)) return { type: 'system' };
    const user = await this.callers.callerOf(app, exchange.headers, {
      createUser: endpoint.create_user_on_auth === true,
      customData: endpoint.fetch_custom_user_data === true,
      clientAddress: exchange.remoteAddress,
    });
    return { type: 'user', user };
  }
}

function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}

/** A header as one value (repeated ones joined, as HTTP reads a list). */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
