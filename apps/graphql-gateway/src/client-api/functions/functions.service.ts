import { Injectable, Optional } from '@nestjs/common';
import { isDataSourceType, isFederatedType } from '@tessera/app-config';
import type { JsonValue, RequestMetadata } from '@tessera/contracts';
import { isTesseraError } from '@tessera/domain';
import { type FunctionCallOptions, FunctionCalls } from '@tessera/messaging';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import { AuthService, type ClientSession } from '../auth/auth.service';
import { normalizeDataSourceCall, withWireWidths } from './mongodb-actions';
import { RemoteDataAccess } from './remote-data-access.port';

/** `{ name, arguments, service? }`, the body of `functions/call` (and the decoded `baas_request`). */
export interface FunctionCallRequest {
  name: string;
  arguments: unknown[];
  service?: string;
}

/**
 * What a call answers: an app function's result as the runtime gave it (canonical EJSON, sent to the client
 * as is, without a round trip through BSON values), or a data-source action's value (BSON values, or the
 * change events of `watch`).
 */
export type FunctionCallAnswer = { ejson: JsonValue } | { value: unknown };

/** Client function calls: app functions through the runtime, data-source actions through RemoteDataAccess. */
@Injectable()
export class FunctionsService {
  constructor(
    private readonly auth: AuthService,
    private readonly functions: FunctionCalls,
    @Optional() private readonly dataAccess?: RemoteDataAccess,
  ) {}

  /**
   * `options.signal` aborts when the HTTP client goes away (an app function's call is then stopped);
   * `options.headers` carry the request's correlation id and trace context. Whether the client may call the
   * function (`private`, `can_evaluate`) is the function runtime's decision, made there for every caller.
   */
  async call(session: ClientSession, request: FunctionCallRequest, metadata: Omit<RequestMetadata, 'origin'>, options: FunctionCallOptions = {}): Promise<FunctionCallAnswer> {
    if (request.service !== undefined) return { value: await this.callService(session, request) };
    const caller = { type: 'user' as const, user: await this.auth.callerOf(session) };
    const { result } = await this.functions.run({ appId: session.app.appId, functionName: request.name, args: request.arguments, caller, metadata: { ...metadata, origin: 'client' } }, options);
    return { ejson: result };
  }

  private async callService(session: ClientSession, request: FunctionCallRequest): Promise<unknown> {
    const serviceName = request.service ?? '';
    const linked = session.app.config.services.filter((service) => isDataSourceType(service.config.type));
    const known = linked.some((service) => service.config.name === serviceName) || ((serviceName === 'mongodb-atlas' || serviceName === 'mongo-db') && linked.some((service) => !isFederatedType(service.config.type)));
    if (!known) throw new ClientApiError(ClientApiErrorCode.ServiceNotFound, `service not found: '${serviceName}'`);
    if (!this.dataAccess) throw new ClientApiError(ClientApiErrorCode.ServiceUnavailable, 'remote data access is not available in this process');
    const { action, args } = normalizeDataSourceCall(request.name, request.arguments);
    const app = { appId: session.app.appId, clientAppId: session.app.clientAppId, deploymentId: session.app.deploymentId, config: session.app.config };
    try {
      const result = await this.dataAccess.execute(app, serviceName, action, args, await this.auth.callerOf(session));
      return action === 'watch' ? result : withWireWidths(action, result);
    } catch (error) {
      throw asWireError(error);
    }
  }
}

/**
 * Errors of libraries that cannot depend on TesseraError (the rules are a util lib) still carry an App
 * Services code and status: keep them, so a refused write is a 403 and not a 500.
 */
export function asWireError(error: unknown): unknown {
  if (isTesseraError(error) || !(error instanceof Error)) return error;
  const { errorCode, httpStatus } = error as Error & { errorCode?: unknown; httpStatus?: unknown };
  if (typeof errorCode === 'string' && typeof httpStatus === 'number' && httpStatus >= 400 && httpStatus < 500) return new ClientApiError(errorCode, error.message, { httpStatus, cause: error });
  return error;
}

/** Checks the shape of a call body. */
export function toFunctionCallRequest(value: unknown): FunctionCallRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ClientApiError(ClientApiErrorCode.BadRequest, 'the request body must be a JSON object');
  const { name, arguments: args, service } = value as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') throw new ClientApiError(ClientApiErrorCode.MissingParameter, "'name' must be a non-empty string");
  if (args !== undefined && !Array.isArray(args)) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "'arguments' must be an array");
  if (service !== undefined && service !== null && typeof service !== 'string') throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "'service' must be a string");
  return { name, arguments: (args as unknown[] | undefined) ?? [], ...(typeof service === 'string' ? { service } : {}) };
}
