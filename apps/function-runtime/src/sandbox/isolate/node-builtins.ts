/**
 * Runs INSIDE the sandbox isolate (bundled into the prelude): the Node built-ins App Services offered to
 * functions and their packages beyond `buffer`, `crypto` and `url` (which the prelude builds): `path`
 * (POSIX), `util`, `events`, `querystring`, `assert`, `stream` and `zlib`. Written for the sandbox: no host
 * object is reachable from them; `zlib` compresses on the host through a string-in, string-out callback.
 */
import type { Buffer as BufferClass } from './buffer';

type BufferType = typeof BufferClass;

// ---------------------------------------------------------------- path (POSIX)
function normalizeParts(parts: string[], absolute: boolean): string[] {
  const out: string[] = [];
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
    } else out.push(part);
  }
  return out;
}
function assertPath(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError('The "path" argument must be of type string');
  return value;
}
const path = {
  sep: '/',
  delimiter: ':',
  normalize(p: unknown): string {
    const s = assertPath(p);
    if (s === '') return '.';
    const absolute = s.startsWith('/');
    const joined = normalizeParts(s.split('/'), absolute).join('/');
    const trailing = s.endsWith('/') && joined !== '' ? '/' : '';
    return (absolute ? '/' : '') + (joined || (absolute ? '' : '.')) + trailing;
  },
  join(...parts: unknown[]): string {
    const joined = parts.map(assertPath).filter((p) => p !== '').join('/');
    return joined === '' ? '.' : path.normalize(joined);
  },
  resolve(...parts: unknown[]): string {
    let resolved = '';
    for (let i = parts.length - 1; i >= 0 && !resolved.startsWith('/'); i--) {
      const p = assertPath(parts[i]);
      if (p !== '') resolved = p + (resolved ? '/' + resolved : '');
    }
    if (!resolved.startsWith('/')) resolved = '/' + resolved;
    return '/' + normalizeParts(resolved.split('/'), true).join('/');
  },
  isAbsolute: (p: unknown): boolean => assertPath(p).startsWith('/'),
  dirname(p: unknown): string {
    const s = assertPath(p).replace(/\/+$/, '');
    if (s === '') return assertPath(p).startsWith('/') ? '/' : '.';
    const at = s.lastIndexOf('/');
    return at < 0 ? '.' : at === 0 ? '/' : s.slice(0, at);
  },
  basename(p: unknown, ext?: unknown): string {
    const s = assertPath(p).replace(/\/+$/, '');
    const base = s.slice(s.lastIndexOf('/') + 1);
    return typeof ext === 'string' && ext !== base && base.endsWith(ext) ? base.slice(0, base.length - ext.length) : base;
  },
  extname(p: unknown): string {
    const base = path.basename(p);
    const at = base.lastIndexOf('.');
    return at <= 0 ? '' : base.slice(at);
  },
  relative(from: unknown, to: unknown): string {
    const a = path.resolve(from).split('/').filter(Boolean);
    const b = path.resolve(to).split('/').filter(Boolean);
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/');
  },
  parse(p: unknown) {
    const s = assertPath(p);
    const base = path.basename(s);
    const ext = path.extname(s);
    const dir = s.includes('/') ? path.dirname(s) : '';
    return { root: s.startsWith('/') ? '/' : '', dir, base, ext, name: ext ? base.slice(0, base.length - ext.length) : base };
  },
  format(o: { root?: string; dir?: string; base?: string; name?: string; ext?: string }): string {
    const base = o.base ?? (o.name ?? '') + (o.ext ?? '');
    const dir = o.dir ?? o.root ?? '';
    return dir ? (dir.endsWith('/') ? dir + base : dir + '/' + base) : base;
  },
  toNamespacedPath: (p: unknown): unknown => p,
  posix: undefined as unknown,
};
path.posix = path;

