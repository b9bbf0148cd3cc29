// Where each model object came from. Readers of the older layouts split or merge files (a legacy
// collection rule is three files; an export keeps all functions in one config.json), so a violation found
// on the model must be mapped back to the file and JSON path the user actually wrote.

import { jsonPath } from './json';

export interface Origin {
  file: string;
  /** JSON path of the object inside `file` ("" when the object is the whole file). */
  prefix: string;
  /** Members of the object that live in another file: model path prefix -> file and prefix there. */
  redirects?: Array<{ from: string; file: string; prefix: string }>;
  /** File that holds the object's JavaScript source, for functions and webhooks. */
  sourceFile?: string;
}

export interface Location {
  file: string;
  path: string;
}

/** Maps a model object and a JSON path inside it to the file and path the user wrote, if known. */
export type FileLocator = (resource: object, path: string) => Location | undefined;

export class OriginMap {
  private readonly origins = new WeakMap<object, Origin>();

  set(resource: object, origin: Origin): void {
    this.origins.set(resource, origin);
  }

  get(resource: object): Origin | undefined {
    return this.origins.get(resource);
  }

  readonly locate: FileLocator = (resource, path) => {
    const origin = this.origins.get(resource);
    if (!origin) return undefined;
    if (path === '#source') return origin.sourceFile ? { file: origin.sourceFile, path: '' } : undefined;
    for (const r of origin.redirects ?? []) {
      if (path === r.from || path.startsWith(`${r.from}.`) || path.startsWith(`${r.from}[`)) {
        const rest = path.slice(r.from.length).replace(/^\./, '');
        return { file: r.file, path: joinPath(r.prefix, rest) };
      }
    }
    return { file: origin.file, path: joinPath(origin.prefix, path) };
  };
}

/** Joins two JSON paths: ("a", "b[0]") -> "a.b[0]", ("[2]", "name") -> "[2].name". */
export function joinPath(prefix: string, rest: string): string {
  if (prefix === '') return rest;
  if (rest === '') return prefix;
  return rest.startsWith('[') ? `${prefix}${rest}` : `${prefix}.${rest}`;
}

export { jsonPath };
