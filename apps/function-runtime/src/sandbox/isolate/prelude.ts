/**
 * Entry of the second isolate script, the sandbox side of the function runtime. Runs once per sandbox
 * context, after the polyfills and the bson bundle. It builds Buffer, URL, the require allow-list, `context`,
 * and the entry points the host calls (run, resolve); it then hardens the context (frozen intrinsics, fixed
 * globals) so one call cannot leave state behind for the next. Nothing here may hold a host object: the host
 * hands over only string-in, string-out callbacks, captured below and removed from the global object.
 *
 * The bundle's completion value is the `{ run, resolve }` object (see the last statement and
 * isolate-scripts.ts), which the host keeps references to.
 */
import { HOST_GLOBAL_NAMES, bson, isolateGlobal } from './bridge';
import { Buffer, toBuffer } from './buffer';
import { randomSource } from './codec';
import { isCursor, serviceClient } from './data-access';
import { fromEjsonText, toEjsonText } from './ejson-values';
import { type Call, type CallLimits, type FunctionConsole, type Frame, type HostOp } from './host-op';
import { httpClient } from './http';
import { appServicesBson } from './app-services-bson';
import { httpResponse, withBodyText, type HttpResponseState } from './http-endpoint';
import { moduleLoader } from './module-loader';
import { nodeBuiltins } from './node-builtins';
import { hashing } from './node-crypto';
import { urlClasses } from './url';
import { functionUtils } from './utils';

interface Boot {
  appId: string;
  values: Record<string, string>;
  environment: string;
  /** The same for every call of this sandbox. */
  limits: CallLimits;
}

interface RunRequest {
  token: string;
  frame: Frame;
  fn: { name: string; source: string };
  args: string;
  request?: unknown;
  /** An HTTPS endpoint or webhook call: the function also gets a `response` object. */
  http?: boolean;
}

interface Outcome {
  ok: boolean;
  result?: string;
  http?: HttpResponseState;
  error?: { name: string; message: string; stack?: string };
  logs?: string[];
  clean?: boolean;
}

type Factory = (exports: unknown, module: { exports: unknown }, require: (name: unknown) => unknown, context: unknown, console: FunctionConsole) => unknown;

const g = isolateGlobal();
const hostStart = g.__tessera_hostStart;
const hostNow = g.__tessera_hostNow;
const hostHash = g.__tessera_hash;
const hostUrl = g.__tessera_url;
const random = randomSource(g.__tessera_randomHex);
const hostZlib = g.__tessera_zlib;
const hostCrypto = g.__tessera_crypto;
const dependencyBundle = g.__tessera_dependencies;
const boot = JSON.parse(g.__tessera_boot) as Boot;
for (const name of HOST_GLOBAL_NAMES) delete g[name];
const BSON = bson();
const EJSON = BSON.EJSON;

const { makeHash, cryptoModule } = hashing(hostHash, random);
const { URL, URLSearchParams } = urlClasses(hostUrl);

// ---------------------------------------------------------------- require: built-ins, then the app's packages
const BUILTINS: Record<string, unknown> = {
  buffer: { Buffer },
  crypto: cryptoModule,
  url: { URL, URLSearchParams },
  bson: BSON,
  ...nodeBuiltins(hostZlib, Buffer, toBuffer),
};
// What packages see as `process` and `global`: no host state, only what CommonJS code commonly reads.
const processObject = {
  env: { NODE_ENV: 'production' },
  version: 'v20.0.0',
  versions: { node: '20.0.0' },
  platform: 'linux',
  arch: 'x64',
  browser: false,
  argv: [],
  cwd: () => '/',
  nextTick: (fn: (...a: unknown[]) => void, ...args: unknown[]) => queueMicrotask(() => fn(...args)),
  emitWarning: () => undefined,
};
const safeRequire = moduleLoader(dependencyBundle, BUILTINS, processObject, g);

// ---------------------------------------------------------------- utils (as App Services offered)
const utils = functionUtils(makeHash, hostCrypto);

