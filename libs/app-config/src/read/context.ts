// Shared machinery of the readers: decoding files, reporting read errors as violations (never throwing),
// and remembering which files were understood so the rest can be kept verbatim.

import { bytesToText, isPlainObject, parseJson, type JsonObject } from '../json';
import { type AppFiles } from '../model';
import { OriginMap } from '../origins';
import { type ConfigViolation } from '../violations';

export class ReadContext {
  readonly violations: ConfigViolation[] = [];
  /** What was accepted as App Services accepts it but deserves the user's attention (a defaulted function config). */
  readonly warnings: ConfigViolation[] = [];
  readonly origins = new OriginMap();
  /** Applied to every parsed JSON file: resolves `%(%%environment...)` templates. */
  expand?: (value: unknown, path: string) => unknown;
  private readonly consumed = new Set<string>();
  private readonly renamed = new Map<string, string>();

  constructor(readonly files: AppFiles) {}

  has(path: string): boolean {
    return this.files.has(path);
  }

  /** Paths under a directory prefix ("functions/"), sorted. */
  under(prefix: string): string[] {
    return [...this.files.keys()].filter((p) => p.startsWith(prefix)).sort();
  }

  text(path: string): string | undefined {
    const bytes = this.files.get(path);
    if (bytes === undefined) return undefined;
    this.consumed.add(path);
    return bytesToText(bytes);
  }

  bytes(path: string): Uint8Array | undefined {
    const bytes = this.files.get(path);
    if (bytes !== undefined) this.consumed.add(path);
    return bytes;
  }

  report(file: string, path: string, rule: string, message: string): void {
    this.violations.push({ file, path, rule, message });
  }

  warn(file: string, path: string, rule: string, message: string): void {
    this.warnings.push({ file, path, rule, message });
  }

  /** Parses a JSON file; a syntax error becomes a violation and the result is undefined. */
  json(path: string): unknown {
    const text = this.text(path);
    if (text === undefined) return undefined;
    const parsed = parseJson(text);
    if (!parsed.ok) {
      this.report(path, '', 'json.syntax', parsed.message);
      return undefined;
    }
    return this.expand ? this.expand(parsed.value, path) : parsed.value;
  }

  /**
   * Parses a JSON file that is kept verbatim (not consumed): a syntax error is reported, the result is
   * undefined when the file is absent or broken. No template expansion: the file is not rewritten.
   */
  peek(path: string): unknown {
    const bytes = this.files.get(path);
    if (bytes === undefined) return undefined;
    const parsed = parseJson(bytesToText(bytes));
    if (!parsed.ok) {
      this.report(path, '', 'json.syntax', parsed.message);
      return undefined;
    }
    return parsed.value;
  }

  object(path: string): JsonObject | undefined {
    const value = this.json(path);
    if (value === undefined) return undefined;
    if (!isPlainObject(value)) {
      this.report(path, '', 'file.shape', `expected a JSON object but found ${kindOf(value)}`);
      return undefined;
    }
    return value;
  }

  array(path: string): unknown[] | undefined {
    const value = this.json(path);
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.report(path, '', 'file.shape', `expected a JSON array but found ${kindOf(value)}`);
      return undefined;
    }
    return value as unknown[];
  }

  /** Files no reader consumed, to be kept verbatim. */
  leftovers(): AppFiles {
    const out: AppFiles = new Map();
    const kept = [...this.files].filter(([path]) => !this.consumed.has(path)).map(([path, bytes]): [string, Uint8Array] => [this.renamed.get(path) ?? path, bytes]);
    for (const [path, bytes] of kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out.set(path, bytes);
    return out;
  }

  /** Keeps an unconsumed file under another path (where the model's writers look for it). */
  rename(from: string, to: string): void {
    this.renamed.set(from, to);
  }

  consume(path: string): void {
    this.consumed.add(path);
  }
}

export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** "a/b/c.json" -> "c" */
export function baseName(path: string, ext = '.json'): string {
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last.endsWith(ext) ? last.slice(0, -ext.length) : last;
}

/** Child paths directly inside a directory with the given extension: "triggers/" + ".json". */
export function directChildren(ctx: ReadContext, dir: string, ext: string): string[] {
  return ctx.under(dir).filter((p) => !p.slice(dir.length).includes('/') && p.endsWith(ext));
}

/** Names of the directories directly under a directory. */
export function childDirectories(ctx: ReadContext, dir: string): string[] {
  const names = new Set<string>();
  for (const p of ctx.under(dir)) {
    const rest = p.slice(dir.length);
    const slash = rest.indexOf('/');
    if (slash > 0) names.add(rest.slice(0, slash));
  }
  return [...names].sort();
}
