/**
 * Runs an app's functions in warm isolated-vm sandboxes and serves what they ask of the host: data access,
 * nested function calls, HTTP, run-as identities. It decides who a function runs as and whether a client may
 * call it; it never evaluates user code on the host and never reads configuration from the environment.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { type Caller, type CallerUser, type HttpCall, type HttpResponseState, MessageHeaders, SYSTEM_CALLER_USER, type UnsavedSource } from '@tessera/contracts';
import { importsAsRequires } from '@tessera/app-config';
import type { CancelSignal } from '@tessera/domain';
import { encodeEjson } from '@tessera/messaging';
import { EJSON } from 'bson';
import { assertValidFunctionConfig, hasCanEvaluate, privateCallRefusal, runAsMode, type FunctionConfig } from './config/function-config';
import type { CallOrigin, ExecutionLogEntry, ExecutionLogStore, TriggerRun } from './execution-logs/execution-log.store';
import { loggedArgumentsEjson } from './execution-logs/logged-arguments';
import { FunctionRuntimeError, FunctionRuntimeErrorCode } from './function-runtime.error';
import {
  DEFAULT_FUNCTION_RUNTIME_OPTIONS,
  type CanEvaluateEvaluator,
  type FunctionRequestInfo,
  type FunctionRuntimeOptions,
} from './function-runtime.options';
import type { AppFunctions, AppFunctionsPort, DeployedFunction } from './ports/app-functions.port';
import { CallSessions } from './call-sessions';
import type { DataAccessCall, DataAccessPort } from './ports/data-access.port';
import type { HttpPort, OutboundHttpRequest } from './ports/http.port';
import type { UsersPort } from './ports/identity';
import type { ValuesPort } from './ports/values.port';
import type { DependenciesPort } from './sandbox/dependencies/dependencies.port';
import { Sandbox, type SandboxFrame, type SandboxOutcome } from './sandbox/sandbox';
import { SandboxPool } from './sandbox/sandbox-pool';

export const FUNCTION_RUNTIME_CONFIG = Symbol('FUNCTION_RUNTIME_CONFIG');

/** Everything the runtime needs from outside, as ports. */
export interface FunctionRuntimeDependencies {
  functions: AppFunctionsPort;
  dataAccess: DataAccessPort;
  values: ValuesPort;
  http: HttpPort;
  logs: ExecutionLogStore;
  /** Looks up users for run_as_user_id; without it such a user has only an id. */
  users?: UsersPort;
  /** Evaluates can_evaluate; without it a function with a can_evaluate expression refuses client calls. */
  canEvaluate?: CanEvaluateEvaluator;
  /** The app's uploaded dependencies; without it functions require only the built-ins. */
  dependencies?: DependenciesPort;
}

export interface FunctionRuntimeConfig {
  dependencies: FunctionRuntimeDependencies;
  options?: Partial<FunctionRuntimeOptions>;
}

export interface ExecuteFunctionRequest {
  appId: string;
  name: string;
  /** The arguments as BSON values (what EJSON.parse gives); they are copied into the sandbox. */
  arguments: unknown[];
  /** Who asks, as the bus carried it: `context.user` shows this identity unchanged. */
  caller: Caller;
  /** `client` and `http` calls are refused for private functions and checked against can_evaluate. */
  origin: CallOrigin;
  /** For calls over HTTP: becomes `context.request`. */
  request?: FunctionRequestInfo;
  /** Correlation id of the request, kept in the execution log. */
  correlationId?: string;
  /** Trace id of the request, kept in the execution log. */
  traceId?: string;
  /**
   * Correlation id and trace context to pass on to the messages the call sends on the way (a rule's
   * `%function` in its data access): those of the message that asked for the call. Without them, the
   * correlation id alone when there is one.
   */
  headers?: Readonly<Record<string, string>>;
  /** The trigger that fired the call (origin `trigger`): the run is logged as that trigger's run. */
  trigger?: TriggerRun;
  /**
   * The call serves an HTTP request (an HTTPS endpoint or an incoming webhook): the sandbox adds App Services'
   * `response` object as the last argument, and the result carries what the function set on it. A webhook
   * runs its own source (`service`/`webhook`), not an app function. Logged as `ENDPOINT` or `WEBHOOK`.
   */
  http?: HttpCall;
  /** Unsaved source run instead of the deployed function `name`: the admin API's debug run (the handler passes on no other's). */
  source?: UnsavedSource;
  /**
   * Aborts when the caller stops waiting (its client disconnected, its deadline passed): the call is
   * terminated wherever it is and its sandbox freed for the next call.
   */
  signal?: CancelSignal;
}

