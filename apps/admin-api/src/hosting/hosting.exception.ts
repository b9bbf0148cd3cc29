import { CodedError } from '@tessera/domain';

export enum HostingErrorCode {
  InvalidParameter = 'InvalidParameter',
  AssetNotFound = 'AssetNotFound',
  RequestTooLarge = 'RequestTooLarge',
  HostingLimitExceeded = 'HostingLimitExceeded',
}

const statuses: Record<HostingErrorCode, number> = {
  [HostingErrorCode.InvalidParameter]: 400,
  [HostingErrorCode.AssetNotFound]: 404,
  [HostingErrorCode.RequestTooLarge]: 413,
  [HostingErrorCode.HostingLimitExceeded]: 400,
};

/** Errors of the admin API's hosting asset endpoints, answered with App Services' error body. */
export class HostingError extends CodedError<HostingErrorCode> {
  constructor(code: HostingErrorCode, message: string) {
    super(code, message, statuses);
  }
}
