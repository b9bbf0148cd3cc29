/**
 * The Data API (`/app/<client app id>/endpoint/data/<v1|beta>/action/<action>`): one request, one
 * data-source call, made through remote data access (RemoteDataAccess: libs/data-access under the caller's
 * rules, exactly what `functions/call` with `service` runs) or, for `run_as_system`, as the system. Each
 * request is logged in the app's logs as App Services logged it (`ENDPOINT`, with `endpoint_route`) and
 * traced as one span whose children reach the datastore. This class must not evaluate rules itself.
 */
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type Counter, metrics, SpanStatusCode, trace } from '@opentelemetry/api';
import { isDataSourceType } from '@tessera/app-config';
import { isCredentialHeader, isCredentialQueryParameter, REDACTED } from '@tessera/contracts';
import { DataAccess } from '@tessera/data-access';
import { isTesseraError } from '@tessera/domain';
import { correlationIdOf } from '@tessera/http-edge';
import { DeployedApps, LogBuffer, LogStore, SecretStore } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { Binary, EJSON } from 'bson';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ClientApp, ClientApps } from '../client-api/client-apps.service';
import { asWireError } from '../client-api/functions/functions.service';
import { normalizeDataSourceCall } from '../client-api/functions/mongodb-actions';
import { RemoteDataAccess } from '../client-api/functions/remote-data-access.port';
import { type DataApiCaller, DataApiCallers } from './data-api-caller';
import { type DataApiConfig, dataApiConfigOf } from '@tessera/app-config';
import { mediaTypeOf, parseRequestBody, responseFormat, serializeResponse } from './data-api-format';
import { type DataApiAction, isDataApiAction, toDataApiResponse, toDataSourceCall, withUpsertId } from './data-api-request';
import { DataApiError, DataApiErrorCode } from './data-api.error';
import { type EndpointRequest, EndpointRoutes } from './endpoint-routes';
import { ENDPOINT_SIGNATURE, endpointSecret, rawQueryOf, requestProofRefusal } from './endpoint-validation';

/** `data/<version>/action/<action>`; `beta` is the Data API's preview path, served beside the configured versions. */
const DATA_API_PATH = /^data\/([^/]+)\/action\/([^/]+)\/?$/;

/** What a request's log entry needs, filled in as the request goes. */
interface CallRecord {
  started: Date;
  app?: ClientApp;
  groupId?: string;
  config?: DataApiConfig;
  version?: string;
  action?: string;
  userId?: string;
  /** The run-as script's log lines, shown as the request entry's messages. */
  messages?: string[];
}

const tracer = () => trace.getTracer('@tessera/graphql-gateway');

