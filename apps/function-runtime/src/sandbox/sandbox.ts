/**
 * One warm sandbox: an isolated-vm isolate with one context holding the polyfills, the bson bundle and the
 * prelude. It runs one top-level call at a time (the pool hands it out exclusively), so a call that must be
 * stopped (time limit) can be stopped by disposing the isolate without touching other calls.
 *
 * Only strings cross the boundary: the isolate calls the host through string-in callbacks, the host calls
 * back through references to two prelude functions (run, resolve) it keeps on its side. No host object,
 * function or reference ever enters the isolate.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { HttpResponseState } from '@tessera/contracts';
import type { CancelSignal } from '@tessera/domain';
import { dataSourceArgumentNumbers, encodeEjson, parseEjson, withJsNumbers } from '@tessera/messaging';
import ivm from 'isolated-vm';
import { hostZlib } from './dependencies/host-zlib';
import { hostCrypto } from './host-crypto';
import { responseStateOf } from './http-response-state';
import { isolateScripts } from './isolate-scripts';

export interface SandboxLimits {
  /** Wall-clock limit of one top-level call, including the nested calls it makes. */
  timeLimitMs: number;
  memoryLimitMb: number;
  maxResultBytes: number;
  maxLogLines: number;
  maxLogBytes: number;
  maxLogLineBytes: number;
  /** Host operations (data access, HTTP, timers, nested-call set-up) one call may have in flight at once. */
  maxPendingOperations: number;
}

/** What the sandbox knows for its whole life: the app, its values and environment (JSON text). */
export interface SandboxBoot {
  appId: string;
  /** name -> JSON text of the value. */
  values: Record<string, string>;
  /** JSON text of `{ tag, values }`. */
  environment: string;
  /** The app's uploaded dependencies (the admin API's bundle, JSON text), loaded by the sandbox's `require`. */
  dependencies?: string;
}

/** A frame: the identity one function (top-level or nested) runs as. `user` is EJSON text or null. */
export interface SandboxFrame {
  id: number;
  system: boolean;
  user: string | null;
  /** Set when the function runs as the user a script picks; the script sees the parent frame's context. */
  runAsScript?: string;
  parent?: SandboxFrame;
}

export interface SandboxRunRequest {
  frame: SandboxFrame;
  fn: { name: string; source: string };
  /** Canonical EJSON text of the arguments array. */
  args: string;
  request?: Record<string, unknown>;
  /** The call serves an HTTP request: the function gets a `response` object as its last argument. */
  http?: boolean;
}

/** Serves the isolate's requests (data access, nested functions, HTTP, run-as binding) for one call. */
export type HostOperationHandler = (op: string, frameId: number, payload: unknown) => Promise<unknown>;
/** Serves the few requests the isolate waits for synchronously (`fn.prepare`); throws to refuse one. */
export type HostOperationNowHandler = (op: string, frameId: number, payload: unknown) => unknown;

export type SandboxOutcome =
  | { kind: 'ok'; resultEjson: string; logs: string[]; http?: HttpResponseState }
  | { kind: 'error'; error: { name: string; message: string; stack?: string }; logs: string[] }
  | { kind: 'timeout' }
  /** Terminated from outside: the caller went away (`cancelled`) or the process is shutting down. */
  | { kind: 'stopped'; reason: StopReason }
  | { kind: 'memory' }
  | { kind: 'crashed'; message: string };

export type StopReason = 'cancelled' | 'shutdown';

interface ActiveCall {
  token: string;
  handler: HostOperationHandler;
  now: HostOperationNowHandler | undefined;
  ended: boolean;
  timers: Set<NodeJS.Timeout>;
  inFlight: number;
  /** Since when (performance.now()) host operations have been in flight without a break; 0 while none are. */
  waitingSince: number;
}

interface PreludeResult {
  ok: boolean;
  result?: string;
  http?: unknown;
  error?: { name: string; message: string; stack?: string };
  logs: string[];
  clean: boolean;
}

