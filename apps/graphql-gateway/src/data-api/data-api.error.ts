import { CodedError } from '@tessera/domain';

/** The Data API's own `error_code`s; authentication and data-access failures keep the codes of their features. */
export enum DataApiErrorCode {
  InvalidParameter = 'InvalidParameter',
  /** A wrong `secret` query parameter or `Endpoint-Signature`. */
  AuthError = 'AuthError',
  ActionNotFound = 'ActionNotFound',
  DataSourceNotFound = 'DataSourceNotFound',
  /** The app has no Data API configuration, it is disabled, or the path names a version it does not serve. */
  DataApiNotEnabled = 'DataApiNotEnabled',
  MethodNotAllowed = 'MethodNotAllowed',
  UnsupportedMediaType = 'UnsupportedMediaType',
  /** `can_evaluate` of the configuration does not hold for the request. */
  NotCallable = 'NotCallable',
  /** The app's Data API configuration file is unreadable: fix and push it. */
  InvalidConfiguration = 'InvalidConfiguration',
}

const statuses: Record<DataApiErrorCode, number> = {
  [DataApiErrorCode.InvalidParameter]: 400,
  [DataApiErrorCode.AuthError]: 401,
  [DataApiErrorCode.ActionNotFound]: 404,
  [DataApiErrorCode.DataSourceNotFound]: 404,
  [DataApiErrorCode.DataApiNotEnabled]: 404,
  [DataApiErrorCode.MethodNotAllowed]: 405,
  [DataApiErrorCode.UnsupportedMediaType]: 415,
  [DataApiErrorCode.NotCallable]: 403,
  [DataApiErrorCode.InvalidConfiguration]: 500,
};

export class DataApiError extends CodedError<DataApiErrorCode> {
  constructor(code: DataApiErrorCode, message: string) {
    super(code, message, statuses);
  }
}
