/**
 * Turns the files of an uploaded `node_modules` (and optional `package.json`) into what the sandbox loads:
 * the dependency tree resolved as Node resolves it, each package checked to be pure JavaScript, and only the
 * files a CommonJS `require` can load (`.js`, `.cjs`, `.json`) kept. Pure: no I/O, no evaluation of the
 * uploaded code (the sandbox's module loader evaluates it, inside the isolate).
 */
import type { DependencyEntry } from '@tessera/platform';
import type { ArchiveFiles } from './dependency-archive';
import { DependenciesError, DependenciesErrorCode } from './dependencies.exception';

/** The bundle the function runtime's module loader reads: paths relative to node_modules -> source text. */
export interface DependencyBundle {
  format: 1;
  files: Record<string, string>;
}

interface PackageInfo {
  /** Directory relative to node_modules (`a`, `@s/b`, `a/node_modules/c`). */
  dir: string;
  name: string;
  version: string;
  manifest: Record<string, unknown>;
}

const LOADABLE = /\.(?:js|cjs|json)$/;

export function buildDependencyBundle(archive: ArchiveFiles): { bundle: DependencyBundle; list: DependencyEntry[] } {
  const { files, rootManifest } = relativeToNodeModules(archive);
  const packages = findPackages(files);
  const roots = rootManifest ? namedRoots(rootManifest, packages) : [...packages.values()].filter((pkg) => !pkg.dir.includes('/node_modules/'));
  const included = closure(roots, packages);
  for (const pkg of included) refuseNative(pkg, files);
  const bundled: Record<string, string> = {};
  const decoder = new TextDecoder();
  for (const [path, bytes] of files) {
    if (!LOADABLE.test(path)) continue;
    const owner = ownerOf(path, packages);
    if (owner && included.has(owner)) bundled[path] = decoder.decode(bytes);
  }
  const list = roots.map((pkg) => ({ name: pkg.name, version: pkg.version })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { bundle: { format: 1, files: bundled }, list };
}

/** Strips the archive's `node_modules/` (or `functions/node_modules/`) prefix; takes `package.json` beside it. */
function relativeToNodeModules(archive: ArchiveFiles): { files: ArchiveFiles; rootManifest?: Record<string, unknown> } {
  const files: ArchiveFiles = new Map();
  let rootManifest: Record<string, unknown> | undefined;
  for (const [path, bytes] of archive) {
    const stripped = /^(?:functions\/)?node_modules\/(.+)$/.exec(path);
    if (stripped?.[1]) files.set(stripped[1], bytes);
    else if (path === 'package.json' || path === 'functions/package.json') rootManifest = parseManifest(bytes, 'package.json');
  }
  if (files.size === 0 && !rootManifest) throw new DependenciesError(DependenciesErrorCode.InvalidArchive, 'the dependencies archive holds no node_modules directory');
  if (files.size === 0 && rootManifest && Object.keys(dependencyNames(rootManifest)).length > 0) {
    throw new DependenciesError(
      DependenciesErrorCode.MissingDependency,
      'package.json was uploaded without node_modules: Tessera does not install packages from the npm registry; run `npm install` in functions/ and push with --include-node-modules (or --include-package-json, which sends both)',
    );
  }
  return { files, ...(rootManifest ? { rootManifest } : {}) };
}

function findPackages(files: ArchiveFiles): Map<string, PackageInfo> {
  const packages = new Map<string, PackageInfo>();
  for (const [path, bytes] of files) {
    const match = /^((?:.+\/node_modules\/)?(?:@[^/]+\/)?[^/@][^/]*)\/package\.json$/.exec(path);
    if (!match?.[1]) continue;
    const dir = match[1];
    if (!isPackageDir(dir)) continue;
    const manifest = parseManifest(bytes, path);
    const name = typeof manifest['name'] === 'string' ? manifest['name'] : dir.replace(/^.*\/node_modules\//, '');
    packages.set(dir, { dir, name, version: typeof manifest['version'] === 'string' ? manifest['version'] : '', manifest });
  }
  return packages;
}

/** `a`, `@s/a`, `a/node_modules/b`: a directory where Node looks for a package (not `a/lib`, whose package.json is a nested marker). */
function isPackageDir(dir: string): boolean {
  const parts = dir.split('/node_modules/');
  return parts.every((part) => /^(?:@[^/]+\/)?[^/]+$/.test(part));
}

function parseManifest(bytes: Uint8Array, path: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new DependenciesError(DependenciesErrorCode.InvalidArchive, `${path} is not a JSON object`);
}

function dependencyNames(manifest: Record<string, unknown>, withOptional = true): Record<string, boolean> {
  const names: Record<string, boolean> = {};
  const add = (field: string, optional: boolean): void => {
    const deps = manifest[field];
    if (deps && typeof deps === 'object') for (const name of Object.keys(deps)) names[name] = names[name] === false ? false : optional;
  };
  add('dependencies', false);
  if (withOptional) {
    add('optionalDependencies', true);
    add('peerDependencies', true);
  }
  return names;
}

function namedRoots(manifest: Record<string, unknown>, packages: Map<string, PackageInfo>): PackageInfo[] {
  const roots: PackageInfo[] = [];
  for (const [name, optional] of Object.entries(dependencyNames(manifest))) {
    const found = packages.get(name);
    if (found) roots.push(found);
    else if (!optional) throw new DependenciesError(DependenciesErrorCode.MissingDependency, `package.json depends on '${name}', which is not in node_modules: run \`npm install\` in functions/`);
  }
  return roots;
}

/** Every package reachable from the roots through dependencies, found as Node finds them (nearest node_modules first). */
function closure(roots: PackageInfo[], packages: Map<string, PackageInfo>): Set<PackageInfo> {
  const seen = new Set<PackageInfo>();
  const stack = [...roots];
  while (stack.length > 0) {
    const pkg = stack.pop() as PackageInfo;
    if (seen.has(pkg)) continue;
    seen.add(pkg);
    for (const [name, optional] of Object.entries(dependencyNames(pkg.manifest))) {
      const found = lookup(pkg.dir, name, packages);
      if (found) stack.push(found);
      else if (!optional) throw new DependenciesError(DependenciesErrorCode.MissingDependency, `package '${pkg.name}' depends on '${name}', which is not in node_modules`);
    }
  }
  return seen;
}

function lookup(fromDir: string, name: string, packages: Map<string, PackageInfo>): PackageInfo | undefined {
  let dir = fromDir;
  for (;;) {
    const found = packages.get(`${dir}/node_modules/${name}`);
    if (found) return found;
    const at = dir.lastIndexOf('/node_modules/');
    if (at < 0) return packages.get(name);
    dir = dir.slice(0, at);
  }
}

/** The package whose directory holds the file: the longest package directory that prefixes it. */
function ownerOf(path: string, packages: Map<string, PackageInfo>): PackageInfo | undefined {
  const parts = path.split('/node_modules/');
  for (let i = parts.length; i > 0; i--) {
    const head = parts.slice(0, i - 1).join('/node_modules/');
    const last = parts[i - 1] ?? '';
    const segs = last.split('/');
    const nameLength = segs[0]?.startsWith('@') ? 2 : 1;
    if (segs.length <= nameLength) continue;
    const dir = (head ? `${head}/node_modules/` : '') + segs.slice(0, nameLength).join('/');
    const found = packages.get(dir);
    if (found) return found;
  }
  return undefined;
}

/** A package with compiled code (a `.node` addon, a `binding.gyp`, `gypfile: true`) cannot run in the sandbox. */
function refuseNative(pkg: PackageInfo, files: ArchiveFiles): void {
  const reason = pkg.manifest['gypfile'] === true ? 'its package.json sets gypfile' : nativeFile(pkg, files);
  if (!reason) return;
  throw new DependenciesError(
    DependenciesErrorCode.NativeModuleNotSupported,
    `package '${pkg.name}' is a native module (${reason}): functions can require only pure JavaScript packages`,
  );
}

function nativeFile(pkg: PackageInfo, files: ArchiveFiles): string | undefined {
  const prefix = `${pkg.dir}/`;
  for (const path of files.keys()) {
    if (!path.startsWith(prefix) || path.slice(prefix.length).includes('node_modules/')) continue;
    const rest = path.slice(prefix.length);
    if (rest === 'binding.gyp') return 'binding.gyp';
    if (rest.endsWith('.node')) return `compiled addon ${rest}`;
  }
  return undefined;
}
