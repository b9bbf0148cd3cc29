/**
 * Compiles App Services JSON rule expressions into closures. An expression that calls no `%function`
 * compiles to synchronous closures only, so the per-document hot path never allocates a promise; a node is
 * asynchronous only when something under it calls `%function`. Compilation rejects unknown operators and
 * expansions and expansions the expression kind may not use (a filter's apply_when cannot see `%%root`).
 */
import { Binary, ObjectId, UUID } from 'bson';
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type EvaluationContext } from './context';
import { compareMatches, getPath, inList, isPlainObject, ruleEquals } from './values';

/** Where an expression is used; decides what plain field names mean and which expansions are allowed. */
export type ExpressionKind =
  /** Role expressions of MongoDB rules: plain fields mean `%%root.<field>`. */
  | 'document'
  /** A filter's apply_when: evaluated before any document is read, so no document expansions. */
  | 'filter'
  /** Partition-Based Sync permissions: `%%user`, `%%partition`, values, environment, `%function`. */
  | 'partition'
  /** Service rules (deprecated third-party services): plain fields mean `%%args.<field>`. */
  | 'service';

export type ExpansionRoot =
  | 'true'
  | 'false'
  | 'user'
  | 'root'
  | 'prevRoot'
  | 'this'
  | 'prev'
  | 'partition'
  | 'request'
  | 'values'
  | 'environment'
  | 'args';

const EXPANSION_ROOTS = new Set<string>(['true', 'false', 'user', 'root', 'prevRoot', 'this', 'prev', 'partition', 'request', 'values', 'environment', 'args']);
export const DOCUMENT_EXPANSIONS: ReadonlySet<ExpansionRoot> = new Set<ExpansionRoot>(['root', 'prevRoot', 'this', 'prev']);

const FORBIDDEN: Record<ExpressionKind, ReadonlySet<ExpansionRoot>> = {
  document: new Set<ExpansionRoot>(['partition']),
  filter: new Set<ExpansionRoot>(['root', 'prevRoot', 'this', 'prev', 'partition']),
  partition: new Set<ExpansionRoot>(['root', 'prevRoot', 'this', 'prev', 'request']),
  service: new Set<ExpansionRoot>(['root', 'prevRoot', 'partition']),
};

type ComparisonOperator = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'nin' | 'exists';
type LogicalOperator = 'and' | 'or' | 'nor' | 'not';
type Producer = 'function' | 'stringToOid' | 'oidToString' | 'stringToUuid' | 'uuidToString';

