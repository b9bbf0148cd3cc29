import { CodedError } from '@tessera/domain';

export enum AdminAuthErrorCode {
  InvalidSession = 'InvalidSession',
  InvalidPassword = 'InvalidPassword',
  AuthProviderNotFound = 'AuthProviderNotFound',
  BadRequest = 'BadRequest',
}

const statuses: Record<AdminAuthErrorCode, number> = {
  [AdminAuthErrorCode.InvalidSession]: 401,
  [AdminAuthErrorCode.InvalidPassword]: 401,
  [AdminAuthErrorCode.AuthProviderNotFound]: 404,
  [AdminAuthErrorCode.BadRequest]: 400,
};

export class AdminAuthError extends CodedError<AdminAuthErrorCode> {
  constructor(code: AdminAuthErrorCode, message: string) {
    super(code, message, statuses);
  }
}
