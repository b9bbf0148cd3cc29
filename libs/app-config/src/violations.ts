// Configuration violations and the error that carries them. A violation names the file, the JSON path
// inside it and a stable rule id, so callers (admin API, CLI) can show every problem at once.

import { TesseraError } from '@tessera/domain';

export interface ConfigViolation {
  /** POSIX path relative to the app directory, e.g. "services/mongodb-atlas/config.json". */
  file: string;
  /** JSON path inside that file, e.g. "roles[0].name" or "config.clusterName"; "" for the whole file. */
  path: string;
  /** Stable rule id, e.g. "service.name.charset". */
  rule: string;
  message: string;
}

export const AppConfigErrorCode = {
  InvalidConfiguration: 'InvalidConfiguration',
} as const;
export type AppConfigErrorCode = (typeof AppConfigErrorCode)[keyof typeof AppConfigErrorCode];

export class AppConfigError extends TesseraError {
  readonly errorCode: AppConfigErrorCode = AppConfigErrorCode.InvalidConfiguration;
  readonly httpStatus = 400;

  constructor(readonly violations: readonly ConfigViolation[]) {
    super(formatViolations(violations));
  }
}

export function formatViolation(v: ConfigViolation): string {
  const where = v.path === '' ? v.file : `${v.file} at ${v.path}`;
  return `${where}: ${v.message} (${v.rule})`;
}

export function formatViolations(violations: readonly ConfigViolation[]): string {
  const n = violations.length;
  const head = `invalid app configuration: ${n} violation${n === 1 ? '' : 's'}`;
  return n === 0 ? head : `${head}\n${violations.map((v) => `  - ${formatViolation(v)}`).join('\n')}`;
}

/** Stable order for reports: by file, then path, then rule. */
export function sortViolations(violations: ConfigViolation[]): ConfigViolation[] {
  const key = (v: ConfigViolation) => `${v.file}\u0000${v.path}\u0000${v.rule}\u0000${v.message}`;
  return [...violations].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