// ---------------------------------------------------------------- util
function inspect(value: unknown, depth = 2, seen: unknown[] = []): string {
  if (typeof value === 'string') return seen.length === 0 ? value : "'" + value + "'";
  if (typeof value === 'function') return '[Function: ' + ((value as { name?: string }).name || 'anonymous') + ']';
  if (typeof value === 'bigint') return String(value) + 'n';
  if (value === null || typeof value !== 'object') return String(value);
  if (value instanceof Error) return value.stack || String(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof RegExp) return String(value);
  if (seen.includes(value)) return '[Circular]';
  if (seen.length > depth) return Array.isArray(value) ? '[Array]' : '[Object]';
  const next = [...seen, value];
  if (Array.isArray(value)) return '[ ' + value.map((v) => inspect(v, depth, next)).join(', ') + ' ]';
  const entries = Object.keys(value).map((k) => k + ': ' + inspect((value as Record<string, unknown>)[k], depth, next));
  return entries.length ? '{ ' + entries.join(', ') + ' }' : '{}';
}
function format(first?: unknown, ...rest: unknown[]): string {
  if (typeof first !== 'string') return [first, ...rest].map((v) => inspect(v)).join(' ');
  let i = 0;
  const out = first.replace(/%([sdifjoO%])/g, (match, kind: string) => {
    if (kind === '%') return '%';
    if (i >= rest.length) return match;
    const arg = rest[i++];
    switch (kind) {
      case 's':
        return typeof arg === 'string' ? arg : inspect(arg, 1, [{}]);
      case 'd':
      case 'i':
        return String(kind === 'i' ? parseInt(String(arg), 10) : Number(arg));
      case 'f':
        return String(parseFloat(String(arg)));
      case 'j':
        try {
          return JSON.stringify(arg);
        } catch {
          return '[Circular]';
        }
      default:
        return inspect(arg, 2, [{}]);
    }
  });
  return [out, ...rest.slice(i).map((v) => inspect(v, 2, [{}]))].join(' ');
}
const custom = Symbol.for('nodejs.util.promisify.custom');
function promisify(fn: unknown): unknown {
  if (typeof fn !== 'function') throw new TypeError('The "original" argument must be of type function');
  const own = (fn as unknown as Record<symbol, unknown>)[custom];
  if (typeof own === 'function') return own;
  return function (this: unknown, ...args: unknown[]) {
    return new Promise((resolve, reject) => {
      (fn as (...a: unknown[]) => void).call(this, ...args, (error: unknown, value: unknown) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(value)));
    });
  };
}
function callbackify(fn: unknown): unknown {
  return function (this: unknown, ...args: unknown[]) {
    const callback = args.pop() as (error: unknown, value?: unknown) => void;
    (fn as (...a: unknown[]) => Promise<unknown>).apply(this, args).then(
      (value) => callback(null, value),
      (error: unknown) => callback(error || new Error('Promise was rejected with a falsy value')),
    );
  };
}
function inherits(ctor: { prototype: object; super_?: unknown }, superCtor: { prototype: object }): void {
  Object.defineProperty(ctor, 'super_', { value: superCtor, writable: true, configurable: true });
  Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
}
function isDeepStrictEqual(a: unknown, b: unknown, seen: unknown[] = []): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof RegExp && b instanceof RegExp) return String(a) === String(b);
  if (seen.includes(a)) return true;
  if (a instanceof Map && b instanceof Map) return a.size === b.size && [...a].every(([k, v]) => b.has(k) && isDeepStrictEqual(v, b.get(k), [...seen, a]));
  if (a instanceof Set && b instanceof Set) return a.size === b.size && [...a].every((v) => b.has(v));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && isDeepStrictEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], [...seen, a]));
}
const util = {
  format,
  inspect: (value: unknown, options?: { depth?: number }) => inspect(value, options?.depth ?? 2, [{}]),
  inherits,
  promisify: Object.assign(promisify, { custom }),
  callbackify,
  deprecate: <T>(fn: T): T => fn,
  isDeepStrictEqual: (a: unknown, b: unknown) => isDeepStrictEqual(a, b),
  isArray: Array.isArray,
  types: {
    isDate: (v: unknown) => v instanceof Date,
    isRegExp: (v: unknown) => v instanceof RegExp,
    isPromise: (v: unknown) => v instanceof Promise,
    isMap: (v: unknown) => v instanceof Map,
    isSet: (v: unknown) => v instanceof Set,
    isTypedArray: (v: unknown) => ArrayBuffer.isView(v) && !(v instanceof DataView),
    isUint8Array: (v: unknown) => v instanceof Uint8Array,
  },
  TextEncoder: globalThis.TextEncoder,
  TextDecoder: globalThis.TextDecoder,
};

