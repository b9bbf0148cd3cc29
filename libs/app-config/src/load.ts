// Read plus validate in one call: what the admin API import and the standalone host need.

import { type AppConfig, type AppFiles, type AppLayout } from './model';
import { readAppFiles } from './read/read-app';
import { validateApp, type ValidateOptions } from './validate';
import { AppConfigError, sortViolations, type ConfigViolation } from './violations';

export interface CheckedApp {
  app: AppConfig;
  layout: AppLayout;
  /** Read problems and validation violations together, sorted by file and path. */
  violations: ConfigViolation[];
  /** What was accepted as App Services accepts it but is worth telling (a function given the default config, a role flexible sync will deny). */
  warnings: ConfigViolation[];
}

export type LoadOptions = Omit<ValidateOptions, 'fileOf' | 'warnings'>;

export function loadApp(files: AppFiles, options: LoadOptions = {}): CheckedApp {
  const loaded = readAppFiles(files);
  const validationWarnings: ConfigViolation[] = [];
  const found = [...loaded.violations, ...validateApp(loaded.app, { ...options, fileOf: loaded.fileOf, warnings: validationWarnings })];
  const seen = new Set<string>();
  const violations = found.filter((v) => {
    const key = `${v.file}\u0000${v.path}\u0000${v.rule}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { app: loaded.app, layout: loaded.layout, violations: sortViolations(violations), warnings: sortViolations([...loaded.warnings, ...validationWarnings]) };
}

/** Reads and validates; throws AppConfigError listing every violation when there is any. */
export function loadValidApp(files: AppFiles, options: LoadOptions = {}): { app: AppConfig; layout: AppLayout } {
  const { app, layout, violations } = loadApp(files, options);
  if (violations.length > 0) throw new AppConfigError(violations);
  return { app, layout };
}
