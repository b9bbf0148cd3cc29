// Environment values (environments/<name>.json) and App Services' replacement operator: a string in a
// configuration file holding `%(%%environment.values.<name>)` or `%(%%environment.tag)` is a template,
// resolved on import against the environment named in the app's root settings file. The app keeps the
// resolved files (App Services does the same: a templated app is a copy with the values filled in).
// Only JSON configuration is expanded, never function sources; rule expressions such as
// `{"%%environment.values.x": ...}` are not templates and are left to the rules engine.

import { bytesToText, isPlainObject, jsonPath, parseJson } from '../json';
import { type AppConfig, type AppFiles } from '../model';
import { type ConfigViolation } from '../violations';

/** The environment an app evaluates `%%environment` against. */
export interface AppEnvironment {
  /** "" when none is selected. */
  tag: string;
  values: Record<string, unknown>;
}

/** The environment names App Services accepts ("" selects none). */
export const ENVIRONMENT_NAMES: readonly string[] = ['', 'development', 'testing', 'qa', 'production'];

/** The file of an environment; "" reads no-environment.json (App Services' name; no_environment.json also works). */
export function environmentFiles(tag: string): string[] {
  return tag === '' ? ['environments/no-environment.json', 'environments/no_environment.json'] : [`environments/${tag}.json`];
}

function peekJson(files: AppFiles, path: string): unknown {
  const bytes = files.get(path);
  if (bytes === undefined) return undefined;
  const parsed = parseJson(bytesToText(bytes));
  return parsed.ok ? parsed.value : undefined;
}

/**
 * What App Services' export wrote for an app with no environment selected in 2020 (realm-cli's import and
 * export tests against the service expected it): read as no environment, as `""` is.
 */
const NO_ENVIRONMENT = 'none';

/**
 * Reads the selected environment without consuming any file (environments/ files are kept verbatim): the
 * `environment` member of the root settings file and the `values` of the matching environments/ file. A
 * broken settings file is left to the readers; a broken selected environment file is reported here.
 */
export function selectEnvironment(files: AppFiles, settingsFile: string): { environment: AppEnvironment; violations: ConfigViolation[] } {
  const violations: ConfigViolation[] = [];
  const settings = peekJson(files, settingsFile);
  const selected = isPlainObject(settings) ? settings.environment : undefined;
  let tag = '';
  if (typeof selected === 'string') {
    if (ENVIRONMENT_NAMES.includes(selected)) tag = selected;
    else if (selected !== NO_ENVIRONMENT) {
      violations.push({
        file: settingsFile,
        path: 'environment',
        rule: 'app.environment.unknown',
        message: `environment must be one of ${ENVIRONMENT_NAMES.map((n) => JSON.stringify(n)).join(', ')}`,
      });
    }
  }
  const path = environmentFiles(tag).find((p) => files.has(p));
  let values: Record<string, unknown> = {};
  if (path !== undefined) {
    const parsed = parseJson(bytesToText(files.get(path) as Uint8Array));
    if (!parsed.ok) violations.push({ file: path, path: '', rule: 'json.syntax', message: parsed.message });
    else if (!isPlainObject(parsed.value) || (parsed.value.values !== undefined && !isPlainObject(parsed.value.values))) {
      violations.push({ file: path, path: isPlainObject(parsed.value) ? 'values' : '', rule: 'file.shape', message: 'an environment file is an object whose values member maps value names to values' });
    } else if (isPlainObject(parsed.value.values)) values = { ...parsed.value.values };
  }
  return { environment: { tag, values }, violations };
}

/** The environment of a model (settings.environment and the kept environments/ files): what functions and rules see. */
export function appEnvironment(app: Pick<AppConfig, 'settings' | 'extraFiles'>): AppEnvironment {
  const tag = typeof app.settings.environment === 'string' && ENVIRONMENT_NAMES.includes(app.settings.environment) ? app.settings.environment : '';
  const path = environmentFiles(tag).find((p) => app.extraFiles.has(p));
  const doc = path === undefined ? undefined : peekJson(app.extraFiles, path);
  return { tag, values: isPlainObject(doc) && isPlainObject(doc.values) ? { ...doc.values } : {} };
}

const TEMPLATE = /%\(\s*%%environment\.(tag|values\.([^\s)]+))\s*\)/g;

function lookup(environment: AppEnvironment, expansion: string, name: string | undefined): { found: boolean; value?: unknown } {
  if (expansion === 'tag') return { found: true, value: environment.tag };
  let value: unknown = environment.values;
  for (const key of (name ?? '').split('.')) {
    if (!isPlainObject(value) || !Object.prototype.hasOwnProperty.call(value, key)) return { found: false };
    value = value[key];
  }
  return { found: true, value };
}

/**
 * Resolves every template string in a parsed JSON document. A string that is one expansion becomes the
 * value itself; an expansion inside longer text is replaced by the value's text. An expansion naming a
 * value the environment does not define is reported and left as written.
 */
export function expandEnvironment(value: unknown, environment: AppEnvironment, file: string, report: (v: ConfigViolation) => void): unknown {
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v === 'string') return v.includes('%(') ? expandString(v, path) : v;
    if (Array.isArray(v)) return v.map((item, i) => walk(item, jsonPath(path, i)));
    if (isPlainObject(v)) {
      for (const [k, item] of Object.entries(v)) v[k] = walk(item, jsonPath(path, k));
    }
    return v;
  };
  const expandString = (text: string, path: string): unknown => {
    const matches = [...text.matchAll(TEMPLATE)];
    if (matches.length === 0) return text;
    const missing = (expansion: string) => {
      const envFile = environmentFiles(environment.tag)[0];
      report({
        file,
        path,
        rule: 'environment.value.missing',
        message: `${expansion} names a value that ${envFile} does not define (the app's environment is ${JSON.stringify(environment.tag)})`,
      });
    };
    if (matches.length === 1 && matches[0][0] === text) {
      const found = lookup(environment, matches[0][1], matches[0][2]);
      if (!found.found) missing(text);
      return found.found ? found.value : text;
    }
    return text.replace(TEMPLATE, (whole: string, expansion: string, name: string | undefined) => {
      const found = lookup(environment, expansion, name);
      if (!found.found) {
        missing(whole);
        return whole;
      }
      return typeof found.value === 'string' ? found.value : JSON.stringify(found.value);
    });
  };
  return walk(value, '');
}