/** The outcome of a successful call. `result` is parsed from `resultEjson` on first use only. */
export class ExecutionResult {
  private parsed: { value: unknown } | undefined;

  constructor(
    /** The result as canonical EJSON text, ready for the wire. */
    readonly resultEjson: string,
    readonly executionId: string,
    readonly logs: string[],
    readonly durationMs: number,
    /** For a call with `http`: what the function set on its `response` object. */
    readonly http?: HttpResponseState,
  ) {}

  /** The result as BSON values (relaxed EJSON parse). */
  get result(): unknown {
    this.parsed ??= { value: EJSON.parse(this.resultEjson, { relaxed: true }) };
    return this.parsed.value;
  }
}

export type ExecuteFunctionResult = ExecutionResult;

/**
 * Who a frame runs as. `system` frames access data without rules; otherwise data access runs as `user`.
 * `shown` is what `context.user` shows: the run-as user, except that a run_as_system function still shows
 * its caller (App Services functions commonly run as system and act for `context.user.id`).
 */
interface BoundIdentity {
  system: boolean;
  user: CallerUser;
  shown: CallerUser;
}
type Identity = BoundIdentity | { pending: true; parent: number };

/** What a nested call (`context.functions.execute`) needs to run: its frame and source. */
interface PreparedCall {
  frame: SandboxFrame;
  fn: { name: string; source: string };
}

interface CallState {
  appId: string;
  app: AppFunctions;
  frames: Map<number, Identity>;
  nextFrameId: number;
  nestedCalls: number;
  /** Nested calls whose frame the host is still making (a fixed run_as_user_id's user being read), by ticket. */
  preparing?: Map<number, Promise<PreparedCall>>;
  /** What the call's data access passes on to the messages it sends (see ExecuteFunctionRequest.headers). */
  headers: Readonly<Record<string, string>> | undefined;
  /**
   * The Data API's run-as script: it only names a user, and the gateway decides what a missing one means
   * (401 InvalidSession, as a fixed `run_as_user_id` naming nobody), so an unknown id is bound as is.
   */
  namesUserOnly?: boolean;
  /** The sessions the call opened with `startSession()`, made at the first; ended when the call ends. */
  sessions?: CallSessions;
}

@Injectable()
export class FunctionRuntimeService implements OnModuleDestroy {
  private readonly options: FunctionRuntimeOptions;
  private readonly deps: FunctionRuntimeDependencies;
  private readonly pools = new Map<string, SandboxPool>();
  private readonly validated = new WeakSet<FunctionConfig>();
  private readonly sweeper: NodeJS.Timeout | undefined;
  /** Calls running now, so that shutdown can wait for them to stop (a count: a set of promises cost each call two more). */
  private runningCalls = 0;
  /** Resolved when the last running call ends, while shutdown waits for it. */
  private allStopped: (() => void) | undefined;
  /** Log entries of finished calls not yet handed to the log store, so that shutdown can wait for them. */
  private readonly recording = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;

  constructor(@Inject(FUNCTION_RUNTIME_CONFIG) config: FunctionRuntimeConfig) {
    this.deps = config.dependencies;
    this.options = { ...DEFAULT_FUNCTION_RUNTIME_OPTIONS, ...config.options };
    const ttl = this.options.idleSandboxTtlMs;
    if (ttl > 0) {
      this.sweeper = setInterval(() => this.evictIdleSandboxes(), Math.max(10, Math.min(ttl / 2, 60_000)));
      this.sweeper.unref();
    }
  }

  async execute(request: ExecuteFunctionRequest): Promise<ExecuteFunctionResult> {
    if (this.closing) throw new FunctionRuntimeError(FunctionRuntimeErrorCode.ServiceUnavailable, 'the function runtime is shutting down; retry the call');
    this.runningCalls++;
    try {
      return await this.run(request);
    } finally {
      if (--this.runningCalls === 0) this.allStopped?.();
    }
  }

