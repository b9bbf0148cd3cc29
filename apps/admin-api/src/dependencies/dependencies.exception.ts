import { CodedError } from '@tessera/domain';

export enum DependenciesErrorCode {
  InvalidArchive = 'InvalidArchive',
  ArchiveTooLarge = 'ArchiveTooLarge',
  NativeModuleNotSupported = 'NativeModuleNotSupported',
  MissingDependency = 'MissingDependency',
  DependenciesNotFound = 'DependenciesNotFound',
}

const statuses: Record<DependenciesErrorCode, number> = {
  [DependenciesErrorCode.InvalidArchive]: 400,
  [DependenciesErrorCode.ArchiveTooLarge]: 413,
  [DependenciesErrorCode.NativeModuleNotSupported]: 400,
  [DependenciesErrorCode.MissingDependency]: 400,
  [DependenciesErrorCode.DependenciesNotFound]: 404,
};

/** Errors of the admin API's dependencies endpoints, answered with App Services' error body. */
export class DependenciesError extends CodedError<DependenciesErrorCode> {
  constructor(code: DependenciesErrorCode, message: string) {
    super(code, message, statuses);
  }
}
