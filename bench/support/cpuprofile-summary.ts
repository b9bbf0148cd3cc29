/**
 * Summarises a V8 `.cpuprofile` (what `--cpu-prof` writes, through BENCH_SERVER_NODE_ARGS) over a window of
 * its samples: the server's profile covers its whole life, start-up and seeding included, while a bench
 * measures only its last seconds. Prints, as shares of the window's busy samples (idle ones left out), the
 * time spent in each package or project (self), in each function (self), and under each function
 * (inclusive, once per sample however often it recurs on the stack).
 *
 *   node bench/dist/support/cpuprofile-summary.js <file.cpuprofile> [--last <s>] [--skip-end <s>] [--top <n>]
 *
 * `--last 14 --skip-end 1` takes the samples from 15 s to 1 s before the profile ended (the server's
 * shutdown). V8 names each frame by its script and line, where `perf` with `--perf-basic-prof` names it by
 * an address that moved or collected code may have held for another function.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface WindowOptions {
  /** Seconds of samples to take, ending `skipEndSeconds` before the last sample. */
  lastSeconds: number;
  skipEndSeconds: number;
}

export interface Share {
  name: string;
  /** Busy samples of the window in which it was (self: on top; inclusive: anywhere on the stack). */
  samples: number;
  fraction: number;
}

export interface ProfileSummary {
  busySamples: number;
  byModule: Share[];
  bySelf: Share[];
  byInclusive: Share[];
}

const IDLE = new Set(['(idle)']);

/** `apps/x`, `libs/x`, `node_modules/<package>`, `node:<module>`, or the frame's name when it has no script. */
export function moduleOf(url: string, functionName: string): string {
  const path = url.replace(/^file:\/\//, '');
  // The innermost package: a dependency's own dependency is named, not the package that holds it.
  const nodeModule = [...path.matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].at(-1);
  if (nodeModule) return `node_modules/${nodeModule[1]}`;
  const project = /\/((?:apps|libs|bench)\/[^/]+)\//.exec(path);
  if (project) return project[1] ?? path;
  if (path.startsWith('node:')) return path.split('/')[0] ?? path;
  return path === '' ? `(${functionName.replace(/^\(|\)$/g, '')})` : path;
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^file:\/\/.*?\/((?:apps|libs|bench|node_modules)\/)/, '$1');
  return `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
}

function ranked(counts: Map<string, number>, busy: number): Share[] {
  return [...counts.entries()].map(([name, samples]) => ({ name, samples, fraction: busy === 0 ? 0 : samples / busy })).sort((a, b) => b.samples - a.samples || a.name.localeCompare(b.name));
}

function add(counts: Map<string, number>, key: string, n = 1): void {
  counts.set(key, (counts.get(key) ?? 0) + n);
}

/** The window's busy samples, by module and function. */
export function summarise(profile: CpuProfile, window: WindowOptions): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // Sample times from their deltas (a loop, not Math.max(...times): a long profile holds millions of samples).
  const times: number[] = [];
  let at = profile.startTime;
  let last = profile.timeDeltas.length === 0 ? profile.endTime : Number.NEGATIVE_INFINITY;
  for (const delta of profile.timeDeltas) {
    times.push((at += delta));
    if (at > last) last = at;
  }
  const to = last - window.skipEndSeconds * 1e6;
  const from = to - window.lastSeconds * 1e6;
  const byModule = new Map<string, number>();
  const bySelf = new Map<string, number>();
  const byInclusive = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const time = times[i] ?? 0;
    const node = nodes.get(id);
    if (time < from || time > to || !node || IDLE.has(node.callFrame.functionName)) return;
    busy++;
    add(byModule, moduleOf(node.callFrame.url, node.callFrame.functionName));
    add(bySelf, frameName(node));
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const frame = nodes.get(current);
      if (!frame) break;
      const name = frameName(frame);
      if (!seen.has(name)) add(byInclusive, name);
      seen.add(name);
    }
  });
  return { busySamples: busy, byModule: ranked(byModule, busy), bySelf: ranked(bySelf, busy), byInclusive: ranked(byInclusive, busy) };
}

function format(title: string, shares: Share[], top: number): string {
  return [`${title}:`, ...shares.slice(0, top).map((share) => `${(share.fraction * 100).toFixed(1).padStart(6)}%  ${share.name}`)].join('\n');
}

function option(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} takes a number of seconds (or of lines for --top)`);
  return value;
}

function main(args: string[]): void {
  const file = args.find((arg, i) => !arg.startsWith('--') && (i === 0 || !args[i - 1]?.startsWith('--')));
  if (!file) {
    process.stderr.write('usage: cpuprofile-summary <file.cpuprofile> [--last <s>] [--skip-end <s>] [--top <n>]\n');
    process.exitCode = 2;
    return;
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const top = option(args, '--top', 25);
  const summary = summarise(profile, { lastSeconds: option(args, '--last', 14), skipEndSeconds: option(args, '--skip-end', 1) });
  process.stdout.write(`${summary.busySamples} busy samples in the window\n\n`);
  process.stdout.write(`${format('self, by package or project', summary.byModule, top)}\n\n${format('self, by function', summary.bySelf, top)}\n\n${format('inclusive, by function', summary.byInclusive, top * 2)}\n`);
}

if (require.main === module) main(process.argv.slice(2));
