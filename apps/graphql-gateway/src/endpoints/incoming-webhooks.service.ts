/**
 * Incoming webhooks of third-party services (spec 2.8): `/api/client/v2.0/app/<client app id>/service/
 * <service>/incoming_webhook/<name>` runs the webhook's own source with `(payload, response)` after the
 * checks its options name (`httpMethod`, `validationMethod` with `secret`), as the user the request
 * authenticates as (`run_as_authed_user`), as a fixed or scripted user (the runtime applies
 * `run_as_user_id` and `run_as_user_id_script_source`), or as system.
 */
import { Injectable } from '@nestjs/common';
import { type AppService, type Webhook, webhookValidationMethod } from '@tessera/app-config';
import type { Caller } from '@tessera/contracts';
import { type ClientApp, ClientApps } from '../client-api/client-apps.service';
import { requestProofRefusal, WEBHOOK_SIGNATURE } from '../data-api/endpoint-validation';
import { EndpointError, EndpointErrorCode } from './endpoints.error';
import { HttpCallerAuth } from './http-caller';
import type { HttpExchange, HttpReply } from './http-exchange';
import { type CallContext, type HttpFunctionCall, HttpFunctionCalls } from './http-function-call';

@Injectable()
export class IncomingWebhooksService {
  constructor(
    private readonly apps: ClientApps,
    private readonly callers: HttpCallerAuth,
    private readonly calls: HttpFunctionCalls,
  ) {}

  async serve(clientAppId: string, serviceName: string, webhookName: string, exchange: HttpExchange, context: CallContext): Promise<HttpReply> {
    const app = await this.apps.byClientAppId(clientAppId);
    return this.calls.serve('webhook', app.appId, exchange.path, () => this.prepare(app, serviceName, webhookName, exchange), exchange, context);
  }

  private async prepare(app: ClientApp, serviceName: string, webhookName: string, exchange: HttpExchange): Promise<HttpFunctionCall> {
    const service: AppService | undefined = app.config.services.find((candidate) => candidate.config.name === serviceName);
    const hook: Webhook | undefined = service?.webhooks.find((candidate) => candidate.config.name === webhookName);
    if (!service || !hook) throw new EndpointError(EndpointErrorCode.NotFound, `incoming webhook not found: '${webhookName}' of service '${serviceName}'`);
    const options = hook.config.options ?? {};
    const method = typeof options.httpMethod === 'string' ? options.httpMethod.toUpperCase() : 'ANY';
    const asked = exchange.method === 'HEAD' ? 'GET' : exchange.method;
    if (method !== 'ANY' && method !== asked) throw new EndpointError(EndpointErrorCode.MethodNotAllowed, `incoming webhook '${webhookName}' accepts ${method} requests only`);
    const secret = typeof options.secret === 'string' ? options.secret : undefined;
    const refusal = requestProofRefusal(webhookValidationMethod(options), secret, exchange, WEBHOOK_SIGNATURE);
    if (refusal !== undefined) throw new EndpointError(EndpointErrorCode.AuthFailed, refusal);
    return {
      appId: app.appId,
      functionName: webhookName,
      http: { kind: 'webhook', route: exchange.path, service: serviceName, webhook: webhookName },
      caller: await this.callerOf(app, hook, exchange),
      respondResult: hook.config.respond_result === true,
      returnType: 'EJSON',
      emptyStatus: 200,
    };
  }

  private async callerOf(app: ClientApp, hook: Webhook, exchange: HttpExchange): Promise<Caller> {
    if (hook.config['run_as_authed_user'] !== true) return { type: 'system' };
    const user = await this.callers.callerOf(app, exchange.headers, {
      createUser: hook.config['create_user_on_auth'] === true,
      customData: hook.config['fetch_custom_user_data'] === true,
      clientAddress: exchange.remoteAddress,
    });
    return { type: 'user', user };
  }
}
