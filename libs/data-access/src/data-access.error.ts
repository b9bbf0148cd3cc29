import { TesseraError } from '@tessera/domain';

export enum DataAccessErrorCode {
  /** Malformed arguments for the action, or a selector or stage that only system functions may use. */
  InvalidParameter = 'InvalidParameter',
  /** An action the data-source service does not have. */
  ServiceCommandNotFound = 'ServiceCommandNotFound',
  /** admin(), listing operations and federated sources outside system functions. */
  SystemOnly = 'ExecutionPermissionDenied',
}

const statuses: Record<string, number> = {
  InvalidParameter: 400,
  ServiceCommandNotFound: 404,
  ExecutionPermissionDenied: 403,
};

export class DataAccessError extends TesseraError {
  readonly httpStatus: number;
  constructor(
    readonly errorCode: DataAccessErrorCode,
    message: string,
  ) {
    super(message);
    this.httpStatus = statuses[errorCode] ?? 400;
  }
}