@Injectable()
export class DataApiService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('DataApi');
  /** Requests answered, by `action` and `status` (from the global meter provider: none, none recorded). */
  private readonly requests: Counter = metrics.getMeter('@tessera/graphql-gateway').createCounter('tessera.data_api.requests', { description: 'Data API requests answered, by action and status' });

  constructor(
    private readonly routes: EndpointRoutes,
    private readonly apps: ClientApps,
    private readonly deployed: DeployedApps,
    private readonly callers: DataApiCallers,
    private readonly remote: RemoteDataAccess,
    private readonly dataAccess: DataAccess,
    private readonly secrets: SecretStore,
    logs: LogStore,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.logs = new LogBuffer(logs);
  }

  /** The `ENDPOINT` entries of the requests answered, written in batches. */
  private readonly logs: LogBuffer;

  /** A clean stop keeps the entries still waiting. */
  onModuleDestroy(): Promise<void> {
    return this.logs.flush();
  }

  onModuleInit(): void {
    this.routes.add({ name: 'data-api', matches: (path) => path === 'data' || path.startsWith('data/'), handle: (request, reply) => this.handle(request, reply) });
  }

  async handle(request: EndpointRequest, reply: FastifyReply): Promise<void> {
    const record: CallRecord = { started: new Date() };
    const match = DATA_API_PATH.exec(request.path);
    const spanName = `Data API ${match?.[2] ?? 'request'}`;
    await tracer().startActiveSpan(spanName, { attributes: { 'tessera.client_app_id': request.clientAppId, 'http.route': '/app/:clientAppId/endpoint/data/:version/action/:action' } }, async (span) => {
      let status = 500;
      let error: { error: string; error_code: string } | undefined;
      try {
        const answer = await this.serve(request, match, record);
        status = answer.status;
        // Bytes, so Fastify adds no charset: clients compare the type exactly.
        await reply.status(status).header('content-type', mediaTypeOf(answer.format)).send(Buffer.from(answer.payload));
      } catch (thrown) {
        const wire = this.toWire(thrown, request.raw, record);
        status = wire.status;
        error = wire.body;
        span.setStatus({ code: SpanStatusCode.ERROR, message: wire.body.error_code });
        if (wire.status === 405) void reply.header('allow', 'POST');
        await reply.status(wire.status).header('content-type', 'application/json').send(JSON.stringify(wire.body));
      } finally {
        span.setAttribute('http.response.status_code', status);
        span.end();
        this.requests.add(1, { action: record.action ?? 'unknown', status });
        this.log(request, record, status, error);
      }
    });
  }

  private async serve(request: EndpointRequest, match: RegExpExecArray | null, record: CallRecord): Promise<{ status: number; format: 'JSON' | 'EJSON'; payload: string }> {
    const app = (record.app = await this.apps.byClientAppId(request.clientAppId));
    record.groupId = (await this.deployed.byId(app.appId)).record.group_id;
    const file = dataApiConfigOf(app.config);
    if (file && 'invalid' in file) throw new DataApiError(DataApiErrorCode.InvalidConfiguration, `the app's Data API configuration is invalid: ${file.invalid}`);
    const config = file?.config;
    if (!config || config.disabled) throw new DataApiError(DataApiErrorCode.DataApiNotEnabled, 'the Data API is not enabled for this app');
    record.config = config;
    const [, version = '', actionName = ''] = match ?? [];
    if (!match || (version !== 'beta' && !config.versions.includes(version))) throw new DataApiError(DataApiErrorCode.DataApiNotEnabled, `no Data API endpoint at '/${request.path}'`);
    record.version = version;
    if (!isDataApiAction(actionName)) throw new DataApiError(DataApiErrorCode.ActionNotFound, `unknown Data API action '${actionName}'`);
    const action: DataApiAction = actionName;
    record.action = action;
    if (request.method !== 'POST') throw new DataApiError(DataApiErrorCode.MethodNotAllowed, `Data API actions are called with POST, not ${request.method}`);

    const headers = request.raw.headers;
    if (config.validation_method !== 'NO_VALIDATION') {
      const secret = await endpointSecret(this.secrets, app, config.secret_name);
      const refusal = requestProofRefusal(config.validation_method, secret, { rawQuery: rawQueryOf(request.raw.url), headers, body: request.body }, ENDPOINT_SIGNATURE);
      if (refusal !== undefined) throw new DataApiError(DataApiErrorCode.AuthError, refusal);
    }
    const caller = await this.callers.callerOf(app, config, request, (logs) => (record.messages = logs));
    await this.callers.assertMayRun(config, caller, request);
    record.userId = caller.userId;
    const body = parseRequestBody(single(headers['content-type']), request.body);
    const { call, upsertId } = withUpsertId(toDataSourceCall(action, body));
    const service = this.dataSourceService(app, call.dataSource);
    const normalized = normalizeDataSourceCall(call.action, [call.args]);
    const result = await this.execute(app, service, normalized.action, normalized.args, caller);
    const response = toDataApiResponse(action, result, upsertId);
    const format = responseFormat(single(headers['accept']), config.return_type);
    return { status: response.status, format, payload: serializeResponse(response.body, format) };
  }

  private execute(app: ClientApp, service: string, action: string, args: Record<string, unknown>, caller: DataApiCaller): Promise<unknown> {
    if (caller.kind === 'system') return this.dataAccess.execute({ app: { id: app.appId, deploymentId: app.deploymentId, config: app.config }, service, action, args, caller: { kind: 'system' } });
    return this.remote.execute({ appId: app.appId, clientAppId: app.clientAppId, deploymentId: app.deploymentId, config: app.config }, service, action, args, caller.user);
  }

  /** The linked data source a `dataSource` names: the service's name, or its cluster's name as the Atlas Data API used. */
  private dataSourceService(app: ClientApp, dataSource: string): string {
    const linked = app.config.services.filter((service) => isDataSourceType(service.config.type));
    const found = linked.find((service) => service.config.name === dataSource) ?? linked.find((service) => (service.config.config as { clusterName?: unknown } | undefined)?.clusterName === dataSource);
    if (!found) throw new DataApiError(DataApiErrorCode.DataSourceNotFound, `data source not found: '${dataSource}'`);
    return String(found.config.name);
  }

  private toWire(thrown: unknown, request: FastifyRequest, record: CallRecord): { status: number; body: { error: string; error_code: string; link?: string } } {
    const error = asWireError(thrown);
    const link = this.logLink(request, record);
    if (isTesseraError(error)) return { status: error.httpStatus, body: error.toBody(link) };
    const correlationId = correlationIdOf(request);
    this.logger.error({ err: error, correlationId, url: request.url }, 'Data API request failed');
    return { status: 500, body: { error: `internal server error (correlation id ${correlationId})`, error_code: 'InternalServerError', ...(link ? { link } : {}) } };
  }

  /** Where the request's log entry is read: the admin API's logs of the app, by correlation id. */
  private logLink(request: FastifyRequest, record: CallRecord): string | undefined {
    if (!record.app || !record.groupId) return undefined;
    const base = this.settings.publicUrl ?? `${request.protocol}://${request.host}`;
    return `${base}/api/admin/v3.0/groups/${record.groupId}/apps/${record.app.appId}/logs?co_id=${encodeURIComponent(correlationIdOf(request))}`;
  }

  /**
   * One `ENDPOINT` entry per request of a known app (the run-as script's lines among its messages), written
   * without holding up the answer (in batches, see LogBuffer).
   */
  private log(request: EndpointRequest, record: CallRecord, status: number, error: { error: string; error_code: string } | undefined): void {
    const { app } = record;
    if (!app) return;
    const route = record.action ? `/data/${record.version ?? 'v1'}/action/${record.action}` : `/${request.path}`;
    const entry = {
      type: 'ENDPOINT',
      messages: record.messages ?? [],
      started: record.started.toISOString(),
      completed: new Date().toISOString(),
      co_id: correlationIdOf(request.raw),
      domain_id: app.domainId,
      app_id: app.clientAppId,
      ...(record.groupId ? { group_id: record.groupId } : {}),
      request_url: request.raw.url.split('?')[0],
      request_method: request.method,
      remote_ip_address: request.raw.ip,
      status,
      endpoint_route: route,
      function_call: { name: record.action ? `data/${record.version ?? 'v1'}/${record.action}` : route, arguments: null },
      ...(record.userId ? { user_id: record.userId } : {}),
      ...(error ? { error: error.error, error_code: error.error_code } : {}),
      ...(record.config?.log_function_arguments ? { endpoint_args: endpointArgs(request) } : {}),
    };
    this.logs.append(app.appId, entry);
  }
}

/** The request's query, headers (credentials redacted) and body as canonical EJSON, as `endpoint_args` showed them. */
function endpointArgs(request: EndpointRequest): string {
  const headers: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(request.raw.headers)) {
    if (value === undefined) continue;
    headers[name] = isCredentialHeader(name) ? [REDACTED] : Array.isArray(value) ? value : [value];
  }
  const query: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request.raw.query as Record<string, unknown>)) query[name] = isCredentialQueryParameter(name) ? REDACTED : value;
  return EJSON.stringify({ query, headers, body: new Binary(request.body) }, { relaxed: false });
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
