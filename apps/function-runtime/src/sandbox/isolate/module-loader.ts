/**
 * Runs INSIDE the sandbox isolate (bundled into the prelude; the host side of dependencies is under ../dependencies/): the CommonJS `require` of an app's uploaded
 * dependencies. The bundle is the app's node_modules as `{ path relative to node_modules: source }` (built
 * at upload by the admin API: pure JavaScript and JSON only); this resolves names as Node does (nearest
 * node_modules first, package.json `exports` with the `require` condition, `main`, index files, extensions,
 * relative paths, JSON) and evaluates each module once per sandbox, on its first require. It may use no Node
 * or host API: only the built-ins it is given and what V8 offers.
 */

interface Bundle {
  format: number;
  files: Record<string, string>;
}

interface LoadedModule {
  id: string;
  filename: string;
  loaded: boolean;
  exports: unknown;
  children: LoadedModule[];
  paths: string[];
  parent: LoadedModule | null;
  require: (request: unknown) => unknown;
}

type ModuleFactory = (exports: unknown, require: unknown, module: LoadedModule, filename: string, dirname: string, process: unknown, global: unknown) => void;

const EXTENSIONS = ['.js', '.json', '.cjs'];
const CONDITIONS = ['require', 'node', 'default'];
const ROOT = '/node_modules/';
/** Node built-ins a function cannot have (files, processes, sockets): named in the error, never looked up in node_modules. */
const WITHHELD = new Set(['fs', 'fs/promises', 'child_process', 'net', 'http', 'https', 'http2', 'os', 'process', 'vm', 'worker_threads', 'cluster', 'dgram', 'dns', 'tls', 'readline', 'repl', 'v8', 'perf_hooks', 'async_hooks', 'inspector', 'module', 'tty', 'timers', 'string_decoder']);

/** Node's error for a module that cannot be found: `Cannot find module 'x'`, code MODULE_NOT_FOUND. */
export function moduleNotFound(request: string, from?: string): Error {
  const error = new Error("Cannot find module '" + request + "'" + (from ? '\nRequire stack:\n- ' + from : '')) as Error & { code: string };
  error.code = 'MODULE_NOT_FOUND';
  return error;
}

/**
 * `require` for a function: built-ins first (`node:` prefix allowed), then the app's packages. `bundleText`
 * is parsed on the first require of a package, so a sandbox whose functions require none pays nothing.
 */
