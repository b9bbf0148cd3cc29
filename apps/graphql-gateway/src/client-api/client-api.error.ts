import { TesseraError } from '@tessera/domain';

/** The `error_code` strings of the client API; realm-core maps most of them to typed errors (R4). */
export enum ClientApiErrorCode {
  InvalidSession = 'InvalidSession',
  AuthProviderNotFound = 'AuthProviderNotFound',
  InvalidPassword = 'InvalidPassword',
  AuthError = 'AuthError',
  UserNotFound = 'UserNotFound',
  UserDisabled = 'UserDisabled',
  AccountNameInUse = 'AccountNameInUse',
  UserAlreadyConfirmed = 'UserAlreadyConfirmed',
  UserpassTokenInvalid = 'UserpassTokenInvalid',
  APIKeyNotFound = 'APIKeyNotFound',
  APIKeyAlreadyExists = 'APIKeyAlreadyExists',
  FunctionNotFound = 'FunctionNotFound',
  FunctionExecutionError = 'FunctionExecutionError',
  ServiceNotFound = 'ServiceNotFound',
  ServiceCommandNotFound = 'ServiceCommandNotFound',
  AppNotFound = 'AppNotFound',
  BadRequest = 'BadRequest',
  InvalidParameter = 'InvalidParameter',
  MissingParameter = 'MissingParameter',
  DomainNotAllowed = 'DomainNotAllowed',
  /** The request's address is not on the app's IP access list. */
  IPAddressNotAllowed = 'IPAddressNotAllowed',
  TooManyRequests = 'TooManyRequests',
  ServiceUnavailable = 'ServiceUnavailable',
  NotImplemented = 'NotImplemented',
}

const statusOf: Record<ClientApiErrorCode, number> = {
  [ClientApiErrorCode.InvalidSession]: 401,
  [ClientApiErrorCode.AuthProviderNotFound]: 404,
  [ClientApiErrorCode.InvalidPassword]: 401,
  [ClientApiErrorCode.AuthError]: 401,
  [ClientApiErrorCode.UserNotFound]: 404,
  [ClientApiErrorCode.UserDisabled]: 401,
  [ClientApiErrorCode.AccountNameInUse]: 409,
  [ClientApiErrorCode.UserAlreadyConfirmed]: 409,
  [ClientApiErrorCode.UserpassTokenInvalid]: 400,
  [ClientApiErrorCode.APIKeyNotFound]: 404,
  [ClientApiErrorCode.APIKeyAlreadyExists]: 409,
  [ClientApiErrorCode.FunctionNotFound]: 404,
  [ClientApiErrorCode.FunctionExecutionError]: 400,
  [ClientApiErrorCode.ServiceNotFound]: 404,
  [ClientApiErrorCode.ServiceCommandNotFound]: 404,
  [ClientApiErrorCode.AppNotFound]: 404,
  [ClientApiErrorCode.BadRequest]: 400,
  [ClientApiErrorCode.InvalidParameter]: 400,
  [ClientApiErrorCode.MissingParameter]: 400,
  [ClientApiErrorCode.DomainNotAllowed]: 403,
  [ClientApiErrorCode.IPAddressNotAllowed]: 403,
  [ClientApiErrorCode.TooManyRequests]: 429,
  [ClientApiErrorCode.ServiceUnavailable]: 503,
  [ClientApiErrorCode.NotImplemented]: 501,
};

/** A client API failure with its App Services code; the host's exception filter puts it on the wire. */
export class ClientApiError extends TesseraError {
  readonly httpStatus: number;

  constructor(
    readonly errorCode: ClientApiErrorCode | string,
    message: string,
    options?: { httpStatus?: number; cause?: unknown },
  ) {
    super(message, options);
    this.httpStatus = options?.httpStatus ?? statusOf[errorCode as ClientApiErrorCode] ?? 400;
  }
}

/** 401 InvalidSession: what makes realm-web and realm-core refresh the access token and retry (R5). */
export function invalidSession(detail?: string): ClientApiError {
  return new ClientApiError(ClientApiErrorCode.InvalidSession, detail ? `invalid session: ${detail}` : 'invalid session');
}