  private async run(request: ExecuteFunctionRequest): Promise<ExecuteFunctionResult> {
    const startedAt = new Date();
    const started = performance.now();
    if (!Array.isArray(request.arguments)) {
      throw new FunctionRuntimeError(FunctionRuntimeErrorCode.ArgumentsNotAllowed, 'arguments must be an array');
    }
    let app: AppFunctions | null;
    try {
      app = await this.deps.functions.getFunctions(request.appId);
    } catch (error) {
      throw this.internalError(error);
    }
    const fn = deployedFunctionOf(app, request);
    if (!app || !fn) throw new FunctionRuntimeError(FunctionRuntimeErrorCode.FunctionNotFound, notFoundMessage(request));
    this.assertValid(fn.config);

    const executionId = randomUUID();
    const callerId = request.caller.type === 'system' ? 'system' : request.caller.user.id;
    let runAsId = callerId;
    let logs: string[] = [];
    let memory: number | Promise<number> = 0;
    let argsEjson: string | undefined;
    // The Data API's script is logged in its request's own ENDPOINT entry (one request, one entry), not here.
    const namesUserOnly = request.http?.kind === 'data-api';
    try {
      // Checked without a promise unless can_evaluate must be evaluated (a call's path awaits as little as it can).
      const mayCall =
        request.origin === 'client' || request.origin === 'http' ? this.assertClientMayCall(request, fn, request.origin === 'client') : request.source && hasCanEvaluate(fn.config) ? this.assertCanEvaluate(request, fn) : undefined;
      if (mayCall) await mayCall;
      try {
        // What EJSON.stringify(arguments, { relaxed: false }) writes (and throws), without bson's walk per value.
        argsEjson = JSON.stringify(encodeEjson(request.arguments));
      } catch (error) {
        throw new FunctionRuntimeError(FunctionRuntimeErrorCode.ArgumentsNotAllowed, 'arguments must be EJSON-serialisable values', { cause: error });
      }
      const state: CallState = { appId: request.appId, app, frames: new Map(), nextFrameId: 1, nestedCalls: 0, headers: outgoingHeaders(request), namesUserOnly };
      state.frames.set(
        0,
        request.caller.type === 'system'
          ? { system: true, user: SYSTEM_CALLER_USER, shown: SYSTEM_CALLER_USER }
          : { system: false, user: request.caller.user, shown: request.caller.user },
      );
      const framed = this.frameFor(state, fn.config, 0);
      const frame = framed instanceof Promise ? await framed : framed;
      const { sandbox, pool } = this.idleSandbox(request.appId, app, request.signal) ?? (await this.acquire(request.appId, app, request.signal));
      let outcome: SandboxOutcome;
      try {
        outcome = await sandbox.run(
          { frame, fn: { name: request.name, source: fn.source }, args: argsEjson, request: request.request, ...(request.http ? { http: true } : {}) },
          (op, frameId, payload) => this.serve(state, op, frameId, payload),
          request.signal,
          (op, frameId, payload) => this.serveNow(state, op, frameId, payload),
        );
        memory = sandbox.heapReading();
      } finally {
        pool.release(sandbox);
        if (state.sessions) await state.sessions.close();
      }
      runAsId = identityId(state.frames.get(frame.id)) ?? runAsId;
      if (outcome.kind === 'ok' || outcome.kind === 'error') logs = outcome.logs;
      const resultEjson = this.unwrap(outcome);
      const durationMs = performance.now() - started;
      if (!namesUserOnly) this.record({ executionId, request, fn, startedAt, durationMs, callerId, runAsId, memory, logs, argsEjson });
      return new ExecutionResult(resultEjson, executionId, logs, durationMs, outcome.kind === 'ok' ? outcome.http : undefined);
    } catch (error) {
      const failure = error instanceof FunctionRuntimeError ? error : request.signal?.aborted ? cancelledError() : this.internalError(error);
      const durationMs = performance.now() - started;
      if (!namesUserOnly) this.record({ executionId, request, fn, startedAt, durationMs, callerId, runAsId, memory, logs, argsEjson, error: failure });
      throw failure;
    }
  }

  /** Retires the warm sandboxes of an app (call it on deploy); the next call starts fresh ones. */
  invalidate(appId: string): void {
    this.pools.get(appId)?.retire();
    this.pools.delete(appId);
  }