// ---------------------------------------------------------------- calls, host operations and timers
let currentCall: Call | null = null;
let opSeq = 0;
const pending = new Map<number, { call: Call; resolve: (value: unknown) => void; reject: (error: unknown) => void }>();

function errorFromHost(text: string): Error {
  let info: { message?: unknown; code?: unknown; labels?: unknown };
  try {
    info = JSON.parse(text) as { message?: unknown; code?: unknown; labels?: unknown };
  } catch {
    info = { message: String(text) };
  }
  const error = new Error(String(info.message)) as Error & { code?: unknown; errorLabels?: string[] };
  if (info.code) error.code = info.code;
  if (Array.isArray(info.labels)) error.errorLabels = info.labels.map(String);
  return error;
}

const hostOp: HostOp = (call, frameId, op, payload) => {
  if (call.ended) return Promise.reject(new Error('the function call has already ended'));
  const text = toEjsonText(payload);
  return new Promise((resolve, reject) => {
    const id = ++opSeq;
    pending.set(id, { call, resolve, reject });
    hostStart(call.token, frameId, id, op, text);
  });
};
/** A host operation answered synchronously (the isolate waits for the host's answer). */
function hostOpNow(call: Call, frameId: number, op: string, payload: unknown): unknown {
  if (call.ended) throw new Error('the function call has already ended');
  const text = hostNow(call.token, frameId, op, toEjsonText(payload));
  const answer = JSON.parse(text) as { ok: boolean; value?: string; message?: string; code?: string };
  if (!answer.ok) throw errorFromHost(JSON.stringify({ message: answer.message, code: answer.code }));
  return fromEjsonText(answer.value ?? 'null');
}
function resolveOp(id: number, ok: boolean, text: string): void {
  const entry = pending.get(id);
  if (!entry) return;
  pending.delete(id);
  if (entry.call.ended) return;
  if (ok) {
    let value: unknown;
    try {
      value = fromEjsonText(text);
    } catch (error) {
      entry.reject(error);
      return;
    }
    entry.resolve(value);
  } else entry.reject(errorFromHost(text));
}
function forgetPending(call: Call): void {
  for (const [id, entry] of pending) if (entry.call === call) pending.delete(id);
}

let timerSeq = 0;
function startTimer(callback: unknown, ms: unknown, args: unknown[], repeat: boolean): number {
  if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
  const call = currentCall;
  if (!call) throw new Error('timers can only be set while a function runs');
  const id = ++timerSeq;
  const delay = Math.max(0, Number(ms) || 0);
  call.timers.add(id);
  const tick = (): void => {
    hostOp(call, 0, 'timer', { ms: delay }).then(
      () => {
        if (!call.timers.has(id) || call.ended) return;
        if (!repeat) call.timers.delete(id);
        try {
          (callback as (...a: unknown[]) => unknown)(...args);
        } catch (error) {
          call.log('error', ['Uncaught', error]);
        }
        if (repeat && call.timers.has(id)) tick();
      },
      () => undefined,
    );
  };
  tick();
  return id;
}
function clearTimer(id: unknown): void {
  if (currentCall) currentCall.timers.delete(id as number);
}