const COMPARISON = new Set<string>(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists']);
const LOGICAL = new Set<string>(['and', 'or', 'nor', 'not']);
/** Value producers: `%`-prefixed only (`$function` is not a thing). */
const PRODUCERS = new Set<string>(['function', 'stringToOid', 'oidToString', 'stringToUuid', 'uuidToString']);

type OperatorKey =
  | { kind: 'comparison'; name: ComparisonOperator }
  | { kind: 'logical'; name: LogicalOperator }
  | { kind: 'producer'; name: Producer }
  | { kind: 'unknown'; name: string };

/** `$gt`/`%gt` style keys; `%%...` is an expansion, not an operator. */
function operatorKey(key: string): OperatorKey | undefined {
  const first = key.charCodeAt(0);
  if (first === 36 /* $ */) {
    const name = key.slice(1);
    if (COMPARISON.has(name)) return { kind: 'comparison', name: name as ComparisonOperator };
    if (LOGICAL.has(name)) return { kind: 'logical', name: name as LogicalOperator };
    return { kind: 'unknown', name: key };
  }
  if (first === 37 /* % */ && key.charCodeAt(1) !== 37) {
    const name = key.slice(1);
    if (COMPARISON.has(name)) return { kind: 'comparison', name: name as ComparisonOperator };
    if (LOGICAL.has(name)) return { kind: 'logical', name: name as LogicalOperator };
    if (PRODUCERS.has(name)) return { kind: 'producer', name: name as Producer };
    return { kind: 'unknown', name: key };
  }
  return undefined;
}

function isExpansionString(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('%%');
}

// ---- nodes -------------------------------------------------------------------------------------------

/** A compiled value or predicate. `constant` is set when it needs no context at all. */
export type Node<T> =
  | { readonly async: false; readonly run: (ctx: EvaluationContext) => T; readonly constant?: { value: T } }
  | { readonly async: true; readonly run: (ctx: EvaluationContext) => Promise<T>; readonly constant?: undefined };

/** A predicate over a left-hand value (the value of the key it is attached to). */
type Matcher =
  | { readonly async: false; readonly test: (left: unknown, ctx: EvaluationContext) => boolean }
  | { readonly async: true; readonly test: (left: unknown, ctx: EvaluationContext) => Promise<boolean> };

function constant<T>(value: T): Node<T> {
  return { async: false, run: () => value, constant: { value } };
}

const TRUE = constant(true);
const FALSE = constant(false);

async function runAll(nodes: readonly Node<boolean>[], ctx: EvaluationContext, want: boolean): Promise<boolean> {
  for (const node of nodes) {
    const value = node.async ? await node.run(ctx) : node.run(ctx);
    if (value === want) return true;
  }
  return false;
}

/** AND of predicates, short-circuiting in order. */
function allOf(nodes: readonly Node<boolean>[]): Node<boolean> {
  const live = nodes.filter((n) => !(n.constant && n.constant.value));
  if (live.some((n) => n.constant && !n.constant.value)) return FALSE;
  if (live.length === 0) return TRUE;
  if (live.length === 1) return live[0];
  if (live.every((n) => !n.async)) {
    const runs = live.map((n) => n.run);
    return {
      async: false,
      run: (ctx) => {
        for (const run of runs) if (!run(ctx)) return false;
        return true;
      },
    };
  }
  return { async: true, run: async (ctx) => !(await runAll(live, ctx, false)) };
}

/** OR of predicates, short-circuiting in order. */
function anyOf(nodes: readonly Node<boolean>[]): Node<boolean> {
  const live = nodes.filter((n) => !(n.constant && !n.constant.value));
  if (live.some((n) => n.constant && n.constant.value)) return TRUE;
  if (live.length === 0) return FALSE;
  if (live.length === 1) return live[0];
  if (live.every((n) => !n.async)) {
    const runs = live.map((n) => n.run);
    return {
      async: false,
      run: (ctx) => {
        for (const run of runs) if (run(ctx)) return true;
        return false;
      },
    };
  }
  return { async: true, run: (ctx) => runAll(live, ctx, true) };
}

function negate(node: Node<boolean>): Node<boolean> {
  if (node.constant) return constant(!node.constant.value);
  if (!node.async) {
    const run = node.run;
    return { async: false, run: (ctx) => !run(ctx) };
  }
  const run = node.run;
  return { async: true, run: async (ctx) => !(await run(ctx)) };
}

function applyMatcher(left: Node<unknown>, matcher: Matcher): Node<boolean> {
  if (!left.async && !matcher.async) {
    const run = left.run;
    const test = matcher.test;
    return { async: false, run: (ctx) => test(run(ctx), ctx) };
  }
  return {
    async: true,
    run: async (ctx) => {
      const value = left.async ? await left.run(ctx) : left.run(ctx);
      return matcher.async ? matcher.test(value, ctx) : matcher.test(value, ctx);
    },
  };
}

/** A matcher that compares the left value with a computed operand. */
function valueMatcher(operand: Node<unknown>, test: (left: unknown, right: unknown) => boolean): Matcher {
  if (operand.constant) {
    const right = operand.constant.value;
    return { async: false, test: (left) => test(left, right) };
  }
  if (!operand.async) {
    const run = operand.run;
    return { async: false, test: (left, ctx) => test(left, run(ctx)) };
  }
  const run = operand.run;
  return { async: true, test: async (left, ctx) => test(left, await run(ctx)) };
}

function combineMatchers(matchers: readonly Matcher[], mode: 'and' | 'or' | 'nor'): Matcher {
  if (matchers.every((m) => !m.async)) {
    const tests = matchers.map((m) => m.test);
    switch (mode) {
      case 'and':
        return { async: false, test: (left, ctx) => tests.every((t) => t(left, ctx)) };
      case 'or':
        return { async: false, test: (left, ctx) => tests.some((t) => t(left, ctx)) };
      case 'nor':
        return { async: false, test: (left, ctx) => !tests.some((t) => t(left, ctx)) };
    }
  }
  const want = mode === 'and' ? false : true;
  const run = async (left: unknown, ctx: EvaluationContext): Promise<boolean> => {
    for (const m of matchers) if ((m.async ? await m.test(left, ctx) : m.test(left, ctx)) === want) return true;
    return false;
  };
  switch (mode) {
    case 'and':
      return { async: true, test: async (left, ctx) => !(await run(left, ctx)) };
    case 'or':
      return { async: true, test: run };
    case 'nor':
      return { async: true, test: async (left, ctx) => !(await run(left, ctx)) };
  }
}

function negateMatcher(matcher: Matcher): Matcher {
  if (!matcher.async) {
    const test = matcher.test;
    return { async: false, test: (left, ctx) => !test(left, ctx) };
  }
  const test = matcher.test;
  return { async: true, test: async (left, ctx) => !(await test(left, ctx)) };
}

// ---- compiler ----------------------------------------------------------------------------------------

/** True when the expression reads the document (plain fields or `%%root`/`%%prevRoot`/`%%this`/`%%prev`). */
export function usesDocument(info: ExpressionInfo): boolean {
  if (info.fields.size > 0) return true;
  for (const root of info.expansions) if (DOCUMENT_EXPANSIONS.has(root)) return true;
  return false;
}

export interface CompileOptions {
  kind: ExpressionKind;
}

/** Static facts about an expression, used by role analysis, pushdown and Sync compatibility. */
export interface ExpressionInfo {
  /** Expansion roots the expression references (`user`, `root`, ...). */
  expansions: Set<ExpansionRoot>;
  /** Document fields referenced, as dotted paths: plain field names, `%%root.<path>`, `%%prevRoot.<path>`. */
  fields: Set<string>;
  /** `%%root` or `%%prevRoot` is used as a whole. */
  wholeDocument: boolean;
  usesFunction: boolean;
}

function invalid(message: string): RulesError {
  return new RulesError(RulesErrorCode.InvalidExpression, message);
}

class Compiler {
  readonly info: ExpressionInfo = { expansions: new Set(), fields: new Set(), wholeDocument: false, usesFunction: false };

  constructor(private readonly kind: ExpressionKind) {}

  expression(source: unknown, path: string): Node<boolean> {
    if (typeof source === 'boolean') return source ? TRUE : FALSE;
    if (!isPlainObject(source)) throw invalid(`${path}: an expression must be a boolean or an object, got ${describe(source)}`);
    const parts: Node<boolean>[] = [];
    for (const key of Object.keys(source)) parts.push(this.key(key, source[key], `${path}.${key}`));
    return allOf(parts);
  }

  private key(key: string, value: unknown, path: string): Node<boolean> {
    const op = operatorKey(key);
    if (op) {
      if (op.kind !== 'logical') throw invalid(`${path}: operator ${key} needs a value to apply to (use it under a field or an expansion)`);
      if (op.name === 'not') {
        if (Array.isArray(value)) return negate(allOf(value.map((item, i) => this.expression(item, `${path}[${i}]`))));
        return negate(this.expression(value, path));
      }
      if (!Array.isArray(value)) throw invalid(`${path}: ${key} takes an array of expressions`);
      const items = value.map((item, i) => this.expression(item, `${path}[${i}]`));
      switch (op.name) {
        case 'and':
          return allOf(items);
        case 'or':
          return anyOf(items);
        case 'nor':
          return negate(anyOf(items));
      }
    }
    if (isExpansionString(key)) {
      const left = this.expansion(key, path);
      const booleanLeft = key === '%%true' || key === '%%false';
      return applyMatcher(left, this.matcher(value, path, booleanLeft));
    }
    return applyMatcher(this.field(key, path), this.matcher(value, path, false));
  }

  /** A plain field name: `%%root.<field>` in MongoDB rules, `%%args.<field>` in service rules. */
  private field(name: string, path: string): Node<unknown> {
    const segments = name.split('.');
    switch (this.kind) {
      case 'document':
        this.info.fields.add(name);
        return { async: false, run: documentReader(segments, (ctx) => ctx.root) };
      case 'service':
        this.info.expansions.add('args');
        return { async: false, run: (ctx) => getPath(ctx.args, segments) };
      case 'filter':
      case 'partition':
        throw invalid(`${path}: a ${this.kind === 'filter' ? "filter's apply_when" : 'partition permission'} cannot refer to document field "${name}"`);
    }
  }

  expansion(text: string, path: string): Node<unknown> {
    const segments = text.slice(2).split('.');
    const root = segments[0];
    if (!EXPANSION_ROOTS.has(root)) throw invalid(`${path}: unknown expansion ${text}`);
    const typed = root as ExpansionRoot;
    if (FORBIDDEN[this.kind].has(typed)) {
      throw invalid(`${path}: ${text} is not available in ${KIND_NAMES[this.kind]}`);
    }
    this.info.expansions.add(typed);
    if (typed === 'true' || typed === 'false') {
      if (segments.length > 1) throw invalid(`${path}: ${text} has no fields`);
      return typed === 'true' ? TRUE : FALSE;
    }
    if (typed === 'root' || typed === 'prevRoot') {
      if (segments.length > 1) this.info.fields.add(segments.slice(1).join('.'));
      else this.info.wholeDocument = true;
    }
    if (segments.length === 1) return { async: false, run: (ctx) => ctx[typed] };
    if (typed === 'root' || typed === 'prevRoot' || typed === 'this' || typed === 'prev') {
      return { async: false, run: documentReader(segments.slice(1), (ctx) => ctx[typed]) };
    }
    return { async: false, run: requestReader(typed, segments) };
  }

  /** What a key's value means, applied to the key's (left) value. */
  private matcher(spec: unknown, path: string, booleanLeft: boolean): Matcher {
    if (isPlainObject(spec)) {
      const keys = Object.keys(spec);
      const ops = keys.map(operatorKey);
      if (keys.length > 0 && ops.every((o) => o !== undefined)) {
        const typed = ops;
        if (typed.some((o) => o.kind === 'producer')) {
          if (keys.length !== 1) throw invalid(`${path}: ${keys.join(', ')}: a conversion or %function stands alone`);
          return valueMatcher(this.value(spec, path), ruleEquals);
        }
        return combineMatchers(
          keys.map((key, i) => this.operator(typed[i], key, spec[key], `${path}.${key}`, booleanLeft)),
          'and',
        );
      }
      if (booleanLeft || keys.some(isExpansionString)) {
        // A nested expression: `{"%%true": {...}}` means "the nested expression evaluates to true".
        return valueMatcher(this.expression(spec, path), ruleEquals);
      }
    }
    return valueMatcher(this.value(spec, path), ruleEquals);
  }

  private operator(op: OperatorKey, key: string, operand: unknown, path: string, booleanLeft: boolean): Matcher {
    switch (op.kind) {
      case 'unknown':
        throw invalid(`${path}: unknown operator ${key}`);
      case 'producer':
        throw invalid(`${path}: ${key} cannot be combined with other operators`);
      case 'logical': {
        if (op.name === 'not') return negateMatcher(this.matcher(operand, path, booleanLeft));
        if (!Array.isArray(operand)) throw invalid(`${path}: ${key} takes an array`);
        return combineMatchers(
          operand.map((item, i) => this.matcher(item, `${path}[${i}]`, booleanLeft)),
          op.name,
        );
      }
      case 'comparison':
        return this.comparison(op.name, key, operand, path);
    }
  }

  private comparison(name: ComparisonOperator, key: string, source: unknown, path: string): Matcher {
    const operand = this.value(source, path);
    if ((name === 'in' || name === 'nin') && operand.constant && !Array.isArray(operand.constant.value)) {
      throw invalid(`${path}: ${key} takes an array (or an expansion that gives one)`);
    }
    switch (name) {
      case 'eq':
        return valueMatcher(operand, ruleEquals);
      case 'ne':
        return valueMatcher(operand, (l, r) => !ruleEquals(l, r));
      case 'gt':
        return valueMatcher(operand, (l, r) => compareMatches(l, r, (o) => o > 0));
      case 'gte':
        return valueMatcher(operand, (l, r) => compareMatches(l, r, (o) => o >= 0));
      case 'lt':
        return valueMatcher(operand, (l, r) => compareMatches(l, r, (o) => o < 0));
      case 'lte':
        return valueMatcher(operand, (l, r) => compareMatches(l, r, (o) => o <= 0));
      case 'in':
        return valueMatcher(operand, inList);
      case 'nin':
        // A list that does not resolve to an array fails closed for $nin as well as for $in.
        return valueMatcher(operand, (l, r) => Array.isArray(r) && !inList(l, r));
      case 'exists':
        return valueMatcher(operand, (l, r) => (truthy(r) ? l !== undefined : l === undefined));
    }
  }

  /** A value: a literal, an expansion string, a conversion or `%function`, or a structure of those. */
  value(source: unknown, path: string): Node<unknown> {
    if (isExpansionString(source)) return this.expansion(source, path);
    if (Array.isArray(source)) {
      return this.structure(source.map((item, i) => this.value(item, `${path}[${i}]`)), (values) => values);
    }
    if (isPlainObject(source)) {
      const keys = Object.keys(source);
      if (keys.length === 1) {
        const op = operatorKey(keys[0]);
        if (op?.kind === 'producer') return this.producer(op.name, source[keys[0]], `${path}.${keys[0]}`);
      }
      const nodes = keys.map((key) => this.value(source[key], `${path}.${key}`));
      return this.structure(nodes, (values) => {
        const out: Record<string, unknown> = {};
        // defineProperty: a `__proto__` key in a rule stays a key, it does not set the prototype.
        keys.forEach((key, i) => Object.defineProperty(out, key, { value: values[i], enumerable: true, writable: true, configurable: true }));
        return out;
      });
    }
    return constant(source);
  }

  private structure(nodes: Node<unknown>[], build: (values: unknown[]) => unknown): Node<unknown> {
    if (nodes.every((n) => n.constant)) return constant(build(nodes.map((n) => n.constant?.value)));
    if (nodes.every((n) => !n.async)) {
      const runs = nodes.map((n) => n.run);
      return { async: false, run: (ctx) => build(runs.map((run) => run(ctx))) };
    }
    return {
      async: true,
      run: async (ctx) => {
        const values: unknown[] = [];
        for (const n of nodes) values.push(n.async ? await n.run(ctx) : n.run(ctx));
        return build(values);
      },
    };
  }

  private producer(name: Producer, operand: unknown, path: string): Node<unknown> {
    if (name === 'function') return this.functionCall(operand, path);
    // Conversions do not evaluate inner operators: the argument is a literal or an expansion.
    if (isPlainObject(operand) || Array.isArray(operand)) throw invalid(`${path}: %${name} takes a literal or an expansion`);
    const input = this.value(operand, path);
    const convert = CONVERSIONS[name];
    if (input.constant) return constant(convert(input.constant.value));
    const run = input.run;
    return { async: false, run: (ctx) => convert(run(ctx)) };
  }

  private functionCall(operand: unknown, path: string): Node<unknown> {
    if (!isPlainObject(operand) || typeof operand.name !== 'string' || operand.name === '') {
      throw invalid(`${path}: %function takes {"name": "<function>", "arguments": [...]}`);
    }
    const rawArgs = operand.arguments ?? [];
    if (!Array.isArray(rawArgs)) throw invalid(`${path}.arguments: must be an array`);
    this.info.usesFunction = true;
    const name = operand.name;
    const args = rawArgs.map((arg, i) => this.value(arg, `${path}.arguments[${i}]`));
    return {
      async: true,
      run: async (ctx) => {
        const values: unknown[] = [];
        for (const arg of args) values.push(arg.async ? await arg.run(ctx) : arg.run(ctx));
        if (!ctx.callFunction) {
          throw new RulesError(RulesErrorCode.RuleFunctionFailed, `rule function "${name}" cannot be called: no function runner`);
        }
        try {
          return await ctx.callFunction(name, values);
        } catch (error) {
          if (error instanceof RulesError) throw error;
          throw new RulesError(RulesErrorCode.RuleFunctionFailed, `rule function "${name}" failed`, errorMessage(error), { cause: error });
        }
      },
    };
  }
}

/**
 * Reads a field path from the document. A one-segment path that is not a property of Object.prototype
 * can only find an own property of a plain document, so it reads directly (the hot path of
 * `{"owner_id": "%%user.id"}`); anything else goes through getPath.
 */
function documentReader(segments: readonly string[], base: (ctx: EvaluationContext) => unknown): (ctx: EvaluationContext) => unknown {
  const key = segments[0];
  if (segments.length === 1 && !(key in Object.prototype)) {
    return (ctx) => {
      const doc = base(ctx);
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return getPath(doc, segments);
      return isPlainObject(doc) ? (doc)[key] : undefined;
    };
  }
  return (ctx) => getPath(base(ctx), segments);
}

/**
 * Reads `%%user.…`, `%%values.…`, ...: values that do not change between the documents of a request.
 * The last lookup is remembered against the identity of both the context and the object read, so the
 * synchronous read path (one context object per request, reused for every document) resolves
 * `%%user.id` once per request; any other context recomputes.
 */
function requestReader(root: Exclude<ExpansionRoot, 'true' | 'false'>, segments: readonly string[]): (ctx: EvaluationContext) => unknown {
  let seenContext: EvaluationContext | undefined = undefined;
  let seenBase: unknown = undefined;
  let value: unknown = undefined;
  return (ctx) => {
    const base = ctx[root];
    if (ctx !== seenContext || base !== seenBase) {
      value = getPath(base, segments, 1);
      seenContext = ctx;
      seenBase = base;
    }
    return value;
  };
}

const KIND_NAMES: Record<ExpressionKind, string> = {
  document: 'role expressions',
  filter: "a filter's apply_when (filters run before documents are read)",
  partition: 'Partition-Based Sync permissions',
  service: 'service rules',
};

const HEX24 = /^[0-9a-fA-F]{24}$/;
const UUID36 = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function isObjectId(value: unknown): value is ObjectId {
  return typeof value === 'object' && value !== null && (value as { _bsontype?: unknown })._bsontype === 'ObjectId';
}

/** Conversions give `undefined` (missing) for input they cannot convert, so comparisons fail closed. */
const CONVERSIONS: Record<Exclude<Producer, 'function'>, (value: unknown) => unknown> = {
  stringToOid: (value) => {
    if (isObjectId(value)) return value;
    if (typeof value !== 'string') return undefined;
    if (HEX24.test(value)) return ObjectId.createFromHexString(value);
    if (value.length === 12) {
      const bytes = Buffer.from(value, 'latin1');
      return bytes.length === 12 ? new ObjectId(new Uint8Array(bytes)) : undefined;
    }
    return undefined;
  },
  oidToString: (value) => (isObjectId(value) ? value.toHexString() : undefined),
  stringToUuid: (value) => (typeof value === 'string' && UUID36.test(value) ? new UUID(value) : undefined),
  uuidToString: (value) => {
    if (typeof value !== 'object' || value === null) return undefined;
    if ((value as { _bsontype?: unknown })._bsontype !== 'Binary') return undefined;
    const binary = value as Binary;
    if (binary.sub_type !== Binary.SUBTYPE_UUID || binary.length() !== 16) return undefined;
    return binary.toUUID().toString();
  },
};

function truthy(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false && value !== 0;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A compiled expression plus the facts about it. */
export interface CompiledExpression {
  readonly source: unknown;
  readonly kind: ExpressionKind;
  /** True when evaluation may need to await a `%function` call. */
  readonly async: boolean;
  readonly info: ExpressionInfo;
  /** The compiled predicate (closures); use `evaluateSync`/`evaluate` unless you are on a hot path. */
  readonly node: Node<boolean>;
  evaluate(ctx: EvaluationContext): boolean | Promise<boolean>;
  /** Throws AsyncEvaluationRequired when the expression calls `%function`. */
  evaluateSync(ctx: EvaluationContext): boolean;
}

export function compileExpression(source: unknown, options: CompileOptions = { kind: 'document' }): CompiledExpression {
  const compiler = new Compiler(options.kind);
  const node = compiler.expression(source, 'expression');
  return {
    source,
    kind: options.kind,
    async: node.async,
    info: compiler.info,
    node,
    evaluate: (ctx) => node.run(ctx),
    evaluateSync: (ctx) => {
      if (node.async) {
        throw new RulesError(RulesErrorCode.AsyncEvaluationRequired, 'this expression calls %function and must be evaluated asynchronously');
      }
      return node.run(ctx);
    },
  };
}

/**
 * Compiles a value that may contain expansions and conversions (a filter's `query`, `%function`
 * arguments): strings starting with `%%` are expanded, every other key and value is kept as is.
 */
export function compileValue(source: unknown, options: CompileOptions = { kind: 'document' }): { node: Node<unknown>; info: ExpressionInfo } {
  const compiler = new Compiler(options.kind);
  return { node: compiler.value(source, 'value'), info: compiler.info };
}