// ---------------------------------------------------------------- events
type Listener = ((...args: unknown[]) => unknown) & { listener?: unknown };
class EventEmitter {
  static defaultMaxListeners = 10;
  private _maxListeners?: number;
  /** Made on first use, so that old-style subclasses (`EventEmitter.call(this)`, util.inherits) work too. */
  private get _events(): Map<string | symbol, Listener[]> {
    const own = Object.getOwnPropertyDescriptor(this, '__events')?.value as Map<string | symbol, Listener[]> | undefined;
    if (own) return own;
    const made = new Map<string | symbol, Listener[]>();
    Object.defineProperty(this, '__events', { value: made, writable: true, configurable: true, enumerable: false });
    return made;
  }
  on(name: string | symbol, listener: Listener): this {
    return this.addListener(name, listener);
  }
  addListener(name: string | symbol, listener: Listener, prepend = false): this {
    if (typeof listener !== 'function') throw new TypeError('The "listener" argument must be of type function');
    if (this._events.has('newListener')) this.emit('newListener', name, listener.listener ?? listener);
    const list = this._events.get(name) ?? [];
    if (prepend) list.unshift(listener);
    else list.push(listener);
    this._events.set(name, list);
    return this;
  }
  prependListener(name: string | symbol, listener: Listener): this {
    return this.addListener(name, listener, true);
  }
  once(name: string | symbol, listener: Listener): this {
    return this.on(name, this.onceWrapper(name, listener));
  }
  prependOnceListener(name: string | symbol, listener: Listener): this {
    return this.prependListener(name, this.onceWrapper(name, listener));
  }
  private onceWrapper(name: string | symbol, listener: Listener): Listener {
    const wrapped: Listener = (...args: unknown[]) => {
      this.removeListener(name, wrapped);
      return listener.apply(this, args);
    };
    wrapped.listener = listener;
    return wrapped;
  }
  off(name: string | symbol, listener: Listener): this {
    return this.removeListener(name, listener);
  }
  removeListener(name: string | symbol, listener: Listener): this {
    const list = this._events.get(name);
    if (!list) return this;
    const at = list.findIndex((l) => l === listener || l.listener === listener);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this._events.delete(name);
    if (at >= 0 && this._events.has('removeListener')) this.emit('removeListener', name, listener);
    return this;
  }
  removeAllListeners(name?: string | symbol): this {
    if (name === undefined) this._events.clear();
    else this._events.delete(name);
    return this;
  }
  emit(name: string | symbol, ...args: unknown[]): boolean {
    const list = this._events.get(name);
    if (!list || list.length === 0) {
      if (name === 'error') throw args[0] instanceof Error ? args[0] : new Error('Unhandled error. (' + String(args[0]) + ')');
      return false;
    }
    for (const listener of [...list]) listener.apply(this, args);
    return true;
  }
  listeners(name: string | symbol): unknown[] {
    return (this._events.get(name) ?? []).map((l) => l.listener ?? l);
  }
  rawListeners(name: string | symbol): unknown[] {
    return [...(this._events.get(name) ?? [])];
  }
  listenerCount(name: string | symbol): number {
    return this._events.get(name)?.length ?? 0;
  }
  eventNames(): Array<string | symbol> {
    return [...this._events.keys()];
  }
  setMaxListeners(n: number): this {
    this._maxListeners = n;
    return this;
  }
  getMaxListeners(): number {
    return this._maxListeners ?? EventEmitter.defaultMaxListeners;
  }
}
/**
 * What `require('events')` gives: a plain constructor function over the class's prototype, since packages
 * written for older Node call it without `new` (`EventEmitter.call(this)`), which a class forbids.
 */