// ---------------------------------------------------------------- console
function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return '[Function: ' + ((value as { name?: string }).name || 'anonymous') + ']';
  if (typeof value === 'symbol' || typeof value === 'bigint') return String(value);
  if (value instanceof Error) return value.stack || String(value);
  if (value instanceof Buffer) return '<Buffer ' + value.toString('hex').replace(/(..)(?!$)/g, '$1 ') + '>';
  try {
    const text = EJSON.stringify(value, { relaxed: true }) as string | undefined;
    return text === undefined ? String(value) : text;
  } catch {
    return Object.prototype.toString.call(value);
  }
}
function makeConsole(sink: (level: string, args: ArrayLike<unknown>) => void): FunctionConsole {
  const c: Partial<FunctionConsole> = {};
  for (const level of ['log', 'info', 'debug', 'trace'] as const) c[level] = (...args: unknown[]) => sink('log', args);
  c.warn = (...args: unknown[]) => sink('warn', args);
  c.error = (...args: unknown[]) => sink('error', args);
  return c as FunctionConsole;
}
function makeCall(token: string, request: string | null, limits: CallLimits): Call {
  const call: Call = {
    token,
    request,
    ended: false,
    timers: new Set(),
    logs: [],
    logBytes: 0,
    logsTruncated: false,
    frames: 0,
    log(level, args) {
      if (call.ended || call.logsTruncated) return;
      let line = Array.prototype.map.call(args, (a: unknown) => formatValue(a)).join(' ');
      if (level === 'error' || level === 'warn') line = level.toUpperCase() + ': ' + line;
      if (line.length > limits.maxLogLineBytes) line = line.slice(0, limits.maxLogLineBytes) + '... (truncated)';
      if (call.logs.length >= limits.maxLogLines || call.logBytes + line.length > limits.maxLogBytes) {
        call.logsTruncated = true;
        call.logs.push('... (further log lines dropped: log limit reached)');
        return;
      }
      call.logBytes += line.length;
      call.logs.push(line);
    },
    console: undefined as unknown as FunctionConsole,
  };
  call.console = makeConsole((level, args) => call.log(level, args));
  return call;
}
const globalConsole = makeConsole((level, args) => {
  if (currentCall) currentCall.log(level, args);
});

// ---------------------------------------------------------------- context and function invocation
const valuesJson = boot.values;
const environmentJson = boot.environment;
const factories = new Map<string, { source: string; factory: Factory }>();

function compile(name: string, source: string): Factory {
  const cached = factories.get(name);
  if (cached && cached.source === source) return cached.factory;
  let factory: Factory;
  try {
    // Compiling the app's function source is what this runtime is for; it runs inside the isolate.
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    factory = new Function('exports', 'module', 'require', 'context', 'console', source + '\n;return exports;') as Factory;
  } catch (error) {
    throw new Error("function '" + name + "' does not compile: " + String(error && (error as Error).message));
  }
  factories.set(name, { source, factory });
  return factory;
}
function loadExport(name: string, source: string, context: unknown, console: FunctionConsole): unknown {
  const factory = compile(name, source);
  const module = { exports: {} as unknown };
  const initial = module.exports;
  const exported = factory.call(undefined, initial, module, safeRequire, context, console);
  const fn = module.exports !== initial ? module.exports : exported;
  return fn;
}
/** `make()` on first use, then the same value: a call pays only for the parts of `context` it reads. */
function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}
function makeContext(call: Call, frame: Frame): unknown {
  const user = once(() => (frame.user === null ? undefined : (EJSON.parse(frame.user) as unknown)));
  const environment = once(() => JSON.parse(environmentJson) as unknown);
  const request = once(() => (call.request === null ? undefined : (JSON.parse(call.request) as unknown)));
  const http = once(() => httpClient(hostOp, URLSearchParams, call, frame));
  return Object.freeze({
    app: Object.freeze({ id: boot.appId, clientAppId: boot.appId }),
    services: Object.freeze({
      get: (name: unknown) => {
        const service = String(name);
        return serviceClient(hostOp, call, frame, service, once(() => httpClient(hostOp, URLSearchParams, call, frame, service)));
      },
    }),
    functions: Object.freeze({ execute: (name: unknown, ...args: unknown[]) => executeNested(call, frame, String(name), args) }),
    values: Object.freeze({
      get: (name: string): unknown => (Object.prototype.hasOwnProperty.call(valuesJson, name) ? JSON.parse(valuesJson[name]) : undefined),
    }),
    get user() {
      return user();
    },
    get environment() {
      return environment();
    },
    get request() {
      return request();
    },
    get http() {
      return http();
    },
    runningAsSystem: () => frame.system,
  });
}
async function resolveRunAs(call: Call, frame: Frame, name: string): Promise<Frame> {
  if (frame.runAsScript === undefined) return frame;
  const parent = frame.parent as Frame;
  const context = makeContext(call, parent);
  // Either a module assigning exports, or a bare function expression.
  const script = /\bexports\b/.test(frame.runAsScript)
    ? loadExport(name + '#run_as_user_id_script_source', frame.runAsScript, context, call.console)
    : // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the app's run-as script, compiled inside the isolate
      (new Function('context', 'console', 'require', 'return (' + frame.runAsScript + '\n);') as (...a: unknown[]) => unknown)(context, call.console, safeRequire);
  if (typeof script !== 'function') throw new Error('run_as_user_id_script_source of ' + name + ' does not define a function');
  const userId: unknown = await (script as () => unknown)();
  if (typeof userId !== 'string' || userId === '') throw new Error('run_as_user_id_script_source of ' + name + ' must return a user id string');
  const bound = (await hostOp(call, frame.id, 'frame.bindUser', { userId })) as { user: string | null };
  return { id: frame.id, system: false, user: bound.user };
}
async function invoke(call: Call, frame: Frame, fn: { name: string; source: string }, args: unknown): Promise<unknown> {
  const bound = await resolveRunAs(call, frame, fn.name);
  const result = await invokeNow(call, bound, fn, args);
  // App Services answered a returned cursor with its documents (the realm-tutorial's getMyTeamMembers returns
  // `await collection.find(...)` and its clients read the array).
  return isCursor(result) ? result.toArray() : result;
}
/** Runs the function in `frame` (its user known) and answers what it returns: a value, or its promise. */
function invokeNow(call: Call, frame: Frame, fn: { name: string; source: string }, args: unknown): unknown {
  const context = makeContext(call, frame);
  const exported = loadExport(fn.name, fn.source, context, call.console);
  if (typeof exported !== 'function') throw new Error("function '" + fn.name + "' does not assign a function to exports");
  return (exported as (...a: unknown[]) => unknown)(...(args as unknown[]));
}
/**
 * `context.functions.execute`: as in App Services, a synchronous function's value is returned as it is (code
 * written for App Services tests it without `await`), and an async function's promise as a promise. The
 * callee's frame comes from the host synchronously; where the host must first look its user up (a fixed
 * `run_as_user_id`), or a script picks that user, the call answers a promise.
 */
