// Compiles (never runs) a function's source the way the function runtime will: as the body of a function
// of (exports, module, require, context, console). A source that does not compile is refused when it is
// pushed or saved, instead of failing every call later.

import { compileFunction } from 'node:vm';

const PARAMETERS = ['exports', 'module', 'require', 'context', 'console'];

/** The syntax error of `source` ("Unexpected token '}' (line 3)"), or undefined when it compiles. */
export function functionSyntaxError(source: string): string | undefined {
  try {
    compileFunction(`${source}\n;return exports;`, PARAMETERS, { filename: 'source.js' });
    return undefined;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const line = /source\.js:(\d+)/.exec(error.stack ?? '')?.[1];
    return `${error.message}${line ? ` (line ${line})` : ''}`;
  }
}
