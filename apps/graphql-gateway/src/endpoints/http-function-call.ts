/**
 * Runs the function behind an HTTPS endpoint or an incoming webhook for one request and turns what it did
 * into the HTTP reply: the one path both surfaces share, so the request argument, the `response` object,
 * the error mapping, the app log entry of a refused request and the request counter are made once.
 */
import { Injectable, Optional } from '@nestjs/common';
import { type Caller, type HttpCall, type RunAsHints } from '@tessera/contracts';
import { type CancelSignal, isTesseraError, type ErrorBody } from '@tessera/domain';
import { FunctionCalls } from '@tessera/messaging';
import { LogStore } from '@tessera/platform';
import { type Counter, metrics } from '@opentelemetry/api';
import { type HttpExchange, type HttpReply, replyOf, requestArgument, type ReturnType } from './http-exchange';

export interface HttpFunctionCall {
  appId: string;
  functionName: string;
  http: HttpCall;
  caller: Caller;
  runAs?: RunAsHints;
  respondResult: boolean;
  returnType: ReturnType;
  /** Status of a reply the function left empty: 204 for an endpoint, 200 for a webhook. */
  emptyStatus: number;
}

export interface CallContext {
  signal?: CancelSignal;
  headers?: Readonly<Record<string, string>>;
}

/** The App Services error body as a reply. */
export function errorReply(status: number, body: ErrorBody): HttpReply {
  return { status, headers: { 'Content-Type': ['application/json'] }, body: Buffer.from(JSON.stringify(body)) };
}

/** The reply of an error thrown while serving: its code and status, or a generic 500 for what we did not expect. */
export function replyOfError(error: unknown): HttpReply {
  if (isTesseraError(error)) return errorReply(error.httpStatus, error.toBody());
  return errorReply(500, { error: 'internal server error', error_code: 'InternalServerError' });
}

@Injectable()
export class HttpFunctionCalls {
  private readonly requests: Counter;

  constructor(
    private readonly functions: FunctionCalls,
    @Optional() private readonly logs?: LogStore,
  ) {
    this.requests = metrics.getMeter('@tessera/graphql-gateway').createCounter('tessera.endpoints.requests', {
      description: 'Requests to HTTPS endpoints and incoming webhooks, by kind and status class',
    });
  }

  /**
   * Serves one request: `prepare` finds the endpoint or webhook, checks the request and names the caller
   * (what it throws is a refusal, logged here); then the function runs (and the runtime logs the run).
   */
  async serve(kind: HttpCall['kind'], appId: string, route: string, prepare: () => Promise<HttpFunctionCall>, exchange: HttpExchange, context: CallContext): Promise<HttpReply> {
    const started = new Date();
    let call: HttpFunctionCall;
    try {
      call = await prepare();
    } catch (error) {
      await this.logRefusal(appId, kind, route, started, replyOfError(error));
      throw error;
    }
    return this.run(call, exchange, context);
  }

  /** Runs the function with the request and its `response` object, and makes the reply. */
  private async run(call: HttpFunctionCall, exchange: HttpExchange, context: CallContext): Promise<HttpReply> {
    // The canonical headers travel once, in the function's `request` argument; the runtime makes
    // `context.request.requestHeaders` of them (an HTTP call's metadata leaves them out).
    const outcome = await this.functions.run(
      {
        appId: call.appId,
        functionName: call.functionName,
        args: [requestArgument(exchange)],
        caller: call.caller,
        ...(call.runAs ? { runAs: call.runAs } : {}),
        metadata: {
          origin: 'endpoint',
          remoteIpAddress: exchange.remoteAddress,
          httpMethod: exchange.method,
          rawQueryString: exchange.rawQuery,
          webhookUrl: exchange.path,
          ...(typeof exchange.headers['user-agent'] === 'string' ? { httpUserAgent: exchange.headers['user-agent'] } : {}),
          ...(typeof exchange.headers['referer'] === 'string' ? { httpReferrer: exchange.headers['referer'] } : {}),
        },
        http: call.http,
      },
      context,
    );
    return replyOf(outcome, { respondResult: call.respondResult, returnType: call.returnType, emptyStatus: call.emptyStatus });
  }

  /** Counts a served request (every reply, refused or not). */
  count(kind: HttpCall['kind'], status: number): void {
    this.requests.add(1, { kind, status_class: `${Math.floor(status / 100)}xx` });
  }

  /**
   * A request refused before its function ran (unknown route, bad secret or signature, bad credentials) is
   * in the app's logs as App Services put it: an `ENDPOINT` or `WEBHOOK` entry with the error. Calls that
   * ran are logged by the function runtime, with the function's own log lines.
   */
  private async logRefusal(appId: string, kind: HttpCall['kind'], route: string, started: Date, reply: HttpReply): Promise<void> {
    if (!this.logs) return;
    let body: Partial<ErrorBody> = {};
    try {
      body = JSON.parse(reply.body?.toString('utf8') ?? '{}') as Partial<ErrorBody>;
    } catch {
      body = {};
    }
    await this.logs
      .append(appId, {
        type: kind === 'webhook' ? 'WEBHOOK' : 'ENDPOINT',
        messages: [],
        started: started.toISOString(),
        completed: new Date().toISOString(),
        request_url: route,
        status: reply.status,
        ...(body.error ? { error: body.error, error_code: body.error_code ?? 'BadRequest' } : {}),
      })
      .catch(() => undefined);
  }
}
