import { ContractErrorCode, InvalidPayloadError, type RemoteError, RemoteErrorSchema } from '@tessera/contracts';
import { isTesseraError, TesseraError } from '@tessera/domain';

export enum MessagingErrorCode {
  Timeout = 'MessagingTimeout',
  NoResponder = 'NoResponder',
  HandlerFailed = 'HandlerFailed',
  TransportFailed = 'TransportFailed',
  RequestAborted = 'RequestAborted',
}

/** No reply within the caller's deadline: the responder is slow, stuck or died mid-request. */
export class MessagingTimeoutError extends TesseraError {
  readonly errorCode = MessagingErrorCode.Timeout;
  readonly httpStatus = 504;

  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply to ${subject} within ${timeoutMs} ms`);
  }
}

/** The caller gave up on the request (its client disconnected) before the reply came. */
export class RequestAbortedError extends TesseraError {
  readonly errorCode = MessagingErrorCode.RequestAborted;
  // Nobody reads it: the client is gone. 499 is the status proxies log for a client that closed the request.
  readonly httpStatus = 499;

  constructor(readonly subject: string) {
    super(`the caller stopped waiting for ${subject}`);
  }
}

/** Nobody listens on the subject (no live replica): reported at once, without waiting for the deadline. */
export class NoResponderError extends TesseraError {
  readonly errorCode = MessagingErrorCode.NoResponder;
  readonly httpStatus = 503;

  constructor(readonly subject: string) {
    super(`no service is listening on ${subject}`);
  }
}

/** The handler on the other side failed; `errorCode` and `httpStatus` are the ones it reported. */
export class RemoteHandlerError extends TesseraError {
  readonly errorCode: string;
  readonly httpStatus: number;

  constructor(
    readonly subject: string,
    remote: RemoteError,
  ) {
    super(remote.message);
    this.errorCode = remote.errorCode;
    this.httpStatus = remote.httpStatus ?? 500;
  }
}

/** The connection to the broker failed or closed under the call. */
export class TransportError extends TesseraError {
  readonly errorCode = MessagingErrorCode.TransportFailed;
  readonly httpStatus = 503;

  constructor(
    readonly subject: string,
    cause: unknown,
  ) {
    super(`message transport failed for ${subject}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The wire form of an error a handler reports: safe message, stable code, never a stack trace. */
export function toRemoteError(error: TesseraError): RemoteError {
  const remote: RemoteError = { errorCode: error.errorCode, message: error.message, httpStatus: error.httpStatus };
  if (error instanceof InvalidPayloadError) return { ...remote, part: error.part, issues: [...error.issues] };
  return remote;
}

/**
 * Maps whatever a Nest client observable failed with (a typed error of ours, a RemoteError body sent by a
 * handler, Nest's `{status, message}` body, a broker error) to one typed TesseraError.
 */
export function toMessagingError(subject: string, error: unknown): TesseraError {
  if (isTesseraError(error)) return error;
  const remote = RemoteErrorSchema.safeParse(error);
  if (remote.success) {
    const body = remote.data;
    if (body.errorCode === (ContractErrorCode.InvalidPayload as string) && body.part && body.issues) return new InvalidPayloadError(subject, body.part, body.issues);
    return new RemoteHandlerError(subject, body);
  }
  if (isNestErrorBody(error)) return new RemoteHandlerError(subject, { errorCode: MessagingErrorCode.HandlerFailed, message: error.message, httpStatus: 500 });
  return new TransportError(subject, error);
}

function isNestErrorBody(value: unknown): value is { status: string; message: string } {
  return typeof value === 'object' && value !== null && (value as { status?: unknown }).status === 'error' && typeof (value as { message?: unknown }).message === 'string';
}