  /**
   * Starts one sandbox for the app ahead of its first call (a call that comes meanwhile waits for it): none for
   * an app without functions, nor for one whose sandboxes a call already started.
   */
  async warm(appId: string): Promise<void> {
    if (this.closing || this.pools.has(appId)) return;
    const app = await this.deps.functions.getFunctions(appId);
    if (!app || (app.functions.size === 0 && !app.webhooks?.size && !app.dataApiRunAs)) return;
    if (this.closing || this.pools.has(appId)) return;
    await this.poolFor(appId, app.version).prestart();
  }

  /** Sandboxes of an app running a call now. */
  busySandboxCount(appId: string): number {
    return this.pools.get(appId)?.busyCount ?? 0;
  }

  /** Live sandboxes of an app (idle or busy). */
  sandboxCount(appId: string): number {
    return this.pools.get(appId)?.liveCount ?? 0;
  }

  /**
   * Stops the runtime: new calls are refused, idle sandboxes disposed, and calls still running terminated
   * (their callers get ServiceUnavailable); resolves once they have stopped. The host drains first, so only
   * calls that outlived the drain are cut. An isolate left running would keep its thread spinning and hold
   * the process at exit, so this must run before the process exits.
   */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    for (const pool of this.pools.values()) {
      pool.retire();
      pool.terminateBusy();
    }
    this.pools.clear();
    if (this.runningCalls > 0) await new Promise<void>((resolve) => (this.allStopped = resolve));
    // The calls' log entries (recorded once their heap reading is in), then whatever the store buffers.
    await Promise.allSettled([...this.recording]);
    await this.deps.logs.flush?.().catch(() => undefined);
  }

  private evictIdleSandboxes(): void {
    for (const pool of this.pools.values()) pool.evictIdle(this.options.idleSandboxTtlMs);
  }

  async onModuleDestroy(): Promise<void> {
    await this.close();
  }

  private assertValid(config: FunctionConfig): void {
    if (this.validated.has(config)) return;
    assertValidFunctionConfig(config);
    this.validated.add(config);
  }

  /**
   * `private` refuses SDK calls only: App Services let a private function serve HTTPS endpoints and incoming
   * webhooks (they are private in most exports). `can_evaluate` guards both.
   */
  private assertClientMayCall(request: ExecuteFunctionRequest, fn: DeployedFunction, checkPrivate: boolean): Promise<void> | undefined {
    const refusal = checkPrivate ? privateCallRefusal(request.name, fn.config) : undefined;
    if (refusal) throw refusal;
    if (!hasCanEvaluate(fn.config)) return undefined;
    return this.assertCanEvaluate(request, fn);
  }

  private async assertCanEvaluate(request: ExecuteFunctionRequest, fn: DeployedFunction): Promise<void> {
    const evaluate = this.deps.canEvaluate;
    const allowed =
      evaluate !== undefined &&
      (await evaluate(fn.config.can_evaluate ?? {}, {
        appId: request.appId,
        functionName: request.name,
        user: request.caller.type === 'user' ? request.caller.user : null,
        arguments: request.arguments,
        request: request.request,
      }));
    if (!allowed) {
      throw new FunctionRuntimeError(FunctionRuntimeErrorCode.NotCallable, `rule not matched for function '${request.name}': can_evaluate denied the call`);
    }
  }

  /**
   * The frame a function runs in, called from frame `parentId`, according to its run-as setting; a promise
   * only when a user must be looked up (run_as_user_id).
   */
  private frameFor(state: CallState, config: FunctionConfig, parentId: number): SandboxFrame | Promise<SandboxFrame> {
    const id = state.nextFrameId++;
    const mode = runAsMode(config);
    switch (mode) {
      case 'system': {
        const identity = { system: true, user: SYSTEM_CALLER_USER, shown: this.boundIdentity(state, parentId).shown };
        state.frames.set(id, identity);
        return toSandboxFrame(id, identity);
      }
      case 'user_id':
        return this.findUser(state.appId, config.run_as_user_id ?? '').then((user) => {
          const identity = { system: false, user, shown: user };
          state.frames.set(id, identity);
          return toSandboxFrame(id, identity);
        });
      case 'user_id_script': {
        state.frames.set(id, { pending: true, parent: parentId });
        const parent = toSandboxFrame(parentId, this.boundIdentity(state, parentId));
        return { id, system: false, user: null, runAsScript: config.run_as_user_id_script_source, parent };
      }
      case 'caller': {
        const identity = this.boundIdentity(state, parentId);
        state.frames.set(id, identity);
        return toSandboxFrame(id, identity);
      }
    }
  }

  /**
   * A call of an HTTP service's action (`context.services.get("myHttp").post(...)`, Stitch's third-party HTTP
   * service) is sent only when one of the service's rules lists the action and its `when` expression holds
   * for the request (`%%args`: the request, its URL in parts as `%%args.url.host` and so on) and the caller.
   */
  private async assertHttpServiceRule(state: CallState, frameId: number, service: string, request: OutboundHttpRequest): Promise<void> {
    const rules = state.app.httpServices?.get(service);
    if (!rules) throw new FunctionRuntimeError(FunctionRuntimeErrorCode.FunctionExecutionError, `service "${service}" is not an HTTP service of this app`);
    const action = request.method.toLowerCase();
    const identity = this.boundIdentity(state, frameId);
    const args = httpRuleArguments(request);
    for (const rule of rules.rules) {
      if (!rule.actions.includes(action)) continue;
      if (!rule.when || Object.keys(rule.when).length === 0) return;
      const evaluate = this.deps.canEvaluate;
      if (evaluate && (await evaluate(rule.when, { appId: state.appId, functionName: service, user: identity.system ? null : identity.user, arguments: args }))) return;
    }
    throw new FunctionRuntimeError(FunctionRuntimeErrorCode.FunctionExecutionError, `action "${action}" of service "${service}" is not permitted: no service rule allows it`);
  }

  private boundIdentity(state: CallState, frameId: number): BoundIdentity {
    const identity = state.frames.get(frameId);
    if (!identity || 'pending' in identity) throw new Error('this function has not resolved the user it runs as yet');
    return identity;
  }

  private async findUser(appId: string, userId: string): Promise<CallerUser> {
    if (!this.deps.users) return { id: userId, type: 'normal', data: {}, custom_data: {}, identities: [] };
    const user = await this.deps.users.findUser(appId, userId);
    if (!user) throw new FunctionRuntimeError(FunctionRuntimeErrorCode.FunctionExecutionError, `the user to run as does not exist: '${userId}'`);
    return user;
  }

  /** Serves one operation the sandbox asked for, on behalf of the function running in `frameId`. */
  private async serve(state: CallState, op: string, frameId: number, payload: unknown): Promise<unknown> {
    const p = (payload ?? {}) as Record<string, unknown>;
    switch (op) {
      case 'data': {
        const identity = this.boundIdentity(state, frameId);
        const call: DataAccessCall = {
          appId: state.appId,
          service: requireString(p['service'], 'service name'),
          database: optionalString(p['database']),
          collection: optionalString(p['collection']),
          action: requireString(p['action'], 'action'),
          arguments: Array.isArray(p['arguments']) ? (p['arguments'] as unknown[]) : [],
          caller: identity.system ? { kind: 'system' } : { kind: 'user', user: identity.user },
          ...(state.headers ? { headers: state.headers } : {}),
        };
        const ref = p['session'] as { id?: unknown; service?: unknown; begin?: unknown } | undefined;
        if (ref === undefined) return this.deps.dataAccess.execute(call);
        state.sessions ??= new CallSessions(this.deps.dataAccess, state.appId);
        return state.sessions.run(Number(ref.id), requireString(ref.service, 'session service'), call.caller, (session) => session.execute(call, ref.begin === true));
      }
      case 'session.commit':
        return state.sessions?.whenOpen(Number(p['id']), (session) => session.commitTransaction());
      case 'session.abort':
        return state.sessions?.whenOpen(Number(p['id']), (session) => session.abortTransaction());
      case 'session.end':
        return state.sessions?.end(Number(p['id']));
      case 'fn.prepared': {
        const ticket = Number(p['ticket']);
        const prepared = state.preparing?.get(ticket);
        if (!prepared) throw new Error('no nested call is being prepared under this ticket');
        state.preparing?.delete(ticket);
        return prepared;
      }
      case 'frame.bindUser': {
        const identity = state.frames.get(frameId);
        if (!identity || !('pending' in identity)) throw new Error('this function does not pick its user with a script');
        const userId = requireString(p['userId'], 'user id');
        const user = state.namesUserOnly ? ((await this.deps.users?.findUser(state.appId, userId)) ?? unknownUser(userId)) : await this.findUser(state.appId, userId);
        state.frames.set(frameId, { system: false, user, shown: user });
        return { user: JSON.stringify(user) };
      }
      case 'http': {
        const request = toHttpRequest(p);
        if (p['service'] !== undefined) await this.assertHttpServiceRule(state, frameId, requireString(p['service'], 'service name'), request);
        return this.deps.http.request(request);
      }
      default:
        throw new Error(`unknown host operation: ${op}`);
    }
  }

  /**
   * The isolate's synchronous requests: `fn.prepare` of `context.functions.execute`, which App Services
   * answered synchronously for a synchronous function. The callee's frame is answered at once; when it needs a
   * read first (a fixed run_as_user_id), a ticket the isolate then awaits through `fn.prepared`.
   */
  private serveNow(state: CallState, op: string, frameId: number, payload: unknown): unknown {
    if (op !== 'fn.prepare') throw new Error(`unknown host operation: ${op}`);
    const p = (payload ?? {}) as Record<string, unknown>;
    const name = requireString(p['name'], 'function name');
    if (++state.nestedCalls > this.options.maxNestedCalls) {
      throw new Error(`a call may make at most ${this.options.maxNestedCalls} nested function calls`);
    }
    const fn = state.app.functions.get(name);
    if (!fn) throw new FunctionRuntimeError(FunctionRuntimeErrorCode.FunctionNotFound, `function not found: '${name}'`);
    this.assertValid(fn.config);
    const frame = this.frameFor(state, fn.config, frameId);
    const source = { name, source: fn.source };
    if (!(frame instanceof Promise)) return { frame, fn: source };
    state.preparing ??= new Map();
    const ticket = state.nestedCalls;
    const prepared = frame.then((ready) => ({ frame: ready, fn: source }));
    // Awaited through `fn.prepared`; a failure is answered there, not left unhandled meanwhile.
    prepared.catch(() => undefined);
    state.preparing.set(ticket, prepared);
    return { ticket };
  }

  /** An idle sandbox of the app's current pool, taken at once (no promise), or undefined: then `acquire`. */
  private idleSandbox(appId: string, app: AppFunctions, signal: CancelSignal | undefined): { sandbox: Sandbox; pool: SandboxPool } | undefined {
    if (signal?.aborted) return undefined;
    const pool = this.poolFor(appId, app.version);
    const sandbox = pool.takeIdle();
    return sandbox ? { sandbox, pool } : undefined;
  }

  private async acquire(appId: string, app: AppFunctions, signal: CancelSignal | undefined): Promise<{ sandbox: Sandbox; pool: SandboxPool }> {
    for (let attempt = 0; ; attempt++) {
      const pool = this.poolFor(appId, app.version);
      try {
        return { sandbox: await pool.acquire(signal), pool };
      } catch (error) {
        if (signal?.aborted) throw cancelledError();
        // A deploy retired the pool while this call waited: take a sandbox of the new pool instead.
        if (!pool.isRetired || attempt > 0) throw error;
      }
    }
  }

  private poolFor(appId: string, version: string): SandboxPool {
    const existing = this.pools.get(appId);
    if (existing && existing.version === version && !existing.isRetired) return existing;
    existing?.retire();
    let boot: Promise<Parameters<typeof Sandbox.create>[0]> | undefined;
    const limits = {
      timeLimitMs: this.options.timeLimitMs,
      memoryLimitMb: this.options.memoryLimitMb,
      maxResultBytes: this.options.maxResultBytes,
      maxLogLines: this.options.maxLogLines,
      maxLogBytes: this.options.maxLogBytes,
      maxLogLineBytes: this.options.maxLogLineBytes,
      maxPendingOperations: this.options.maxPendingOperations,
    };
    const create = async (): Promise<Sandbox> => {
      boot ??= this.loadBoot(appId);
      try {
        return await Sandbox.create(await boot, limits);
      } catch (error) {
        boot = undefined; // a failed read of the values is retried by the next sandbox
        throw error;
      }
    };
    const { sandboxesPerApp, sandboxesPerAppWhileWaiting, memoryLimitMb } = this.options;
    const pool = new SandboxPool(appId, version, create, sandboxesPerApp, Math.max(sandboxesPerApp, sandboxesPerAppWhileWaiting), memoryLimitMb * 1024 * 1024);
    this.pools.set(appId, pool);
    return pool;
  }

  private async loadBoot(appId: string): Promise<Parameters<typeof Sandbox.create>[0]> {
    // Read once per pool (per deployment): every sandbox of the pool gets the same values and dependencies.
    const [{ values, environment }, dependencies] = await Promise.all([this.deps.values.getValues(appId), this.deps.dependencies?.getBundle(appId)]);
    const encoded: Record<string, string> = {};
    for (const [name, value] of Object.entries(values)) encoded[name] = JSON.stringify(value ?? null);
    return { appId, values: encoded, environment: JSON.stringify(environment), ...(dependencies === undefined ? {} : { dependencies }) };
  }

  private unwrap(outcome: SandboxOutcome): string {
    switch (outcome.kind) {
      case 'ok':
        return outcome.resultEjson;
      case 'error':
        throw new FunctionRuntimeError(FunctionRuntimeErrorCode.FunctionExecutionError, outcome.error.message);
      case 'timeout':
        throw new FunctionRuntimeError(
          FunctionRuntimeErrorCode.ExecutionTimeLimitExceeded,
          `execution time limit exceeded (${this.options.timeLimitMs} ms)`,
        );
      case 'stopped':
        if (outcome.reason === 'cancelled') throw cancelledError();
        throw new FunctionRuntimeError(FunctionRuntimeErrorCode.ServiceUnavailable, 'the function runtime shut down while the function was running');
      case 'memory':
        throw new FunctionRuntimeError(
          FunctionRuntimeErrorCode.FunctionExecutionError,
          `function execution exceeded the memory limit (${this.options.memoryLimitMb} MB)`,
        );
      case 'crashed':
        // isolated-vm ends the call this way on an unhandled promise rejection in the function; the message is
        // the function's own, as for a thrown error.
        throw new FunctionRuntimeError(FunctionRuntimeErrorCode.FunctionExecutionError, `unhandled error in the function: ${outcome.message}`);
    }
  }

  private internalError(error: unknown): FunctionRuntimeError {
    return new FunctionRuntimeError(FunctionRuntimeErrorCode.InternalServerError, 'internal error while running the function', { cause: error });
  }

  private record(entry: {
    executionId: string;
    request: ExecuteFunctionRequest;
    fn: DeployedFunction;
    startedAt: Date;
    durationMs: number;
    callerId: string;
    runAsId: string;
    memory: number | Promise<number>;
    logs: string[];
    argsEjson: string | undefined;
    error?: FunctionRuntimeError;
  }): void {
    const omitArgs = entry.fn.config.disable_arg_logs === true;
    const remoteIPAddress = entry.request.request?.remoteIPAddress;
    const { request } = entry;
    const log: ExecutionLogEntry = {
      id: entry.executionId,
      appId: request.appId,
      functionName: request.name,
      callerId: entry.callerId,
      runAsId: entry.runAsId,
      origin: request.origin,
      startedAt: entry.startedAt,
      durationMs: entry.durationMs,
      memoryBytes: 0,
      logs: entry.logs,
      argumentsOmitted: omitArgs,
    };
    // Set one by one rather than spread from conditional parts: every call records an entry.
    if (entry.fn.config.id) log.functionId = entry.fn.config.id;
    if (request.correlationId) log.correlationId = request.correlationId;
    if (request.traceId) log.traceId = request.traceId;
    if (remoteIPAddress) log.remoteIPAddress = remoteIPAddress;
    if (request.trigger) log.trigger = request.trigger;
    if (request.http) log.http = { kind: request.http.kind, route: request.http.route };
    if (!omitArgs && entry.argsEjson !== undefined) log.arguments = loggedArgumentsEjson(request.arguments, entry.argsEjson, request.http !== undefined);
    if (entry.error) log.error = { code: entry.error.errorCode, message: entry.error.message };
    // Recorded once the heap size is known (read without blocking the call; most calls find it read); the
    // log store must not fail a call, so a rejected append is dropped.
    if (typeof entry.memory === 'number') {
      log.memoryBytes = entry.memory;
      void this.appendLog(log);
      return;
    }
    const recorded = entry.memory.then((memoryBytes) => {
      log.memoryBytes = memoryBytes;
      return this.appendLog(log);
    });
    this.recording.add(recorded);
    void recorded.finally(() => this.recording.delete(recorded));
  }

  /** Hands an entry to the log store; a failed append is dropped, and one still pending is waited for at shutdown. */
  private appendLog(log: ExecutionLogEntry): Promise<void> {
    let appended: void | Promise<void>;
    try {
      appended = this.deps.logs.append(log);
    } catch {
      return Promise.resolve();
    }
    if (!appended) return Promise.resolve();
    const recorded = appended.catch(() => undefined);
    this.recording.add(recorded);
    void recorded.finally(() => this.recording.delete(recorded));
    return recorded;
  }
}

