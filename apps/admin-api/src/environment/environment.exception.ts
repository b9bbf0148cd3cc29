import { CodedError } from '@tessera/domain';

/** App Services' codes for environment values, which the admin API's shared enum does not carry. */
export enum EnvironmentErrorCode {
  EnvironmentValueNotFound = 'EnvironmentValueNotFound',
  EnvironmentValueAlreadyExists = 'EnvironmentValueAlreadyExists',
}

const statuses: Record<EnvironmentErrorCode, number> = {
  [EnvironmentErrorCode.EnvironmentValueNotFound]: 404,
  [EnvironmentErrorCode.EnvironmentValueAlreadyExists]: 409,
};

export class EnvironmentError extends CodedError<EnvironmentErrorCode> {
  constructor(code: EnvironmentErrorCode, message: string) {
    super(code, message, statuses);
  }
}
