// The built admin console (apps/console/dist), read into memory once: the console answers only the files
// the build wrote, looked up by their exact name, so no request path ever reaches the file system.
import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export interface ConsoleFile {
  body: Buffer;
  headers: Record<string, string>;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The page runs only its own script and style and talks only to this origin (the admin API); it may not be
 * framed, and sends no referrer (its URL holds app and user ids).
 */
export const consoleSecurityHeaders: Record<string, string> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** Where `npm run build` writes the console, from this file in src/ or dist/ of apps/admin-api. */
export const defaultConsoleDirectory = join(__dirname, '..', '..', '..', 'console', 'dist');

export class ConsoleFiles {
  private files: Map<string, ConsoleFile> | undefined;
  private builtAt: number | undefined;

  constructor(private readonly directory: string = defaultConsoleDirectory) {}

  /** The file at `name` (`index.html`, `assets/console-<hash>.js`), or undefined; an unbuilt console has none. */
  get(name: string): ConsoleFile | undefined {
    // A build while the server runs writes a new page naming new assets: each request for the page checks
    // whether it changed (one stat), and reads the directory again when it did.
    if (name === 'index.html' && this.files && this.builtAt !== pageTime(this.directory)) this.files = undefined;
    if (!this.files) {
      this.builtAt = pageTime(this.directory);
      this.files = this.load();
    }
    return this.files.get(name);
  }

  private load(): Map<string, ConsoleFile> {
    const files = new Map<string, ConsoleFile>();
    for (const path of listFiles(this.directory)) {
      const name = relative(this.directory, path).split(sep).join('/');
      const extension = /\.[a-z0-9]+$/i.exec(name)?.[0]?.toLowerCase() ?? '';
      const type = contentTypes[extension];
      if (!type) continue;
      // Asset names carry a hash of their content, so they never change; the page itself is checked each time.
      const cache = name.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      files.set(name, { body: readFileSync(path), headers: { 'content-type': type, 'cache-control': cache, ...consoleSecurityHeaders } });
    }
    return files;
  }
}

/** When the page was written, or undefined when the console is not built. */
function pageTime(directory: string): number | undefined {
  try {
    return statSync(join(directory, 'index.html')).mtimeMs;
  } catch {
    return undefined;
  }
}

function listFiles(directory: string): string[] {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(directory, name);
    // Only what the build wrote: a symbolic link (to anywhere) is not followed.
    const stat = lstatSync(path);
    return stat.isDirectory() ? listFiles(path) : stat.isFile() ? [path] : [];
  });
}