function executeNested(call: Call, frame: Frame, name: string, args: unknown[]): unknown {
  // Arguments are copied, as they would be between two separate calls.
  const copied = fromEjsonText(toEjsonText(args));
  const prepared = hostOpNow(call, frame.id, 'fn.prepare', { name }) as Prepared | { ticket: number };
  if ('ticket' in prepared) {
    return (hostOp(call, frame.id, 'fn.prepared', { ticket: prepared.ticket }) as Promise<Prepared>).then((ready) => invoke(call, ready.frame, ready.fn, copied));
  }
  if (prepared.frame.runAsScript !== undefined) return invoke(call, prepared.frame, prepared.fn, copied);
  const result = invokeNow(call, prepared.frame, prepared.fn, copied);
  return isCursor(result) ? result.toArray() : result;
}
type Prepared = { frame: Frame; fn: { name: string; source: string } };

function describeError(error: unknown): { name: string; message: string; stack?: string } {
  try {
    if (error instanceof Error) return { name: String(error.name), message: String(error.message), stack: String(error.stack || '') };
    if (typeof error === 'string') return { name: 'Error', message: error };
    return { name: 'Error', message: formatValue(error) };
  } catch {
    return { name: 'Error', message: 'the function threw a value that could not be described' };
  }
}

// ---------------------------------------------------------------- hardening and per-call reset
const ENABLE_OVERRIDE: Array<[object, string[]]> = [
  [Object.prototype, ['constructor', 'toString', 'valueOf', 'toLocaleString', 'hasOwnProperty']],
  [Function.prototype, ['constructor', 'toString', 'apply', 'call', 'bind']],
  [Array.prototype, ['toString']],
  [Error.prototype, ['constructor', 'message', 'name', 'toString']],
  [TypeError.prototype, ['constructor', 'message', 'name']],
  [RangeError.prototype, ['constructor', 'message', 'name']],
  [SyntaxError.prototype, ['constructor', 'message', 'name']],
  [ReferenceError.prototype, ['constructor', 'message', 'name']],
  [EvalError.prototype, ['constructor', 'message', 'name']],
  [URIError.prototype, ['constructor', 'message', 'name']],
];
// Assigning "obj.toString = f" must keep working when Object.prototype is frozen (the "override mistake"):
// these properties become accessors whose setter defines an own property on the receiver.
function enableOverride(proto: object, key: string): void {
  const desc = Object.getOwnPropertyDescriptor(proto, key);
  if (!desc || !('value' in desc) || !desc.configurable) return;
  const value: unknown = desc.value;
  Object.defineProperty(proto, key, {
    get() {
      return value;
    },
    set(this: object, next: unknown) {
      if (this === proto) throw new TypeError('Cannot assign to read only property ' + String(key) + ' of a frozen built-in prototype');
      Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
    },
    enumerable: desc.enumerable,
    configurable: false,
  });
}
function deepFreeze(root: unknown): void {
  const seen = new Set<unknown>([g]);
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const obj = stack.pop();
    if ((typeof obj !== 'object' && typeof obj !== 'function') || obj === null || seen.has(obj)) continue;
    seen.add(obj);
    Object.freeze(obj);
    stack.push(Object.getPrototypeOf(obj));
    const descs = Object.getOwnPropertyDescriptors(obj);
    for (const key of Reflect.ownKeys(descs)) {
      const d = descs[key as keyof typeof descs];
      if ('value' in d) stack.push(d.value);
      else {
        // Accessors are frozen as functions; they are never called unbound here.
        stack.push(d.get, d.set); // eslint-disable-line @typescript-eslint/unbound-method
      }
    }
  }
}