const HASHES = new Set(['md5', 'sha1', 'sha256', 'sha384', 'sha512']);
const URL_SETTABLE = new Set(['href', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash']);
const MAX_TIMER_MS = 2_147_483_647;
/**
 * How long one reading of a sandbox's heap size stands for the calls that follow. Reading it queues a task on
 * the isolate's thread and back: done after every call it cost about 8% of a trivial call, for a figure only
 * the execution log shows. The memory limit does not depend on it: isolated-vm enforces `memoryLimit` inside
 * the isolate and the call ends with a `memory` outcome.
 */
const HEAP_SAMPLE_MS = 1_000;

let bsonScript: string | undefined;
function bsonBundle(): string {
  // The browser build of the same bson version the host uses, so EJSON text round-trips exactly.
  // The bundle allocates its 17 MB serialisation buffer at load, and that would count against every
  // sandbox's memory limit; allocate it on first BSON.serialize instead (serialize grows it on demand).
  bsonScript ??= readFileSync(join(dirname(require.resolve('bson')), 'bson.bundle.js'), 'utf8').replace(
    'let buffer = ByteUtils.allocate(MAXSIZE);',
    'let buffer = ByteUtils.allocate(0);',
  );
  return bsonScript;
}

// V8's code cache for the bundle, produced by the first sandbox: later sandboxes skip parsing its 177 kB.
let bsonCodeCache: ivm.ExternalCopy<ArrayBuffer> | undefined;
async function runBsonBundle(isolate: ivm.Isolate, context: ivm.Context): Promise<void> {
  const script = await isolate.compileScript(
    bsonBundle(),
    bsonCodeCache ? { filename: 'tessera:bson.js', cachedData: bsonCodeCache } : { filename: 'tessera:bson.js', produceCachedData: true },
  );
  const produced = (script as ivm.Script & ivm.CachedDataResult).cachedData;
  if (!bsonCodeCache && produced) bsonCodeCache = produced;
  await script.run(context);
  script.release();
}

let tokenCounter = 0;
const TOKEN_PREFIX = randomBytes(6).toString('hex');

export class Sandbox {
  private active: ActiveCall | null = null;
  private disposed = false;
  /** False once a call left state behind that could not be removed; the pool then retires the sandbox. */
  private reusable = true;
  /** Why the running call was terminated from outside, if it was. */
  private stopReason: StopReason | undefined;
  /** The last heap reading (see HEAP_SAMPLE_MS); none yet for a new sandbox. */
  private heapSample: { bytes: Promise<number>; at: number; read?: number } | undefined;

  private constructor(
    private readonly isolate: ivm.Isolate,
    private readonly context: ivm.Context,
    private readonly runRef: ivm.Reference<(request: string) => Promise<string>>,
    private readonly resolveRef: ivm.Reference<(id: number, ok: boolean, text: string) => void>,
    private readonly limits: SandboxLimits,
  ) {}

  static async create(boot: SandboxBoot, limits: SandboxLimits): Promise<Sandbox> {
    const isolate = new ivm.Isolate({ memoryLimit: limits.memoryLimitMb });
    let sandbox: Sandbox | undefined;
    try {
      const context = await isolate.createContext();
      const jail = context.global;
      const hostStart = (token: string, frameId: number, opId: number, op: string, payload: string): void => {
        sandbox?.startOperation(token, frameId, opId, op, payload);
      };
      await jail.set('__tessera_hostStart', new ivm.Callback(hostStart));
      await jail.set('__tessera_hostNow', new ivm.Callback((token: string, frameId: number, op: string, payload: string): string => sandbox?.operationNow(token, frameId, op, payload) ?? NO_CALL));
      await jail.set('__tessera_hash', new ivm.Callback(hash));
      await jail.set('__tessera_url', new ivm.Callback(parseUrl));
      await jail.set('__tessera_randomHex', new ivm.Callback((n: number) => randomBytes(Math.max(0, Math.min(65_536, Math.floor(Number(n)) || 0))).toString('hex')));
      await jail.set('__tessera_crypto', new ivm.Callback(hostCrypto));
      await jail.set('__tessera_zlib', new ivm.Callback((op: string, input: string) => hostZlib(op, input, limits.maxResultBytes)));
      // The per-call limits are the sandbox's for its whole life: sent once here, not with every call.
      const callLimits = { maxResultBytes: limits.maxResultBytes, maxLogLines: limits.maxLogLines, maxLogBytes: limits.maxLogBytes, maxLogLineBytes: limits.maxLogLineBytes };
      const { dependencies, ...rest } = boot;
      if (dependencies !== undefined) await jail.set('__tessera_dependencies', dependencies);
      await jail.set('__tessera_boot', JSON.stringify({ ...rest, limits: callLimits }));
      const scripts = isolateScripts();
      await context.eval(scripts.polyfills, { filename: 'tessera:polyfills.js' });
      await runBsonBundle(isolate, context);
      const api = (await context.eval(scripts.prelude, { filename: 'tessera:prelude.js', reference: true })) as ivm.Reference<Record<string, unknown>>;
      const runRef = (await api.get('run', { reference: true })) as ivm.Reference<(request: string) => Promise<string>>;
      const resolveRef = (await api.get('resolve', { reference: true })) as ivm.Reference<(id: number, ok: boolean, text: string) => void>;
      api.release();
      sandbox = new Sandbox(isolate, context, runRef, resolveRef, limits);
      return sandbox;
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }

  /**
   * How long the running call has had host operations in flight without a break (data access, HTTP, a
   * timer), in ms: the time its sandbox has used no thread. 0 while it runs code, or runs nothing.
   */
  hostWaitMs(now = performance.now()): number {
    const call = this.active;
    return call && call.inFlight > 0 ? now - call.waitingSince : 0;
  }

  /**
   * The heap of a sandbox whose call waits on the host, read since that wait began (a waiting call cannot
   * allocate), in bytes; undefined while there is no such reading yet (asking starts one) or no call waits.
   */
  heapWhileWaiting(): number | undefined {
    const call = this.active;
    if (!call || call.inFlight === 0 || this.disposed || this.isolate.isDisposed) return undefined;
    const sample = this.heapSample;
    if (sample && sample.at >= call.waitingSince) return sample.read;
    this.heapSample = undefined;
    void this.heapUsed();
    return undefined;
  }

  get isUsable(): boolean {
    return !this.disposed && !this.isolate.isDisposed && this.reusable;
  }

  /**
   * Used heap of the isolate (plus memory allocated outside it that counts against the limit), in bytes, as
   * read at most HEAP_SAMPLE_MS ago: the first call of a sandbox reads it, later calls within the interval
   * share that reading.
   */
  heapUsed(now = performance.now()): Promise<number> {
    if (this.isolate.isDisposed) return Promise.resolve(0);
    if (this.heapSample && now - this.heapSample.at < HEAP_SAMPLE_MS) return this.heapSample.bytes;
    const sample: { bytes: Promise<number>; at: number; read?: number } = { bytes: Promise.resolve(0), at: now };
    sample.bytes = this.isolate.getHeapStatistics().then(
      (stats) => (sample.read = stats.used_heap_size + stats.externally_allocated_size),
      () => (sample.read = 0),
    );
    this.heapSample = sample;
    return sample.bytes;
  }

  /**
   * `heapUsed` as a number when the reading it would answer is already in (most calls: one reading serves
   * HEAP_SAMPLE_MS of them), so the caller need not wait on a promise; else that promise.
   */
  heapReading(now = performance.now()): number | Promise<number> {
    const sample = this.heapSample;
    if (!this.isolate.isDisposed && sample?.read !== undefined && now - sample.at < HEAP_SAMPLE_MS) return sample.read;
    return this.heapUsed(now);
  }

  /**
   * Runs one top-level call. It ends at the time limit, or when `signal` aborts (its caller went away): the
   * isolate is disposed then, which stops the code wherever it is, even in a loop that never yields.
   */
  async run(request: SandboxRunRequest, handler: HostOperationHandler, signal?: CancelSignal, now?: HostOperationNowHandler): Promise<SandboxOutcome> {
    if (this.active) throw new Error('sandbox is already running a call');
    if (!this.isUsable) throw new Error('sandbox is disposed');
    if (signal?.aborted) return { kind: 'stopped', reason: 'cancelled' };
    // Tokens only tell the current call from earlier ones; sandboxed code never sees them.
    const token = `${TOKEN_PREFIX}-${++tokenCounter}`;
    const call: ActiveCall = { token, handler, now, ended: false, timers: new Set(), inFlight: 0, waitingSince: 0 };
    this.active = call;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.dispose();
    }, this.limits.timeLimitMs);
    const onAbort = (): void => this.terminate('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    const payload = JSON.stringify({ token, frame: request.frame, fn: request.fn, args: request.args, request: request.request, http: request.http === true });
    try {
      const text = (await this.runRef.apply(undefined, [payload], { result: { promise: true } })) as string;
      const result = JSON.parse(text) as PreludeResult;
      if (!result.clean) this.reusable = false;
      if (result.ok) {
        if (!request.http) return { kind: 'ok', resultEjson: result.result ?? 'null', logs: result.logs };
        // The isolate's account of the response object is checked like any other input from sandboxed code.
        const http = responseStateOf(result.http);
        if (!http) return { kind: 'error', error: { name: 'Error', message: 'the response object holds an invalid status, header or body' }, logs: result.logs };
        return { kind: 'ok', resultEjson: result.result ?? 'null', logs: result.logs, http };
      }
      return { kind: 'error', error: result.error ?? { name: 'Error', message: 'unknown error' }, logs: result.logs };
    } catch (error) {
      if (timedOut) return { kind: 'timeout' };
      if (this.stopReason) return { kind: 'stopped', reason: this.stopReason };
      const message = error instanceof Error ? error.message : String(error);
      if (/memory limit/i.test(message)) {
        this.dispose();
        return { kind: 'memory' };
      }
      // Anything else (an isolate that died, a result that could not be copied): do not trust it again.
      this.dispose();
      return { kind: 'crashed', message };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      call.ended = true;
      for (const t of call.timers) clearTimeout(t);
      this.active = null;
    }
  }

  /** Stops the running call (if any) and disposes the sandbox; the call's outcome is `stopped` with `reason`. */
  terminate(reason: StopReason): void {
    if (this.disposed) return;
    if (this.active) this.stopReason = reason;
    this.dispose();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.active) this.active.ended = true;
    try {
      this.runRef.release();
      this.resolveRef.release();
      this.context.release();
    } catch {
      // already released with the isolate
    }
    if (!this.isolate.isDisposed) this.isolate.dispose();
  }

  /** Called (synchronously, from the isolate) when sandboxed code starts a host operation. */
  private startOperation(token: string, frameId: number, opId: number, op: string, payload: string): void {
    const call = this.active;
    // A leftover callback of an earlier call (a dangling promise chain) gets no answer: it stays pending.
    if (!call || call.token !== token || call.ended) return;
    let work: Promise<unknown>;
    if (call.inFlight >= this.limits.maxPendingOperations) {
      this.deliver(call, opId, false, JSON.stringify({ message: `too many operations in flight: at most ${this.limits.maxPendingOperations} at once` }));
      return;
    }
    if (call.inFlight++ === 0) call.waitingSince = performance.now();
    try {
      const parsed = op === 'data' ? dataOperation(parseEjson(payload, { stored: true })) : parseEjson(payload, { relaxed: true });
      work = op === 'timer' ? this.sleep(call, parsed) : call.handler(op, frameId, parsed);
    } catch (error) {
      work = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const settled = (): void => {
      if (--call.inFlight === 0) call.waitingSince = 0;
    };
    work.finally(settled).then(
      // encodeEjson gives what EJSON.stringify(value, { relaxed: false }) writes, without bson's per-value walk.
      (value) => this.deliver(call, opId, true, JSON.stringify(encodeEjson(value === undefined ? null : value))),
      (error: unknown) => this.deliver(call, opId, false, JSON.stringify(describeHostError(error))),
    );
  }

  /** Called (synchronously, from the isolate, which waits) for an operation answered at once: JSON of `{ok, value}` or `{ok: false, message, code?}`. */
  private operationNow(token: string, frameId: number, op: string, payload: string): string {
    const call = this.active;
    if (!call || call.token !== token || call.ended || !call.now) return NO_CALL;
    try {
      const value = call.now(op, frameId, parseEjson(payload, { relaxed: true }));
      return JSON.stringify({ ok: true, value: JSON.stringify(encodeEjson(value === undefined ? null : value)) });
    } catch (error) {
      return JSON.stringify({ ok: false, ...describeHostError(error) });
    }
  }

  private deliver(call: ActiveCall, opId: number, ok: boolean, text: string): void {
    if (call.ended || this.disposed) return;
    this.resolveRef.applyIgnored(undefined, [opId, ok, text]);
  }

  private sleep(call: ActiveCall, payload: unknown): Promise<void> {
    const ms = Math.min(MAX_TIMER_MS, Math.max(0, Number((payload as { ms?: unknown } | null)?.ms) || 0));
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        call.timers.delete(t);
        resolve();
      }, ms);
      call.timers.add(t);
    });
  }
}