function outgoingHeaders(request: ExecuteFunctionRequest): Readonly<Record<string, string>> | undefined {
  return request.headers ?? (request.correlationId ? { [MessageHeaders.CorrelationId]: request.correlationId } : undefined);
}

/** The call was terminated because its caller stopped waiting; nobody reads this but the execution log. */
function cancelledError(): FunctionRuntimeError {
  return new FunctionRuntimeError(FunctionRuntimeErrorCode.ExecutionCancelled, 'the function was stopped: its caller stopped waiting for the result');
}

/** The caller identity is canonical EJSON already (its documents are), so its JSON text is what the sandbox parses. */
function toSandboxFrame(id: number, identity: BoundIdentity): SandboxFrame {
  return { id, system: identity.system, user: JSON.stringify(identity.shown) };
}

/** A user id the Data API's script named that no user has: bound so the script's answer reaches the gateway. */
function unknownUser(id: string): CallerUser {
  return { id, type: 'normal', data: {}, custom_data: {}, identities: [] };
}

function identityId(identity: Identity | undefined): string | undefined {
  if (!identity || 'pending' in identity) return undefined;
  return identity.system ? 'system' : identity.user.id;
}

function requireString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`${what} must be a non-empty string`);
  return value;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

const HTTP_METHODS = new Set<OutboundHttpRequest['method']>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);

