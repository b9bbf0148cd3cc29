// Function sources as the function runtime compiles them: the body of a function of (exports, module,
// require, context, console). App Services compiled sources with Babel, so a source may open with ES import
// declarations (`import { flatten } from "lodash";`) although it assigns `exports`; importsAsRequires turns
// them into the require calls Babel made of them. functionSyntaxError compiles (never runs) a source so that
// one that would not compile is refused when it is pushed or saved, instead of failing every call later.
// Pure string work and node:vm's compiler: nothing here runs user code.

import { compileFunction } from 'node:vm';

const PARAMETERS = ['exports', 'module', 'require', 'context', 'console'];

/** The syntax error of `source` ("Unexpected token '}' (line 3)"), or undefined when it compiles. */
export function functionSyntaxError(source: string): string | undefined {
  try {
    compileFunction(`${importsAsRequires(source)}\n;return exports;`, PARAMETERS, { filename: 'source.js' });
    return undefined;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const line = /source\.js:(\d+)/.exec(error.stack ?? '')?.[1];
    return `${error.message}${line ? ` (line ${line})` : ''}`;
  }
}

interface ImportDeclaration {
  /** The module specifier as written, quotes included: a valid JavaScript string literal. */
  module: string;
  defaultName?: string;
  namespaceName?: string;
  named: Array<{ imported: string; local: string }>;
  end: number;
}

const IDENTIFIER = /[A-Za-z_$][\w$]*/y;
const STRING = /(["'])(?:\\[\s\S]|(?!\1)[^\\\n])*\1/y;

/** Babel's interop: a module compiled from ES has its default export on `default`; any other module is its own default. */
const DEFAULT_INTEROP = '((m) => (m && m.__esModule ? m.default : m))';
const NAMESPACE_INTEROP = '((m) => (m && m.__esModule ? m : Object.assign({ default: m }, m)))';

/**
 * The source with the import declarations that open it (after comments and blank lines) turned into
 * require calls, each written on the first line its declaration held and followed by as many line breaks as
 * the declaration had, so every later line keeps its number. Babel hoists imports and sources put them
 * first; a declaration anywhere else, or one this reader does not follow (import attributes), ends the
 * rewriting and is left to the compiler to refuse. A source that does not open with `import` is returned as is.
 */
export function importsAsRequires(source: string): string {
  let at = skipTrivia(source, 0);
  let out = '';
  let copied = 0;
  let count = 0;
  for (let declaration = readImport(source, at); declaration; declaration = readImport(source, at)) {
    out += source.slice(copied, at) + requireCode(declaration, count++) + '\n'.repeat(lineBreaks(source, at, declaration.end));
    copied = declaration.end;
    at = skipTrivia(source, copied);
  }
  return count === 0 ? source : out + source.slice(copied);
}

function requireCode(d: ImportDeclaration, index: number): string {
  if (d.defaultName === undefined && d.namespaceName === undefined && d.named.length === 0) return `require(${d.module});`;
  const module = `__tessera_import_${index}`;
  let code = `const ${module} = require(${d.module});`;
  if (d.defaultName !== undefined) code += ` const ${d.defaultName} = ${DEFAULT_INTEROP}(${module});`;
  if (d.namespaceName !== undefined) code += ` const ${d.namespaceName} = ${NAMESPACE_INTEROP}(${module});`;
  if (d.named.length > 0) code += ` const { ${d.named.map((n) => (n.imported === n.local ? n.local : `${n.imported}: ${n.local}`)).join(', ')} } = ${module};`;
  return code;
}

function lineBreaks(source: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (source.charCodeAt(i) === 10) n++;
  return n;
}

/** Past white space and comments. */
function skipTrivia(source: string, from: number): number {
  let i = from;
  for (;;) {
    while (i < source.length && /\s/.test(source[i] ?? '')) i++;
    if (source.startsWith('//', i)) {
      const end = source.indexOf('\n', i);
      i = end === -1 ? source.length : end;
    } else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      if (end === -1) return i; // unterminated: the compiler says so
      i = end + 2;
    } else return i;
  }
}

function match(pattern: RegExp, source: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(source)?.[0];
}

/** `word` as a whole identifier at `at`. */
function keyword(source: string, at: number, word: string): boolean {
  return match(IDENTIFIER, source, at) === word;
}

/** One import declaration starting at `at`, or undefined when there is none this reader follows. */
function readImport(source: string, at: number): ImportDeclaration | undefined {
  if (!keyword(source, at, 'import')) return undefined;
  let i = skipTrivia(source, at + 'import'.length);
  const declaration: ImportDeclaration = { module: '', named: [], end: 0 };
  const bareModule = match(STRING, source, i);
  if (bareModule === undefined) {
    const first = match(IDENTIFIER, source, i);
    if (first !== undefined && !(first === 'from' && match(STRING, source, skipTrivia(source, i + first.length)) !== undefined)) {
      declaration.defaultName = first;
      i = skipTrivia(source, i + first.length);
      if (source[i] !== ',') return keyword(source, i, 'from') ? finish(source, i, declaration) : undefined;
      i = skipTrivia(source, i + 1);
    }
    if (source[i] === '*') {
      i = skipTrivia(source, i + 1);
      if (!keyword(source, i, 'as')) return undefined;
      i = skipTrivia(source, i + 2);
      const name = match(IDENTIFIER, source, i);
      if (name === undefined) return undefined;
      declaration.namespaceName = name;
      i = skipTrivia(source, i + name.length);
    } else if (source[i] === '{') {
      const after = readNamed(source, i + 1, declaration.named);
      if (after === undefined) return undefined;
      i = skipTrivia(source, after);
    } else if (declaration.defaultName === undefined) return undefined;
    return keyword(source, i, 'from') ? finish(source, i, declaration) : undefined;
  }
  declaration.module = bareModule;
  return endOfStatement(source, i + bareModule.length, declaration);
}

/** `{ a, b as c }` from just past `{`; the index past `}`. */
function readNamed(source: string, from: number, into: ImportDeclaration['named']): number | undefined {
  let i = skipTrivia(source, from);
  while (source[i] !== '}') {
    const imported = match(IDENTIFIER, source, i);
    if (imported === undefined) return undefined;
    i = skipTrivia(source, i + imported.length);
    let local = imported;
    if (keyword(source, i, 'as')) {
      i = skipTrivia(source, i + 2);
      const alias = match(IDENTIFIER, source, i);
      if (alias === undefined) return undefined;
      local = alias;
      i = skipTrivia(source, i + alias.length);
    }
    into.push({ imported, local });
    if (source[i] === ',') i = skipTrivia(source, i + 1);
    else if (source[i] !== '}') return undefined;
  }
  return i + 1;
}

/** From `from` (at `at`) to the end of the declaration. */
function finish(source: string, at: number, declaration: ImportDeclaration): ImportDeclaration | undefined {
  const i = skipTrivia(source, at + 'from'.length);
  const module = match(STRING, source, i);
  if (module === undefined) return undefined;
  declaration.module = module;
  return endOfStatement(source, i + module.length, declaration);
}

/** Past an optional semicolon; an import with attributes (`with { ... }`) is not followed. */
function endOfStatement(source: string, at: number, declaration: ImportDeclaration): ImportDeclaration | undefined {
  const next = skipTrivia(source, at);
  if (source[next] === ';') return { ...declaration, end: next + 1 };
  if (keyword(source, next, 'with') || keyword(source, next, 'assert')) return undefined;
  return { ...declaration, end: at };
}