/** The answer to a synchronous operation of a call that is not running (a leftover of an earlier call). */
/**
 * A data operation's payload, read with numbers as the datastore stores them (a double holding 1 stays a
 * Double, a long a Long): what the operation stores keeps them, everything else gets JS numbers.
 */
function dataOperation(payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return withJsNumbers(payload);
  const { arguments: args, ...rest } = payload as Record<string, unknown>;
  const out = withJsNumbers(rest) as Record<string, unknown>;
  if (Array.isArray(args)) {
    out['arguments'] = args.map((arg: unknown) => (typeof arg === 'object' && arg !== null && !Array.isArray(arg) && !('_bsontype' in arg) ? dataSourceArgumentNumbers(arg as Record<string, unknown>, { stored: true }) : withJsNumbers(arg)));
  }
  return out;
}

const NO_CALL = JSON.stringify({ ok: false, message: 'the function call has already ended' });

function hash(algorithm: string, dataBase64: string, keyBase64: string): string {
  const alg = String(algorithm);
  if (!HASHES.has(alg)) throw new Error(`Digest method not supported: ${alg}`);
  const data = Buffer.from(String(dataBase64), 'base64');
  const digest = keyBase64 ? createHmac(alg, Buffer.from(String(keyBase64), 'base64')) : createHash(alg);
  return digest.update(data).digest('base64');
}