/** `%%args` of an HTTP service rule: the request as the function gave it, its URL taken apart. */
function httpRuleArguments(request: OutboundHttpRequest): Record<string, unknown> {
  const url = new URL(request.url);
  const query: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) (query[name] ??= []).push(value);
  return {
    url: { href: url.href, scheme: url.protocol.replace(/:$/, ''), host: url.host, hostname: url.hostname, port: url.port, path: url.pathname, query, fragment: url.hash.replace(/^#/, ''), username: url.username },
    scheme: url.protocol.replace(/:$/, ''),
    host: url.host,
    path: url.pathname,
    query,
    headers: request.headers,
    ...(request.bodyBase64 !== undefined ? { body: Buffer.from(request.bodyBase64, 'base64').toString('utf8') } : {}),
  };
}

function toHttpRequest(p: Record<string, unknown>): OutboundHttpRequest {
  const method = p['method'] as OutboundHttpRequest['method'];
  if (!HTTP_METHODS.has(method)) throw new Error(`unsupported HTTP method: ${String(method)}`);
  const url = requireString(p['url'], 'url');
  if (!/^https?:\/\//i.test(url)) throw new Error(`only http and https URLs can be requested: ${url}`);
  const headers: Record<string, string[]> = {};
  const raw = p['headers'];
  if (raw && typeof raw === 'object') {
    for (const [name, values] of Object.entries(raw as Record<string, unknown>)) {
      headers[name] = Array.isArray(values) ? values.map((v) => String(v)) : [String(values)];
    }
  }
  const body = p['bodyBase64'];
  return { method, url, headers, followRedirects: p['followRedirects'] === true, ...(typeof body === 'string' ? { bodyBase64: body } : {}) };
}

/** What a call runs: an app function, a webhook's own source, or the Data API's run-as script. */
function deployedFunctionOf(app: AppFunctions | null, request: ExecuteFunctionRequest): DeployedFunction | undefined {
  if (request.source) {
    if (!app) return undefined;
    const { text, canEvaluate } = request.source;
    return { config: canEvaluate ? { name: request.name, can_evaluate: canEvaluate } : { name: request.name }, source: importsAsRequires(text) };
  }
  switch (request.http?.kind) {
    case 'webhook':
      return app?.webhooks?.get(`${request.http.service ?? ''}/${request.http.webhook ?? ''}`);
    case 'data-api':
      return app?.dataApiRunAs;
    case 'endpoint':
    case undefined:
      return app?.functions.get(request.name);
  }
}

function notFoundMessage(request: ExecuteFunctionRequest): string {
  switch (request.http?.kind) {
    case 'webhook':
      return `incoming webhook not found: '${request.name}'`;
    case 'data-api':
      return 'the Data API configuration has no run_as_user_id_script_source';
    case 'endpoint':
    case undefined:
      return `function not found: '${request.name}'`;
  }
}
