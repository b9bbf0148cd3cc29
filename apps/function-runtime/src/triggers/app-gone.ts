import { AppNotDeployedError, AppRegistryError, AppRegistryErrorCode } from '@tessera/platform';

/** True when looking the app up failed because it is gone (not deployed, removed), not for a passing failure. */
export function isAppGone(error: unknown): boolean {
  return error instanceof AppNotDeployedError || (error instanceof AppRegistryError && error.errorCode === AppRegistryErrorCode.AppNotFound);
}
