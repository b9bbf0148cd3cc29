// Entry point of reading: detect the layout of a file map, read it into the model, normalize it.
// Read problems (malformed JSON, a file of the wrong shape, a missing config.json) are returned as
// violations next to whatever could be read; nothing here throws for bad input.

import { type AppConfig, type AppFiles, type AppLayout } from '../model';
import { normalizeApp } from '../normalize';
import { type FileLocator } from '../origins';
import { type ConfigViolation } from '../violations';
import { ReadContext } from './context';
import { expandEnvironment, selectEnvironment } from './environment';
import { currentSettingsFile, readAppServicesLayout, readCurrentLayout, readExportLayout, readLegacyLayout } from './layouts';

export interface LoadedApp {
  app: AppConfig;
  layout: AppLayout;
  /** Problems met while reading (syntax, shapes, missing files); run validateApp for the rest. */
  violations: ConfigViolation[];
  /** Accepted as App Services accepts it, worth telling the user (a function given the default config). */
  warnings: ConfigViolation[];
  /** Maps a model object back to the file it was read from (pass it to validateApp). */
  fileOf: FileLocator;
}

const ROOT_MARKERS = ['root_config.json', 'realm_config.json', 'config.json', 'stitch.json'];

/** The file holding an app's own settings in each layout. */
function settingsFile(layout: AppLayout, files: AppFiles): string {
  switch (layout) {
    case 'current':
    case 'legacy':
      return currentSettingsFile(files);
    case 'export-20210101':
      return 'realm_config.json';
    case 'appservices':
      return 'root_config.json';
  }
}

/** Which layout a file map is in. */
export function detectLayout(files: AppFiles): AppLayout {
  if (files.has('root_config.json')) return 'appservices';
  if (files.has('realm_config.json')) return 'export-20210101';
  for (const path of files.keys()) if (path.startsWith('data_sources/')) return 'legacy';
  return 'current';
}

/**
 * Zips often wrap the app in one top-level directory (myapp/realm_config.json). When no root marker is at
 * the top but every file sits under one directory that has one, that directory becomes the root.
 */
export function stripCommonRoot(files: AppFiles): AppFiles {
  if (ROOT_MARKERS.some((m) => files.has(m))) return files;
  const firsts = new Set([...files.keys()].map((p) => p.split('/')[0]));
  if (firsts.size !== 1) return files;
  const [root] = [...firsts];
  if (!ROOT_MARKERS.some((m) => files.has(`${root}/${m}`))) return files;
  const out: AppFiles = new Map();
  for (const [p, b] of files) out.set(p.slice(root.length + 1), b);
  return out;
}

function normalizePaths(files: AppFiles): AppFiles {
  const out: AppFiles = new Map();
  for (const [p, b] of files) {
    const clean = p.replace(/\\/g, '/').replace(/^\.\//, '').replace(/^\/+/, '');
    if (clean === '' || clean.endsWith('/')) continue; // directory entries of a zip
    if (clean.split('/').some((seg) => seg === '..' || seg === '.DS_Store')) continue;
    // The App Services CLI's record of the cloud app it pulled from: meaningless here.
    if (clean.startsWith('.mdb/')) continue;
    out.set(clean, b);
  }
  return stripCommonRoot(out);
}

/** Files of the App Services export layouts that the current layout reads from elsewhere, and where. */
const EXPORT_ONLY_FILES: ReadonlyArray<[string, string]> = [
  ['auth/providers.json', 'auth_providers/<name>.json'],
  ['auth/custom_user_data.json', "config.json's custom_user_data_config"],
  ['functions/config.json', 'functions/<name>/config.json'],
];

/**
 * An app in the current layout (config.json) holding an export's files would lose what they say without a
 * word (they are carried as files, not read): each is named in a warning, with where this layout has it.
 */
function warnExportFiles(leftovers: AppFiles, ctx: ReadContext): void {
  for (const [file, instead] of EXPORT_ONLY_FILES) {
    if (leftovers.has(file)) ctx.warn(file, '', 'app.layout.export_file', `a file of an App Services export (realm_config.json or root_config.json at the root); this app is in the config.json layout, which reads ${instead} instead, so this file is not read`);
  }
}

/** Reads an app from a file map in any supported layout into the current-layout model. */
export function readAppFiles(input: AppFiles): LoadedApp {
  const files = normalizePaths(input);
  const layout = detectLayout(files);
  const ctx = new ReadContext(files);
  const { environment, violations } = selectEnvironment(files, settingsFile(layout, files));
  ctx.violations.push(...violations);
  ctx.expand = (value, path) => expandEnvironment(value, environment, path, (v) => ctx.violations.push(v));
  let app: AppConfig;
  switch (layout) {
    case 'current':
      app = readCurrentLayout(ctx);
      break;
    case 'legacy':
      app = readLegacyLayout(ctx);
      break;
    case 'export-20210101':
      app = readExportLayout(ctx);
      break;
    case 'appservices':
      app = readAppServicesLayout(ctx);
      break;
  }
  app.extraFiles = ctx.leftovers();
  if (layout === 'current') warnExportFiles(app.extraFiles, ctx);
  normalizeApp(app);
  return { app, layout, violations: ctx.violations, warnings: ctx.warnings, fileOf: ctx.origins.locate };
}