const api = { run, resolve: resolveOp };
// What the global object holds once hardened: anything else a call adds is removed after it.
let baselineGlobals = new Set<PropertyKey>();
let baselineGlobalProto: unknown = null;
const emptyPattern = /(?:)/;

// Removes what a call left on the global object. False when something could not be undone: the pool then
// retires the sandbox.
function resetGlobals(): boolean {
  let cleanState = true;
  for (const key of Reflect.ownKeys(g)) {
    if (baselineGlobals.has(key)) continue;
    if (!delete g[key]) cleanState = false;
  }
  if (Object.getPrototypeOf(g) !== baselineGlobalProto && !Reflect.setPrototypeOf(g, baselineGlobalProto as object | null)) cleanState = false;
  if (!Object.isExtensible(g)) cleanState = false;
  // The legacy RegExp statics (RegExp.$1, RegExp.input, lastMatch, ...) keep the last match of the context:
  // match an empty string so no call can read what the previous one matched.
  emptyPattern.exec('');
  return cleanState;
}

async function run(requestJson: string): Promise<string> {
  const request = JSON.parse(requestJson) as RunRequest;
  resetGlobals();
  const call = makeCall(request.token, request.request === undefined ? null : JSON.stringify(request.request), boot.limits);
  currentCall = call;
  let outcome: Outcome;
  try {
    const args = fromEjsonText(request.args) as unknown[];
    const response = request.http ? httpResponse(boot.limits.maxResultBytes) : undefined;
    if (response) {
      withBodyText(args[0]);
      args.push(response.object);
    }
    const result = await invoke(call, request.frame, request.fn, args);
    const text = toEjsonText(result);
    if (text.length > boot.limits.maxResultBytes) {
      throw new Error('the function result is ' + text.length + ' bytes of EJSON, above the limit of ' + boot.limits.maxResultBytes);
    }
    outcome = response ? { ok: true, result: text, http: response.state() } : { ok: true, result: text };
  } catch (error) {
    outcome = { ok: false, error: describeError(error) };
  }
  call.ended = true;
  call.timers.clear();
  forgetPending(call);
  currentCall = null;
  outcome.logs = call.logs;
  outcome.clean = resetGlobals();
  return JSON.stringify(outcome);
}

