import type { AppFiles } from '@tessera/app-config';

const decoder = new TextDecoder();

/**
 * What changes between two versions of an app directory, one string per changed file: a header line
 * (`+ added <path>`, `- removed <path>`, `~ modified <path>`) followed, for text files, by the changed
 * lines prefixed with `-` and `+`. Empty when nothing changes.
 */
export function diffAppFiles(before: AppFiles, after: AppFiles): string[] {
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const diffs: string[] = [];
  for (const path of paths) {
    const old = before.get(path);
    const next = after.get(path);
    if (old && next && Buffer.from(old).equals(Buffer.from(next))) continue;
    if (!old) diffs.push([`+ added ${path}`, ...lines(next!).map((line) => `+${line}`)].join('\n'));
    else if (!next) diffs.push([`- removed ${path}`, ...lines(old).map((line) => `-${line}`)].join('\n'));
    else diffs.push([`~ modified ${path}`, ...lineDiff(lines(old), lines(next))].join('\n'));
  }
  return diffs;
}

function lines(bytes: Uint8Array): string[] {
  if (bytes.includes(0)) return ['(binary file)'];
  const text = decoder.decode(bytes);
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

/** Changed lines of a longest-common-subsequence diff, each prefixed `-` or `+`. */
function lineDiff(a: string[], b: string[]): string[] {
  if (a.length * b.length > 4_000_000) return [...a.map((line) => `-${line}`), ...b.map((line) => `+${line}`)];
  const table: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || table[i + 1][j] >= table[i][j + 1])) out.push(`-${a[i++]}`);
    else out.push(`+${b[j++]}`);
  }
  return out;
}