function emitterConstructor(): typeof EventEmitter {
  const EventEmitterFunction = function EventEmitter(): void {} as unknown as typeof EventEmitter;
  EventEmitterFunction.prototype = EventEmitter.prototype;
  Object.defineProperty(EventEmitter.prototype, 'constructor', { value: EventEmitterFunction, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(EventEmitterFunction, 'defaultMaxListeners', { value: 10, writable: true, enumerable: true });
  return EventEmitterFunction;
}

function eventsModule(): unknown {
  const Emitter = emitterConstructor();
  const once = (emitter: EventEmitter, name: string | symbol): Promise<unknown[]> =>
    new Promise((resolve, reject) => {
      const onError = (error: unknown): void => {
        emitter.removeListener(name, onEvent);
        reject(error instanceof Error ? error : new Error(String(error)));
      };
      const onEvent = (...args: unknown[]): void => {
        if (name !== 'error') emitter.removeListener('error', onError);
        resolve(args);
      };
      emitter.once(name, onEvent);
      if (name !== 'error') emitter.once('error', onError);
    });
  return Object.assign(Emitter, { EventEmitter: Emitter, once });
}

// ---------------------------------------------------------------- querystring
function qsEscape(value: unknown): string {
  return encodeURIComponent(String(value));
}
function qsUnescape(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
function qsStringify(obj: unknown, sep = '&', eq = '='): string {
  if (!obj || typeof obj !== 'object') return '';
  const encode = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? qsEscape(v) : '');
  return Object.keys(obj)
    .map((key) => {
      const value = (obj as Record<string, unknown>)[key];
      const k = qsEscape(key) + eq;
      return Array.isArray(value) ? value.map((v) => k + encode(v)).join(sep) : k + encode(value);
    })
    .join(sep);
}
function qsParse(text: unknown, sep = '&', eq = '='): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  if (typeof text !== 'string' || text === '') return out;
  for (const pair of text.split(sep)) {
    if (pair === '') continue;
    const at = pair.indexOf(eq);
    const key = qsUnescape((at < 0 ? pair : pair.slice(0, at)).replace(/\+/g, ' '));
    const value = at < 0 ? '' : qsUnescape(pair.slice(at + eq.length).replace(/\+/g, ' '));
    const prior = out[key];
    out[key] = prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return out;
}
const querystring = { stringify: qsStringify, encode: qsStringify, parse: qsParse, decode: qsParse, escape: qsEscape, unescape: qsUnescape };

// ---------------------------------------------------------------- assert
class AssertionError extends Error {
  code = 'ERR_ASSERTION';
  constructor(readonly options: { message?: string; actual?: unknown; expected?: unknown; operator?: string }) {
    super(options.message ?? inspect(options.actual, 2, [{}]) + ' ' + (options.operator ?? '==') + ' ' + inspect(options.expected, 2, [{}]));
    this.name = 'AssertionError';
  }
  get actual(): unknown {
    return this.options.actual;
  }
  get expected(): unknown {
    return this.options.expected;
  }
}
function fail(message: unknown, actual: unknown, expected: unknown, operator: string): never {
  if (message instanceof Error) throw message;
  throw new AssertionError({ ...(typeof message === 'string' ? { message } : {}), actual, expected, operator });
}
function matches(error: unknown, expected: unknown): boolean {
  if (expected === undefined) return true;
  if (typeof expected === 'function') return expected.prototype !== undefined && error instanceof (expected as new () => unknown) ? true : expected.prototype === undefined ? (expected as (e: unknown) => unknown)(error) === true : false;
  if (expected instanceof RegExp) return expected.test(String(error instanceof Error ? error.message : error));
  if (typeof expected === 'object' && expected !== null) return Object.keys(expected).every((k) => isDeepStrictEqual((error as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k]));
  return false;
}
function assertModule(): unknown {
  const assert = (value: unknown, message?: unknown): void => {
    if (!value) fail(message ?? 'The expression evaluated to a falsy value', value, true, '==');
  };
  return Object.assign(assert, {
    ok: assert,
    AssertionError,
    fail: (message?: unknown) => fail(message ?? 'Failed', undefined, undefined, 'fail'),
    equal: (a: unknown, b: unknown, m?: unknown) => void (a == b || Object.is(a, b) || fail(m, a, b, '==')),
    notEqual: (a: unknown, b: unknown, m?: unknown) => void (a != b || fail(m, a, b, '!=')),
    strictEqual: (a: unknown, b: unknown, m?: unknown) => void (Object.is(a, b) || fail(m, a, b, 'strictEqual')),
    notStrictEqual: (a: unknown, b: unknown, m?: unknown) => void (!Object.is(a, b) || fail(m, a, b, 'notStrictEqual')),
    deepEqual: (a: unknown, b: unknown, m?: unknown) => void (isDeepStrictEqual(a, b) || fail(m, a, b, 'deepEqual')),
    deepStrictEqual: (a: unknown, b: unknown, m?: unknown) => void (isDeepStrictEqual(a, b) || fail(m, a, b, 'deepStrictEqual')),
    notDeepStrictEqual: (a: unknown, b: unknown, m?: unknown) => void (!isDeepStrictEqual(a, b) || fail(m, a, b, 'notDeepStrictEqual')),
    throws(fn: () => unknown, expected?: unknown, m?: unknown) {
      try {
        fn();
      } catch (error) {
        if (!matches(error, expected)) throw error;
        return;
      }
      fail(typeof expected === 'string' ? expected : m ?? 'Missing expected exception.', undefined, expected, 'throws');
    },
    async rejects(promise: unknown, expected?: unknown, m?: unknown) {
      try {
        await (typeof promise === 'function' ? (promise as () => Promise<unknown>)() : promise);
      } catch (error) {
        if (!matches(error, expected)) throw error;
        return;
      }
      fail(typeof expected === 'string' ? expected : m ?? 'Missing expected rejection.', undefined, expected, 'rejects');
    },
    doesNotThrow(fn: () => unknown) {
      fn();
    },
    match: (s: string, re: RegExp, m?: unknown) => void (re.test(s) || fail(m, s, re, 'match')),
  });
}

// ---------------------------------------------------------------- stream (synchronous, object-or-chunk streams)
function streamModule(): unknown {
  class Stream extends EventEmitter {
    pipe<T extends { write(chunk: unknown): unknown; end(): unknown }>(destination: T): T {
      this.on('data', (chunk) => destination.write(chunk));
      this.on('end', () => destination.end());
      return destination;
    }
  }
  class Readable extends Stream {
    readable = true;
    private ended = false;
    constructor(private readonly options: { read?: () => void } = {}) {
      super();
    }
    push(chunk: unknown): boolean {
      if (chunk === null) {
        if (!this.ended) {
          this.ended = true;
          queueMicrotask(() => this.emit('end'));
        }
        return false;
      }
      queueMicrotask(() => this.emit('data', chunk));
      return true;
    }
    override on(name: string | symbol, listener: Listener): this {
      super.on(name, listener);
      if (name === 'data' && this.options.read) queueMicrotask(() => this.options.read?.call(this));
      return this;
    }
    static from(iterable: Iterable<unknown>): Readable {
      const stream = new Readable();
      for (const chunk of iterable) stream.push(chunk);
      stream.push(null);
      return stream;
    }
    async *[Symbol.asyncIterator](): AsyncGenerator<unknown> {
      const chunks: unknown[] = [];
      let done = false;
      let wake: (() => void) | undefined;
      this.on('data', (chunk) => {
        chunks.push(chunk);
        wake?.();
      });
      this.on('end', () => {
        done = true;
        wake?.();
      });
      while (!done || chunks.length > 0) {
        if (chunks.length > 0) yield chunks.shift();
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    }
  }
  type WriteFn = (chunk: unknown, encoding: string, callback: (error?: unknown) => void) => void;
  class Writable extends Stream {
    writable = true;
    constructor(private readonly writeOptions: { write?: WriteFn; final?: (callback: () => void) => void } = {}) {
      super();
    }
    write(chunk: unknown, encoding?: unknown, callback?: () => void): boolean {
      const done = typeof encoding === 'function' ? (encoding as () => void) : callback;
      const write = this.writeOptions.write ?? ((c: unknown, e: string, cb: () => void) => (this as unknown as { _write?: WriteFn })._write?.(c, e, cb) ?? cb());
      write.call(this, chunk, typeof encoding === 'string' ? encoding : 'utf8', (error?: unknown) => (error ? this.emit('error', error) : done?.()));
      return true;
    }
    end(chunk?: unknown): this {
      if (chunk !== undefined && typeof chunk !== 'function') this.write(chunk);
      const finish = (): void => void queueMicrotask(() => this.emit('finish'));
      if (this.writeOptions.final) this.writeOptions.final.call(this, finish);
      else finish();
      return this;
    }
  }
  class Transform extends Readable {
    constructor(private readonly transformOptions: { transform?: (chunk: unknown, encoding: string, callback: (error?: unknown, data?: unknown) => void) => void; flush?: (callback: (error?: unknown, data?: unknown) => void) => void } = {}) {
      super();
    }
    write(chunk: unknown): boolean {
      const transform = this.transformOptions.transform ?? ((c: unknown, _e: string, cb: (error?: unknown, data?: unknown) => void) => cb(undefined, c));
      transform.call(this, chunk, 'utf8', (error, data) => {
        if (error) this.emit('error', error);
        else if (data !== undefined && data !== null) this.push(data);
      });
      return true;
    }
    end(chunk?: unknown): this {
      if (chunk !== undefined) this.write(chunk);
      const close = (error?: unknown, data?: unknown): void => {
        if (error) this.emit('error', error);
        if (data !== undefined && data !== null) this.push(data);
        this.push(null);
      };
      if (this.transformOptions.flush) this.transformOptions.flush.call(this, close);
      else close();
      return this;
    }
  }
  class PassThrough extends Transform {}
  const Duplex = Transform;
  return Object.assign(Stream, { Stream, Readable, Writable, Transform, PassThrough, Duplex });
}

// ---------------------------------------------------------------- zlib (on the host)
/** (operation, input as base64) -> output as base64; throws with the host's message. */
export type HostZlib = (op: string, inputBase64: string) => string;

function zlibModule(hostZlib: HostZlib, Buffer: BufferType, toBuffer: (value: unknown) => InstanceType<BufferType>): unknown {
  const ops = ['deflateSync', 'inflateSync', 'deflateRawSync', 'inflateRawSync', 'gzipSync', 'gunzipSync', 'unzipSync', 'brotliCompressSync', 'brotliDecompressSync'] as const;
  const module: Record<string, unknown> = {};
  for (const op of ops) {
    const sync = (input: unknown): unknown => Buffer.from(hostZlib(op, toBuffer(input).toString('base64')), 'base64');
    module[op] = sync;
    const name = op.slice(0, -4);
    module[name] = (input: unknown, options: unknown, callback?: unknown) => {
      const done = (typeof options === 'function' ? options : callback) as (error: unknown, value?: unknown) => void;
      let result: unknown;
      try {
        result = sync(input);
      } catch (error) {
        queueMicrotask(() => done(error));
        return;
      }
      queueMicrotask(() => done(null, result));
    };
  }
  return module;
}

/** The built-ins of this file, by the name a `require` uses. */
export function nodeBuiltins(hostZlib: HostZlib, Buffer: BufferType, toBuffer: (value: unknown) => InstanceType<BufferType>): Record<string, unknown> {
  return {
    path,
    util,
    events: eventsModule(),
    querystring,
    assert: assertModule(),
    stream: streamModule(),
    zlib: zlibModule(hostZlib, Buffer, toBuffer),
  };
}
