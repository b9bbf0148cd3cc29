import { Controller, Logger } from '@nestjs/common';
import { type CommandRequest, type CommandResponseInput, type EventPayload, MessageHeaders, type RequestMetadata, Subjects } from '@tessera/contracts';
import { isTesseraError } from '@tessera/domain';
import { assertWellFormedEjson, CommandHandler, decodeEjson, EventHandler, type MessageContext, propagationHeaders } from '@tessera/messaging';
import { ChangePublisher } from '../change-events/change-publisher';
import { FunctionRuntimeService, type ExecuteFunctionRequest } from '../function-runtime.service';
import type { FunctionRequestInfo } from '../function-runtime.options';
import type { CallOrigin } from '../execution-logs/execution-log.store';

const origins: Record<CommandRequest<typeof Subjects.FunctionsExecutionRun>['metadata']['origin'], CallOrigin> = {
  client: 'client',
  endpoint: 'http',
  graphql: 'client',
  trigger: 'trigger',
  rule: 'system',
  admin: 'system',
  function: 'system',
};

/** The trace id of the message's W3C trace context (`00-<trace id>-<span id>-<flags>`), if it has one. */
function traceIdOf(context: MessageContext): string | undefined {
  const traceId = context.headers[MessageHeaders.Traceparent]?.split('-')[1];
  return traceId && /^[0-9a-f]{32}$/.test(traceId) && !/^0+$/.test(traceId) ? traceId : undefined;
}

/**
 * The headers of the HTTP request an endpoint or webhook call serves, from its first argument (`request` or
 * `payload`, whose `headers` the edge made canonical): the edge sends them once, there, not again in the
 * metadata. Undefined when the argument holds no such map.
 */
function servedRequestHeaders(args: readonly unknown[]): Record<string, string[]> | undefined {
  const first = args[0];
  if (typeof first !== 'object' || first === null) return undefined;
  const headers = (first as { headers?: unknown }).headers;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return undefined;
  for (const values of Object.values(headers)) if (!Array.isArray(values) || !values.every((value) => typeof value === 'string')) return undefined;
  return headers as Record<string, string[]>;
}

/** `context.request` of the call: the caller's HTTP request as its metadata describes it. */
function requestInfoOf(metadata: RequestMetadata): FunctionRequestInfo {
  const info: FunctionRequestInfo = {};
  if (metadata.remoteIpAddress) info.remoteIPAddress = metadata.remoteIpAddress;
  if (metadata.httpMethod) info.httpMethod = metadata.httpMethod;
  if (metadata.httpUserAgent) info.httpUserAgent = metadata.httpUserAgent;
  if (metadata.httpReferrer) info.httpReferrer = metadata.httpReferrer;
  if (metadata.rawQueryString !== undefined) info.rawQueryString = metadata.rawQueryString;
  if (metadata.webhookUrl) info.webhookUrl = metadata.webhookUrl;
  if (metadata.requestHeaders) info.requestHeaders = metadata.requestHeaders;
  return info;
}

const logger = new Logger('FunctionsExecutionHandler');

/** The runtime's edge on the transport: one command, and the deployment event that retires sandboxes. */
@Controller()
export class FunctionsExecutionHandler {
  constructor(
    private readonly runtime: FunctionRuntimeService,
    private readonly changes: ChangePublisher,
  ) {}

  @CommandHandler(Subjects.FunctionsExecutionRun)
  async run(request: CommandRequest<typeof Subjects.FunctionsExecutionRun>, context: MessageContext): Promise<CommandResponseInput<typeof Subjects.FunctionsExecutionRun>> {
    const { metadata } = request;
    try {
      // Every caller's arguments (the admin API passes its body's through as they are) are checked here.
      assertWellFormedEjson(request.args);
    } catch (error) {
      if (isTesseraError(error)) return { ok: false, error: { errorCode: error.errorCode, message: error.message } };
      throw error;
    }
    const execute: ExecuteFunctionRequest = {
      appId: request.appId,
      name: request.functionName,
      // What EJSON.deserialize gives (regex query operators kept), without its stringify-and-parse of every argument.
      arguments: request.args.map((arg): unknown => decodeEjson(arg, { relaxed: false })),
      caller: request.caller,
      origin: origins[metadata.origin],
      request: requestInfoOf(metadata),
      headers: propagationHeaders(context),
    };
    // Set one by one rather than spread from conditional parts: every call builds this request.
    if (request.http) {
      execute.http = request.http;
      if (!metadata.requestHeaders) {
        const headers = servedRequestHeaders(execute.arguments);
        if (headers && execute.request) execute.request.requestHeaders = headers;
      }
    }
    // Unsaved source is the admin API's to run; from anyone else it is ignored and the named function runs.
    if (request.source && metadata.origin === 'admin') execute.source = request.source;
    if (context.correlationId) execute.correlationId = context.correlationId;
    const traceId = traceIdOf(context);
    if (traceId) execute.traceId = traceId;
    // Aborts when the caller stops waiting: it went away, or the deadline it sent passed.
    if (context.signal) execute.signal = context.signal;
    try {
      const result = await this.runtime.execute(execute);
      return { ok: true, result: JSON.parse(result.resultEjson) as never, logs: result.logs, ...(result.http ? { http: result.http } : {}) };
    } catch (error) {
      if (isTesseraError(error)) return { ok: false, error: { errorCode: error.errorCode, message: error.message } };
      throw error;
    }
  }

  /** After a deploy (distributed mode): this replica's feeds for the app's data sources watch before the admin API answers. */
  @CommandHandler(Subjects.FunctionsChangeFeedsFollow)
  async followChanges(request: CommandRequest<typeof Subjects.FunctionsChangeFeedsFollow>): Promise<CommandResponseInput<typeof Subjects.FunctionsChangeFeedsFollow>> {
    await this.changes.refresh(request.appId);
    return { feeds: this.changes.following.filter((key) => key.startsWith(`${request.appId}/`)) };
  }

  @EventHandler(Subjects.AppsDeploymentChanged, { broadcast: true })
  async deploymentChanged(event: EventPayload<typeof Subjects.AppsDeploymentChanged>): Promise<void> {
    // The host's platform handler reloads the deployed configuration; here the warm sandboxes retire and
    // the change publisher follows the data sources the app links now.
    this.runtime.invalidate(event.appId);
    await this.changes.refresh(event.appId);
    // The first call after a deploy finds a sandbox started (an isolate takes tens of milliseconds to start).
    // Started on the next turn, after this process's other handlers of the event reloaded the configuration.
    setImmediate(() => {
      this.runtime.warm(event.appId).catch((error: unknown) => logger.debug(`no sandbox started ahead for app ${event.appId}: ${error instanceof Error ? error.message : String(error)}`));
    });
  }
}
