/** One top-level call as the isolate sees it, and the way its code reaches the host. */

export interface CallLimits {
  maxResultBytes: number;
  maxLogLines: number;
  maxLogBytes: number;
  maxLogLineBytes: number;
}

export interface FunctionConsole {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  debug(...args: unknown[]): void;
  trace(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

export interface Call {
  token: string;
  /** JSON text of the HTTP request the call came with, or null. */
  request: string | null;
  ended: boolean;
  timers: Set<number>;
  logs: string[];
  logBytes: number;
  logsTruncated: boolean;
  frames: number;
  log(level: string, args: ArrayLike<unknown>): void;
  console: FunctionConsole;
}

/** The identity a function runs as; `user` is EJSON text or null. */
export interface Frame {
  id: number;
  system: boolean;
  user: string | null;
  runAsScript?: string;
  parent?: Frame;
}

/** Starts a host operation for `call` in frame `frameId`; settles with the host's answer, parsed from EJSON. */
export type HostOp = (call: Call, frameId: number, op: string, payload: unknown) => Promise<unknown>;

/** `obj` without its undefined properties, as the host's payload schemas expect. */
export function withoutUndefined(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) if (obj[key] !== undefined) out[key] = obj[key];
  return out;
}