function parseUrl(input: string, base: string, field: string, value: string): string {
  try {
    const url = new URL(String(input), base ? String(base) : undefined);
    if (field) {
      if (!URL_SETTABLE.has(field)) throw new Error('not settable');
      (url as unknown as Record<string, string>)[field] = String(value);
    }
    const { href, origin, protocol, username, password, host, hostname, port, pathname, search, hash: fragment } = url;
    return JSON.stringify({ href, origin, protocol, username, password, host, hostname, port, pathname, search, hash: fragment });
  } catch {
    return JSON.stringify({ error: true });
  }
}

/** What a failed host operation tells the sandbox: a message (and code) safe for the function to see. */
function describeHostError(error: unknown): { message: string; code?: string; labels?: string[] } {
  if (error instanceof Error) {
    const code = (error as { errorCode?: unknown }).errorCode;
    // A MongoDB driver's labels (TransientTransactionError...): a function's withTransaction retries on them.
    const labels = (error as { errorLabels?: unknown }).errorLabels;
    const described: { message: string; code?: string; labels?: string[] } = typeof code === 'string' ? { message: error.message, code } : { message: error.message };
    if (Array.isArray(labels) && labels.length > 0) described.labels = labels.map(String);
    return described;
  }
  return { message: String(error) };
}