/**
 * Freezes the context: fixed globals, frozen intrinsics and everything reachable from them. Runs last, once
 * every function of this script exists (esbuild's name fixes for them run where they are declared).
 */
function harden(): void {
  const define = (name: string, value: unknown): void => {
    Object.defineProperty(g, name, { value, writable: false, enumerable: false, configurable: false });
  };
  define('Buffer', Buffer);
  define('URL', URL);
  define('URLSearchParams', URLSearchParams);
  define('EJSON', EJSON);
  // Functions see App Services' BSON (value types callable without new); packages' require('bson') the module.
  // The bundle declared BSON with var (writable, not configurable): assigned here, frozen with the rest below.
  g.BSON = appServicesBson(BSON);
  define('utils', utils);
  define('console', globalConsole);
  define('setTimeout', (fn: unknown, ms: unknown, ...args: unknown[]) => startTimer(fn, ms, args, false));
  define('setInterval', (fn: unknown, ms: unknown, ...args: unknown[]) => startTimer(fn, ms, args, true));
  define('setImmediate', (fn: unknown, ...args: unknown[]) => startTimer(fn, 0, args, false));
  define('clearTimeout', clearTimer);
  define('clearInterval', clearTimer);
  define('clearImmediate', clearTimer);
  define('queueMicrotask', (fn: unknown) => {
    void Promise.resolve().then(fn as () => void);
  });
  // Blocking or shared-memory primitives have no use in a function and only widen the attack surface.
  // FinalizationRegistry would let a finished call's code run later, during another caller's call.
  for (const name of ['SharedArrayBuffer', 'Atomics', 'WebAssembly', 'FinalizationRegistry']) delete g[name];

  // bson's ObjectId keeps its counter in a static property; keep it assignable (as a clamped number) once
  // the class is frozen.
  const objectIdClass = BSON.ObjectId as unknown as { index: number };
  let objectIdIndex = objectIdClass.index;
  Object.defineProperty(BSON.ObjectId, 'index', {
    get: () => objectIdIndex,
    set: (value: unknown) => {
      objectIdIndex = (Number(value) >>> 0) % 0xffffff;
    },
    configurable: false,
  });
  for (const [proto, keys] of ENABLE_OVERRIDE) for (const key of keys) enableOverride(proto, key);
  const intrinsicSeeds: unknown[] = [
    g,
    async function () {},
    function* () {},
    async function* () {},
    (function* () {})(),
    (async function* () {})(),
    [][Symbol.iterator](),
    new Map().entries(),
    new Set().values(),
    ''[Symbol.iterator](),
    /a/[Symbol.matchAll](''),
    Object.getPrototypeOf(Uint8Array),
    api,
    globalConsole,
    safeRequire,
    BUILTINS,
    makeCall,
    pending,
    factories,
  ];
  for (const key of Reflect.ownKeys(g)) {
    const d = Object.getOwnPropertyDescriptor(g, key) as PropertyDescriptor;
    if (d.configurable || d.writable) Object.defineProperty(g, key, 'value' in d ? { writable: false, configurable: false } : { configurable: false });
  }
  // The global object itself stays extensible (sloppy code assigns implicit globals); new globals are
  // removed after each call, see resetGlobals.
  const roots = intrinsicSeeds.filter((seed) => seed !== g);
  for (const key of Reflect.ownKeys(g)) {
    const d = Object.getOwnPropertyDescriptor(g, key);
    if (d && 'value' in d && d.value !== g) roots.push(d.value);
  }
  for (const root of roots) deepFreeze(root);
  baselineGlobals = new Set(Reflect.ownKeys(g));
  baselineGlobalProto = Object.getPrototypeOf(g);
}

harden();

// The script's completion value: what the host receives from evaluating the bundle.
export const entryPoints = api;
