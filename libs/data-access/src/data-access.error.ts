import { CodedError } from '@tessera/domain';

export enum DataAccessErrorCode {
  /** Malformed arguments for the action, or a selector or stage that only system functions may use. */
  InvalidParameter = 'InvalidParameter',
  /** An action the data-source service does not have. */
  ServiceCommandNotFound = 'ServiceCommandNotFound',
  /** admin(), listing operations and federated sources outside system functions. */
  SystemOnly = 'ExecutionPermissionDenied',
  /** A commit or operation of a transaction that an earlier failure inside it aborted (MongoDB's code name). */
  NoSuchTransaction = 'NoSuchTransaction',
}

const statuses: Record<DataAccessErrorCode, number> = {
  [DataAccessErrorCode.InvalidParameter]: 400,
  [DataAccessErrorCode.ServiceCommandNotFound]: 404,
  [DataAccessErrorCode.SystemOnly]: 403,
  [DataAccessErrorCode.NoSuchTransaction]: 400,
};

export class DataAccessError extends CodedError<DataAccessErrorCode> {
  constructor(code: DataAccessErrorCode, message: string) {
    super(code, message, statuses);
  }
}