export function moduleLoader(bundleText: string | undefined, builtins: Record<string, unknown>, processObject: unknown, globalObject: unknown): (request: unknown) => unknown {
  let files: Record<string, string> | undefined;
  const cache = new Map<string, LoadedModule>();
  const has = (path: string): boolean => files !== undefined && Object.prototype.hasOwnProperty.call(files, path);

  function bundleFiles(): Record<string, string> {
    if (files) return files;
    const parsed = bundleText ? (JSON.parse(bundleText) as Bundle) : { format: 1, files: {} };
    files = parsed.files;
    return files;
  }

  function builtin(request: string): { found: boolean; value?: unknown } {
    const key = request.startsWith('node:') ? request.slice(5) : request;
    if (Object.prototype.hasOwnProperty.call(builtins, key)) return { found: true, value: builtins[key] };
    if (request.startsWith('node:') || WITHHELD.has(key)) {
      const error = moduleNotFound(request);
      error.message += ': functions may require the built-ins ' + Object.keys(builtins).join(', ') + ' and the packages uploaded with the app';
      throw error;
    }
    return { found: false };
  }

  function loadAsFile(path: string): string | undefined {
    if (has(path)) return path;
    for (const ext of EXTENSIONS) if (has(path + ext)) return path + ext;
    return undefined;
  }

  function manifestOf(dir: string): Record<string, unknown> | undefined {
    const path = dir + '/package.json';
    if (!has(path)) return undefined;
    try {
      return JSON.parse(bundleFiles()[path]) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }

  function loadAsDirectory(dir: string): string | undefined {
    const manifest = manifestOf(dir);
    const main = manifest && typeof manifest['main'] === 'string' ? manifest['main'] : undefined;
    if (main) {
      const target = normalize(dir + '/' + main);
      const found = target === null ? undefined : (loadAsFile(target) ?? loadIndex(target));
      if (found) return found;
    }
    return loadIndex(dir);
  }

  function loadIndex(dir: string): string | undefined {
    for (const ext of EXTENSIONS) if (has(dir + '/index' + ext)) return dir + '/index' + ext;
    return undefined;
  }

  /** The target of `exports` for `subpath` ('.' or './x'), under the require conditions. */
  function exportsTarget(exportsField: unknown, subpath: string): string | null | undefined {
    let map = exportsField;
    const isSubpathMap = map !== null && typeof map === 'object' && !Array.isArray(map) && Object.keys(map).some((k) => k.startsWith('.'));
    if (!isSubpathMap) map = { '.': exportsField };
    const entries = map as Record<string, unknown>;
    if (Object.prototype.hasOwnProperty.call(entries, subpath)) return conditionTarget(entries[subpath], '');
    for (const key of Object.keys(entries)) {
      const star = key.indexOf('*');
      if (star < 0) continue;
      const head = key.slice(0, star);
      const tail = key.slice(star + 1);
      if (subpath.startsWith(head) && subpath.endsWith(tail) && subpath.length >= key.length - 1) {
        return conditionTarget(entries[key], subpath.slice(head.length, subpath.length - tail.length));
      }
    }
    return undefined;
  }

  function conditionTarget(target: unknown, star: string): string | null | undefined {
    if (typeof target === 'string') return target.split('*').join(star);
    if (target === null) return null;
    if (Array.isArray(target)) {
      for (const item of target) {
        const found = conditionTarget(item, star);
        if (found) return found;
      }
      return undefined;
    }
    if (typeof target === 'object') {
      const conditions = target as Record<string, unknown>;
      for (const key of Object.keys(conditions)) if (CONDITIONS.includes(key)) {
        const found = conditionTarget(conditions[key], star);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  }

  function loadPackage(request: string, fromDir: string): string | undefined {
    const segments = request.split('/');
    const nameLength = request.startsWith('@') ? 2 : 1;
    const name = segments.slice(0, nameLength).join('/');
    const rest = segments.slice(nameLength).join('/');
    for (const base of lookupPaths(fromDir)) {
      const dir = base + name;
      const manifest = manifestOf(dir);
      if (manifest && manifest['exports'] !== undefined) {
        const target = exportsTarget(manifest['exports'], rest ? './' + rest : '.');
        if (!target) {
          const error = new Error("Package subpath '" + (rest ? './' + rest : '.') + "' is not defined by \"exports\" in " + dir + '/package.json') as Error & { code: string };
          error.code = 'ERR_PACKAGE_PATH_NOT_EXPORTED';
          throw error;
        }
        const path = normalize(dir + '/' + target);
        const found = path === null ? undefined : loadAsFile(path);
        if (found) return found;
        continue;
      }
      const path = rest ? dir + '/' + rest : dir;
      const found = loadAsFile(path) ?? loadAsDirectory(path);
      if (found) return found;
    }
    return undefined;
  }

  function resolve(request: string, fromDir: string): string | undefined {
    bundleFiles();
    if (request.startsWith('./') || request.startsWith('../') || request === '.' || request === '..' || request.startsWith('/')) {
      const target = request.startsWith('/') ? normalize(request.replace(/^\/node_modules\//, '')) : normalize(fromDir + '/' + request);
      if (target === null) return undefined;
      return loadAsFile(target) ?? loadAsDirectory(target);
    }
    return loadPackage(request, fromDir);
  }

  function load(path: string, parent: LoadedModule | null): unknown {
    const cached = cache.get(path);
    if (cached) return cached.exports;
    const filename = ROOT + path;
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    const module: LoadedModule = { id: filename, filename, loaded: false, exports: {}, children: [], paths: [], parent, require: (r: unknown) => requireFrom(r, dir, module) };
    cache.set(path, module);
    parent?.children.push(module);
    const source = bundleFiles()[path];
    try {
      if (path.endsWith('.json')) {
        module.exports = JSON.parse(source);
      } else {
        // The app's own package code, compiled and run inside the isolate as Node would run it.
        // eslint-disable-next-line @typescript-eslint/no-implied-eval
        const factory = new Function('exports', 'require', 'module', '__filename', '__dirname', 'process', 'global', source.replace(/^#!.*/, '')) as ModuleFactory;
        factory.call(module.exports, module.exports, module.require, module, filename, ROOT + dir, processObject, globalObject);
      }
    } catch (error) {
      cache.delete(path);
      throw error;
    }
    module.loaded = true;
    return module.exports;
  }

  function requireFrom(request: unknown, fromDir: string, parent: LoadedModule | null): unknown {
    if (typeof request !== 'string' || request === '') throw new TypeError('The "id" argument must be of type string and not empty');
    const asBuiltin = builtin(request);
    if (asBuiltin.found) return asBuiltin.value;
    const path = resolve(request, fromDir);
    if (path === undefined) throw moduleNotFound(request, parent?.filename);
    return load(path, parent);
  }

  return (request: unknown) => requireFrom(request, '', null);
}

/** Where Node looks for package `x` required from `dir` (relative to node_modules): nearest node_modules first. */
function lookupPaths(dir: string): string[] {
  const paths: string[] = [];
  const segments = dir ? dir.split('/') : [];
  for (let i = segments.length; i > 0; i--) {
    if (segments[i - 1] === 'node_modules') continue;
    paths.push(segments.slice(0, i).join('/') + '/node_modules/');
  }
  paths.push('');
  return paths;
}

/** `a/./b/../c` -> `a/c`, relative to node_modules; null when it climbs out of it. */
function normalize(path: string): string | null {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(segment);
  }
  return out.join('/');
}
