/**
 * What an expression can see: the user, the document images, the partition, the request, App Values and
 * the environment, and a callback for `%function`. Plain data; the caller builds one per request.
 */

export interface RuleUserIdentity {
  id: string;
  providerType?: string;
  [key: string]: unknown;
}

/** The `%%user` expansion's value. */
export interface RuleUser {
  id: string;
  /** `server` for API-key users, `normal` otherwise (the default). */
  type?: 'normal' | 'server' | 'system' | (string & {});
  /** Provider metadata, e.g. `email`, `name`. */
  data?: Record<string, unknown>;
  /** The custom user data document, if the app configures one. */
  custom_data?: Record<string, unknown> | null;
  identities?: RuleUserIdentity[];
}

/** Calls an app function for `%function`; may return a promise. */
export type RuleFunctionCaller = (name: string, args: unknown[]) => unknown;

/**
 * Treat a context and the objects it holds as immutable for the duration of a request: compiled rules
 * remember request-level lookups (`%%user.id`) against the identity of these objects.
 */
export interface EvaluationContext {
  user?: RuleUser;
  /** `%%root`: the document after the operation (what is read, the new document, the result of a write). */
  root?: unknown;
  /** `%%prevRoot`: the document before a write; absent on insert; during a read, the stored document. */
  prevRoot?: unknown;
  /** `%%this`: the value of the current field after the operation (field-level and validate expressions). */
  this?: unknown;
  /** `%%prev`: the value of the current field before the write. */
  prev?: unknown;
  /** `%%partition`: the partition value of the realm being opened (Partition-Based Sync only). */
  partition?: unknown;
  /** `%%request`: httpMethod, remoteIPAddress, requestHeaders, ... */
  request?: Record<string, unknown>;
  /** `%%values`: App Values by name. */
  values?: Record<string, unknown>;
  /** `%%environment`: `{ tag, values }`. */
  environment?: { tag?: string; values?: Record<string, unknown> };
  /** `%%args`: service action arguments (service rules). */
  args?: unknown;
  /** The `%function` callback; without it a `%function` rule fails with RuleFunctionFailed. */
  callFunction?: RuleFunctionCaller;
}

/** The `%%user` value with its documented defaults filled in (`type: normal`, empty data). */
export function normalizeUser(user: RuleUser | undefined): RuleUser | undefined {
  if (!user) return undefined;
  return {
    id: user.id,
    type: user.type ?? 'normal',
    data: user.data ?? {},
    custom_data: user.custom_data ?? {},
    identities: user.identities ?? [],
  };
}

/**
 * An evaluation context of one fixed shape. Compiled closures read `ctx.root`, `ctx.user`, ...; giving
 * every context the same hidden class keeps those reads monomorphic on the per-document hot path
 * (object spreads of varying shapes made the read path several times slower).
 */
export function withDocument(base: EvaluationContext, root: unknown, prevRoot: unknown, thisValue?: unknown, prev?: unknown): EvaluationContext {
  return {
    user: base.user,
    root,
    prevRoot,
    this: thisValue,
    prev,
    partition: base.partition,
    request: base.request,
    values: base.values,
    environment: base.environment,
    args: base.args,
    callFunction: base.callFunction,
  };
}

/**
 * The request part of a context (no document), with `%%user` normalized. The request-level objects are
 * copied so each request has objects of its own identity: compiled rules remember lookups against that
 * identity, and a caller may keep one `values` object across requests and update it in place.
 */
export function requestScope(ctx: EvaluationContext): EvaluationContext {
  return withDocument(
    {
      ...ctx,
      user: normalizeUser(ctx.user),
      values: ctx.values && { ...ctx.values },
      environment: ctx.environment && { ...ctx.environment },
      request: ctx.request && { ...ctx.request },
    },
    undefined,
    undefined,
  );
}
