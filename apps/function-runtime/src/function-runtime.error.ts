import { CodedError } from '@tessera/domain';

/** App Services error codes the function runtime answers with (realm-core maps each to a typed error). */
export enum FunctionRuntimeErrorCode {
  FunctionNotFound = 'FunctionNotFound',
  FunctionExecutionError = 'FunctionExecutionError',
  ExecutionTimeLimitExceeded = 'ExecutionTimeLimitExceeded',
  NotCallable = 'NotCallable',
  ArgumentsNotAllowed = 'ArgumentsNotAllowed',
  InvalidFunctionConfiguration = 'InvalidParameter',
  InternalServerError = 'InternalServerError',
  /** The caller went away (client disconnected, deadline passed) and the call was terminated. */
  ExecutionCancelled = 'ExecutionCancelled',
  /** The runtime is shutting down. */
  ServiceUnavailable = 'ServiceUnavailable',
}

const STATUS: Record<FunctionRuntimeErrorCode, number> = {
  [FunctionRuntimeErrorCode.FunctionNotFound]: 404,
  [FunctionRuntimeErrorCode.FunctionExecutionError]: 400,
  [FunctionRuntimeErrorCode.ExecutionTimeLimitExceeded]: 400,
  [FunctionRuntimeErrorCode.NotCallable]: 403,
  [FunctionRuntimeErrorCode.ArgumentsNotAllowed]: 400,
  [FunctionRuntimeErrorCode.InvalidFunctionConfiguration]: 400,
  [FunctionRuntimeErrorCode.InternalServerError]: 500,
  [FunctionRuntimeErrorCode.ExecutionCancelled]: 499,
  [FunctionRuntimeErrorCode.ServiceUnavailable]: 503,
};

/**
 * Every failure of a function call. For `FunctionExecutionError` the message is the message the function
 * threw (App Services shows it to the caller); other codes carry a message written here.
 */
export class FunctionRuntimeError extends CodedError<FunctionRuntimeErrorCode> {
  constructor(code: FunctionRuntimeErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, STATUS, options);
  }
}
