import { Injectable, Optional } from '@nestjs/common';
import { type Caller, type JsonValue, type RequestMetadata, Subjects } from '@tessera/contracts';
import { decodeEjson, encodeEjson, MessageBus } from '@tessera/messaging';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';

/** Statuses of the runtime's codes that are not 400 (FunctionExecutionError and most others are). */
const remoteStatus: Record<string, number> = { FunctionNotFound: 404, NotCallable: 403, InternalServerError: 500, ServiceUnavailable: 503 };

/**
 * Runs app functions through the function runtime (`functions.execution.run` on the message bus).
 * Arguments and the result are BSON values here and canonical EJSON on the bus. Without a bus (a host
 * that wires no messaging) every call fails with 503 rather than the process failing to start.
 */
@Injectable()
export class FunctionInvoker {
  constructor(@Optional() private readonly bus?: MessageBus) {}

  /**
   * Waits as long as the function may run (the bus's deadline for the subject follows the runtime's time
   * limit); `signal` (the HTTP client went away) stops the wait and the call.
   */
  async call(appId: string, functionName: string, args: readonly unknown[], caller: Caller, metadata: RequestMetadata, signal?: AbortSignal): Promise<unknown> {
    if (!this.bus) throw new ClientApiError(ClientApiErrorCode.ServiceUnavailable, 'the function runtime is not available in this process');
    const response = await this.bus.request(Subjects.FunctionsExecutionRun, {
      appId,
      functionName,
      args: encodeEjson([...args]) as JsonValue[],
      caller,
      metadata,
    }, signal ? { signal } : {});
    if (!response.ok) {
      throw new ClientApiError(response.error.errorCode, response.error.message, { httpStatus: remoteStatus[response.error.errorCode] ?? 400 });
    }
    return decodeEjson(response.result);
  }
}
