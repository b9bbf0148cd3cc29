import { CliError, ExitCode } from './cli-error';

/**
 * realm-cli's multi-select prompts (survey's MultiSelect), as a numbered list: the commands that act on
 * several targets ask which ones when none were named. Without a terminal realm-cli's prompt read the end of
 * its input and the command failed with "EOF", acting on nothing (its -y does not answer a selection); Tessera
 * does the same, naming the flag that would have said it. Pure parsing here; Output asks.
 */

/**
 * The options an answer picks: numbers from 1, ranges (`2-4`), separated by commas or spaces, or `all`;
 * a blank answer picks none. Undefined when the answer is not such a list (the question is asked again).
 */
export function parseSelection(answer: string, count: number): number[] | undefined {
  const text = answer.trim().toLowerCase();
  if (text === '') return [];
  if (text === 'all' || text === '*') return Array.from({ length: count }, (_, index) => index);
  const picked = new Set<number>();
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!range) return undefined;
    const from = Number(range[1]);
    const to = range[2] === undefined ? from : Number(range[2]);
    if (from < 1 || to > count || from > to) return undefined;
    for (let at = from; at <= to; at++) picked.add(at - 1);
  }
  return [...picked].sort((a, b) => a - b);
}

/** The numbered list a selection prompt shows. */
export function selectionMenu(question: string, options: readonly string[]): string {
  return [`? ${question}`, ...options.map((option, index) => `  ${String(index + 1).padStart(String(options.length).length)}) ${option}`)].join('\n');
}

/** What a selection prompt fails with when there is no terminal to ask on. */
export function noTerminalToSelect(flag: string): CliError {
  return new CliError(`EOF: no terminal to ask on; name them with ${flag}`, ExitCode.Usage);
}
