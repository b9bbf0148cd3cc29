/**
 * A small structural reader for the Dockerfile and .dockerignore, so a test can check what an image
 * build would do where no container engine runs. It understands what our Dockerfile uses (line
 * continuations, comments, parser directives, ARG defaults in FROM, exec and shell forms), not the whole
 * Dockerfile grammar. Test-only code.
 */

export interface Instruction {
  keyword: string;
  /** The text after the keyword, continuation lines joined. */
  args: string;
  /** `--name=value` flags at the start of args (COPY --from, RUN --mount, ...). */
  flags: Record<string, string>;
  /** args without the flags. */
  body: string;
}

export interface Stage {
  name: string | undefined;
  image: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    // Comments (parser directives included) are skipped, also between continued lines, as Docker does.
    if (/^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const joined = (pending + line).trim();
    pending = '';
    if (joined) logical.push(joined);
  }
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^(\w+)\s*(.*)$/s.exec(line);
    if (!match) throw new Error(`cannot read Dockerfile line: ${line}`);
    const keyword = match[1].toUpperCase();
    const args = match[2].trim();
    const flags: Record<string, string> = {};
    let body = args;
    for (let flag = /^--([\w-]+)(?:=(\S+))?\s*/.exec(body); flag; flag = /^--([\w-]+)(?:=(\S+))?\s*/.exec(body)) {
      flags[flag[1]] = flag[2] ?? 'true';
      body = body.slice(flag[0].length);
    }
    const instruction: Instruction = { keyword, args, flags, body };
    if (keyword === 'FROM') {
      const [image, as, name] = body.split(/\s+/);
      const resolved = image.replace(/\$\{?(\w+)\}?/g, (_, arg: string) => globalArgs[arg] ?? '');
      stages.push({ name: as?.toUpperCase() === 'AS' ? name : undefined, image: resolved, instructions: [] });
    } else if (stages.length === 0) {
      if (keyword !== 'ARG') throw new Error(`only ARG may precede the first FROM, found ${keyword}`);
      const [name, value] = body.split('=', 2);
      globalArgs[name] = value ?? '';
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { args: globalArgs, stages };
}

/** The JSON array of an exec-form CMD or ENTRYPOINT; throws for the shell form. */
export function execForm(instruction: Instruction): string[] {
  const parsed: unknown = JSON.parse(instruction.body);
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) {
    throw new Error(`${instruction.keyword} is not in exec form: ${instruction.body}`);
  }
  return parsed;
}

/** `KEY=value` pairs of an ENV instruction (the modern form only). */
export function envPairs(instruction: Instruction): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const match of instruction.body.matchAll(/(\w+)=("[^"]*"|\S*)/g)) pairs[match[1]] = match[2].replace(/^"|"$/g, '');
  return pairs;
}

/**
 * Whether .dockerignore patterns leave `path` (relative to the context root) out of the build context.
 * A pattern excludes what it matches and everything below it; `!pattern` takes a path back; later
 * patterns win. `**` spans directories, `*` and `?` stay within one.
 */
export function isIgnored(patterns: readonly string[], path: string): boolean {
  let ignored = false;
  for (const raw of patterns) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
    const source = pattern
      .split(/(\*\*\/?|\*|\?)/)
      .map((part) => {
        if (part === '**/' || part === '**') return '(?:.*/)?';
        if (part === '*') return '[^/]*';
        if (part === '?') return '[^/]';
        return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      })
      .join('');
    if (new RegExp(`^${source}(?:/.*)?$`).test(path)) ignored = !negated;
  }
  return ignored;
}
