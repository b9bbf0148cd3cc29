/**
 * The rules of one namespace, compiled once (`compileRules`) and then used per request
 * (`rules.forRequest(ctx)`) and per document on the hot path (`access.canReadSync(doc)`). Everything
 * synchronous stays synchronous: only rules that call `%function` need the promise-returning methods.
 */
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type CompiledExpression } from '../expressions/compile';
import { type EvaluationContext, requestScope, withDocument } from '../expressions/context';
import { type RuleDocument } from '../expressions/values';
import { type DecisionTrace, newTrace, type TracedOperation } from '../explain/trace';
import { andQueries, applyFilterSet, compileFilter, type CompiledFilter, mergeProjections, type MongoProjection, type MongoQuery } from '../filters/filters';
import { readableCondition } from '../filters/pushdown';
import { type CompiledFieldRule, compileRole, type CompiledRole } from './compiled-role';
import { type ApplyWhenCache, ownedCopy, readDocument, selectRole, type WriteOperation, writeDocument } from './flows';
import { type ReadDecision, type WriteDecision } from './decisions';
import { buildReadPlan, type ReadPlan, readWithPlan, visibleWithPlan } from './read-plan';
import { type PathReadability, pathReadability } from './readable-paths';
import { type RuleSetConfig } from './rule-config';
import { type Evaluator, type Flow, runAsync, runSync, syncEvaluator } from './steps';

export type { Decision, ReadDecision, WriteDecision } from './decisions';

export interface RequestOptions {
  /** Build a trace for every decision of this request. Off by default, and then free. */
  explain?: boolean;
  /**
   * Copies a stored value (the store's deep, BSON-aware copy). When set, a visible document shares no
   * object with the document read: a whole document goes through `copy`, and a field-level copy passes
   * each object value it keeps through `copy`. For callers that read the store's own documents and
   * must not hand them out; hidden documents and withheld fields are never copied.
   */
  copy?: (value: unknown) => unknown;
}

export type RequestContext = Omit<EvaluationContext, 'root' | 'prevRoot' | 'this' | 'prev'> & RequestOptions;

export interface PreparedQuery {
  /** The request query ANDed with the applying filters' queries and the roles' pushdown. */
  query: MongoQuery;
  projection: MongoProjection;
  /** No role can read any document for this user: the caller may skip the store. */
  matchesNothing: boolean;
  /**
   * The pushed-down role condition selects exactly the readable documents, so the store may apply
   * `limit`/`skip`. When false, the per-document check can still hide some of what the query matched.
   */
  exact: boolean;
  /** Names of the filters that applied. */
  filters: string[];
  trace?: DecisionTrace;
}

export interface CompileRulesOptions {
  /** `<database>.<collection>`, used in messages; defaults to the collection rules' database and collection. */
  namespace?: string;
}

/**
 * Compiles the rules of a namespace: the collection's `rules.json` if it has roles, else the data
 * source's `default_rule.json` (there is no fallback from collection roles to default roles). With
 * neither, every use fails with NoMatchingRuleFound. Throws RulesError(InvalidRule) for malformed rules.
 */
export function compileRules(collection: RuleSetConfig | undefined, defaults?: RuleSetConfig, options: CompileRulesOptions = {}): CompiledRules {
  return new CompiledRules(collection, defaults, options);
}

export class CompiledRules {
  readonly namespace: string | undefined;
  readonly roleSource: 'collection' | 'default' | 'none';
  readonly roles: readonly CompiledRole[];
  readonly filters: readonly CompiledFilter[];
  /** Some role or filter calls `%function`: use the promise-returning methods. */
  readonly async: boolean;
  /**
   * The document fields the role expressions read (dotted paths), or 'all' when one uses `%%root` as a
   * whole. A store that applies the request's projection must fetch these too, evaluate the rules, and
   * project afterwards, or the rules would see a partial document.
   */
  readonly documentFields: ReadonlySet<string> | 'all';

  constructor(collection: RuleSetConfig | undefined, defaults: RuleSetConfig | undefined, options: CompileRulesOptions) {
    this.namespace =
      options.namespace ?? (collection?.database && collection.collection ? `${collection.database}.${collection.collection}` : undefined);
    const collectionRoles = collection?.roles ?? [];
    let source: RuleSetConfig | undefined;
    if (collectionRoles.length > 0) {
      source = collection;
      this.roleSource = 'collection';
    } else if (defaults) {
      source = defaults;
      this.roleSource = 'default';
    } else {
      source = collection;
      this.roleSource = collection ? 'collection' : 'none';
    }
    this.roles = (source?.roles ?? []).map((role, i) => compileRole(role, i, `roles[${i}]`));
    const names = new Set<string>();
    for (const role of this.roles) {
      if (names.has(role.name)) throw new RulesError(RulesErrorCode.InvalidRule, `role names must be unique: "${role.name}" appears twice`);
      names.add(role.name);
    }
    // Filters come with the rule set: the collection's when it has any, else the default rule's.
    const filterSource = collection?.filters && collection.filters.length > 0 ? collection.filters : (defaults?.filters ?? collection?.filters ?? []);
    this.filters = filterSource.map((filter, i) => compileFilter(filter, i));
    this.async = this.roles.some((r) => r.async) || this.filters.some((f) => f.async);
    this.documentFields = referencedFields(this.roles);
  }

  /** A per-request evaluator; it remembers document-independent apply_when values across documents. */
  forRequest(ctx: RequestContext): RulesAccess {
    if (this.roleSource === 'none') {
      throw new RulesError(RulesErrorCode.NoMatchingRuleFound, `no rule exists for namespace '${this.namespace ?? 'unknown'}'`);
    }
    return new RulesAccess(this, ctx);
  }

  // Convenience entry points (one request, one document). The hot path uses forRequest.

  /** The name of the role that applies to the document, or null. */
  async selectRole(ctx: RequestContext, doc: RuleDocument): Promise<string | null> {
    return this.forRequest(ctx).selectRole(doc);
  }

  async canRead(ctx: RequestContext, doc: RuleDocument, options: { search?: boolean } = {}): Promise<ReadDecision> {
    return this.forRequest(ctx).canRead(doc, options);
  }

  /** The visible document, or null when it is hidden. */
  async project(ctx: RequestContext, doc: RuleDocument): Promise<RuleDocument | null> {
    return (await this.forRequest(ctx).canRead(doc)).document ?? null;
  }

  async checkInsert(ctx: RequestContext, doc: RuleDocument): Promise<WriteDecision> {
    return this.forRequest(ctx).checkInsert(doc);
  }

  async checkUpdate(ctx: RequestContext, pre: RuleDocument, post: RuleDocument): Promise<WriteDecision> {
    return this.forRequest(ctx).checkUpdate(pre, post);
  }

  async checkDelete(ctx: RequestContext, doc: RuleDocument): Promise<WriteDecision> {
    return this.forRequest(ctx).checkDelete(doc);
  }

  async applyFilters(ctx: RequestContext, query?: MongoQuery, projection?: MongoProjection): Promise<PreparedQuery> {
    return this.forRequest(ctx).prepareQuery(query, projection);
  }
}

function referencedFields(roles: readonly CompiledRole[]): ReadonlySet<string> | 'all' {
  const fields = new Set<string>();
  let whole = false;
  const visit = (expression: CompiledExpression | undefined): void => {
    if (!expression) return;
    for (const field of expression.info.fields) fields.add(field);
    whole ||= expression.info.wholeDocument;
  };
  const visitField = (rule: CompiledFieldRule | undefined): void => {
    if (!rule) return;
    visit(rule.read);
    visit(rule.write);
    rule.fields?.forEach(visitField);
  };
  for (const role of roles) {
    [role.applyWhen, role.documentFilters?.read, role.documentFilters?.write, role.read, role.write, role.insert, role.delete, role.search].forEach(visit);
    role.fields?.forEach(visitField);
    visitField(role.additionalFields);
  }
  return whole ? 'all' : fields;
}

const UNTRUSTED: Record<WriteOperation, string> = {
  insert: 'insert not permitted',
  update: 'update not permitted',
  delete: 'delete not permitted',
};

function describeId(doc: RuleDocument | undefined): string {
  const id = doc?._id;
  if (id === undefined) return '(none)';
  if (typeof id === 'object' && id !== null && (id as { _bsontype?: unknown })._bsontype === 'ObjectId') {
    return `ObjectID("${(id as { toHexString: () => string }).toHexString()}")`;
  }
  if (typeof id === 'object' && id !== null) return JSON.stringify(id) ?? 'object';
  return JSON.stringify(id) ?? typeof id;
}

/** Decisions for one request (one user, one set of values); cheap to call per document. */
export class RulesAccess {
  private readonly base: EvaluationContext;
  /** Reused by the synchronous read path; never escapes a decision. */
  private readonly scratch: EvaluationContext;
  private readonly explain: boolean;
  private readonly copy: ((value: unknown) => unknown) | undefined;
  private readonly cache: ApplyWhenCache = [];
  private readPlan: ReadPlan | undefined;
  private paths: PathReadability | undefined;

  constructor(
    readonly rules: CompiledRules,
    ctx: RequestContext,
  ) {
    this.explain = ctx.explain === true;
    this.copy = ctx.copy;
    this.base = requestScope(ctx);
    this.scratch = withDocument(this.base, undefined, undefined);
  }

  /** Visible documents of this access share no object with the documents read (RequestOptions.copy). */
  get copies(): boolean {
    return this.copy !== undefined;
  }

  private trace(operation: TracedOperation): DecisionTrace | undefined {
    if (!this.explain) return undefined;
    const trace = newTrace(operation, this.rules.namespace);
    trace.roleSource = this.rules.roleSource;
    return trace;
  }

  /**
   * Gives a flow the request's apply_when cache. An asynchronous flow may run several passes (see
   * steps.ts); each pass starts from the same snapshot so every pass evaluates the same expressions in
   * the same order, and the values learnt are kept once the flow completes.
   */
  private cached<T>(body: (ev: Evaluator, cache: ApplyWhenCache) => T): Flow<T> {
    if (!this.rules.async) return (ev) => body(ev, this.cache);
    return (ev) => {
      const snapshot = this.cache.slice();
      const result = body(ev, snapshot);
      snapshot.forEach((value, i) => {
        if (value !== undefined) this.cache[i] = value;
      });
      return result;
    };
  }

  private run<T>(flow: Flow<T>): Promise<T> {
    if (this.rules.async) return runAsync(flow);
    // No %function: one synchronous pass, wrapped so that errors still reject the promise.
    return new Promise<T>((resolve) => resolve(runSync(flow)));
  }

  // ---- role ----

  private roleFlow(doc: RuleDocument): Flow<CompiledRole | undefined> {
    return this.cached((ev, cache) => selectRole(ev, this.rules.roles, withDocument(this.base, doc, doc), cache, undefined));
  }

  async selectRole(doc: RuleDocument): Promise<string | null> {
    return (await this.run(this.roleFlow(doc)))?.name ?? null;
  }

  selectRoleSync(doc: RuleDocument): string | null {
    return selectRole(syncEvaluator, this.rules.roles, withDocument(this.base, doc, doc), this.cache, undefined)?.name ?? null;
  }

  // ---- read ----

  private readFlow(ev: Evaluator, cache: ApplyWhenCache, doc: RuleDocument, search: boolean, scratch?: EvaluationContext): ReadDecision {
    const trace = this.trace(search ? 'search' : 'read');
    let ctx: EvaluationContext;
    if (scratch) {
      scratch.root = doc;
      scratch.prevRoot = doc;
      ctx = scratch;
    } else {
      ctx = withDocument(this.base, doc, doc);
    }
    const outcome = readDocument(ev, this.rules.roles, doc, ctx, cache, search, trace);
    const decision: ReadDecision = { allowed: outcome.document !== undefined, role: outcome.role?.name ?? null };
    if (outcome.document) decision.document = this.copy ? ownedCopy(doc, outcome.document, this.copy) : outcome.document;
    if (trace) decision.trace = trace;
    return decision;
  }

  /**
   * The hot path: for reads without explain, search or `%function`, what the request alone decides is
   * settled once (read-plan.ts).
   */
  private planFor(search: boolean): ReadPlan | undefined {
    if (this.explain || this.rules.async || search) return undefined;
    return (this.readPlan ??= buildReadPlan(this.rules.roles, this.base, this.cache));
  }

  /** Whether the document is visible, and the visible document (fields without read permission removed). */
  async canRead(doc: RuleDocument, options: { search?: boolean } = {}): Promise<ReadDecision> {
    return this.run(this.cached((ev, cache) => this.readFlow(ev, cache, doc, options.search === true)));
  }

  /** Synchronous `canRead`; throws AsyncEvaluationRequired when the rules call `%function`. */
  canReadSync(doc: RuleDocument, options: { search?: boolean } = {}): ReadDecision {
    const plan = this.planFor(options.search === true);
    if (plan) {
      const ctx = this.scratch;
      ctx.root = doc;
      ctx.prevRoot = doc;
      return readWithPlan(plan, doc, ctx, this.copy);
    }
    // A synchronous pass runs to completion before anything else can, so one context object is reused.
    return this.readFlow(syncEvaluator, this.cache, doc, options.search === true, this.scratch);
  }

  /** The visible documents of a result, in order (hidden ones dropped). */
  async visibleDocuments(docs: Iterable<RuleDocument>): Promise<RuleDocument[]> {
    const out: RuleDocument[] = [];
    for (const doc of docs) {
      const decision = await this.canRead(doc);
      if (decision.document) out.push(decision.document);
    }
    return out;
  }

  visibleDocumentsSync(docs: Iterable<RuleDocument>): RuleDocument[] {
    const out: RuleDocument[] = [];
    const plan = this.planFor(false);
    if (plan) {
      // No decision object per document: only the visible documents are kept.
      const ctx = this.scratch;
      for (const doc of docs) {
        ctx.root = doc;
        ctx.prevRoot = doc;
        const visible = visibleWithPlan(plan, doc, ctx, this.copy);
        if (visible) out.push(visible);
      }
      return out;
    }
    for (const doc of docs) {
      const decision = this.canReadSync(doc);
      if (decision.document) out.push(decision.document);
    }
    return out;
  }

  /**
   * Whether the user may read the dotted `path` in every document it can see, decided from the request
   * alone and conservatively (readable-paths.ts). A query may only filter, sort or group on such paths.
   */
  canReadPath(path: string): boolean {
    return (this.paths ??= pathReadability(this.rules.roles, this.base, this.cache)).readable(path);
  }

  // ---- writes ----

  private writeFlow(ev: Evaluator, cache: ApplyWhenCache, operation: WriteOperation, pre: RuleDocument | undefined, post: RuleDocument | undefined): WriteDecision {
    const trace = this.trace(operation);
    const outcome = writeDocument(ev, this.rules.roles, operation, pre, post, this.base, cache, trace);
    const decision: WriteDecision = { allowed: outcome.allowed, role: outcome.role?.name ?? null };
    if (!outcome.allowed) {
      const reason = `${outcome.reason ?? 'write refused'} in "${this.rules.namespace ?? 'unknown'}" for document with _id: ${describeId(pre ?? post)}`;
      decision.error = new RulesError(RulesErrorCode.SchemaValidationFailedWrite, UNTRUSTED[operation], reason);
    }
    if (trace) decision.trace = trace;
    return decision;
  }

  async checkInsert(doc: RuleDocument): Promise<WriteDecision> {
    return this.run(this.cached((ev, cache) => this.writeFlow(ev, cache, 'insert', undefined, doc)));
  }

  checkInsertSync(doc: RuleDocument): WriteDecision {
    return this.writeFlow(syncEvaluator, this.cache, 'insert', undefined, doc);
  }

  /** `pre` is the stored document, `post` the document the update would commit. */
  async checkUpdate(pre: RuleDocument, post: RuleDocument): Promise<WriteDecision> {
    return this.run(this.cached((ev, cache) => this.writeFlow(ev, cache, 'update', pre, post)));
  }

  checkUpdateSync(pre: RuleDocument, post: RuleDocument): WriteDecision {
    return this.writeFlow(syncEvaluator, this.cache, 'update', pre, post);
  }

  async checkDelete(doc: RuleDocument): Promise<WriteDecision> {
    return this.run(this.cached((ev, cache) => this.writeFlow(ev, cache, 'delete', doc, undefined)));
  }

  checkDeleteSync(doc: RuleDocument): WriteDecision {
    return this.writeFlow(syncEvaluator, this.cache, 'delete', doc, undefined);
  }

  // ---- queries ----

  private queryFlow(ev: Evaluator, query: MongoQuery | undefined, projection: MongoProjection | undefined, pushdown: boolean): PreparedQuery {
    const trace = this.trace('filters');
    const applied = applyFilterSet(ev, this.rules.filters, this.base, trace);
    const parts: MongoQuery[] = [query ?? {}, ...applied.queries];
    let matchesNothing = false;
    let exact = false;
    if (pushdown) {
      const readable = readableCondition(this.rules.roles, this.base);
      exact = readable.exact;
      if (readable.condition === false) matchesNothing = true;
      else if (readable.condition !== true) parts.push(readable.condition);
    }
    const prepared: PreparedQuery = {
      query: andQueries(parts),
      projection: mergeProjections(projection, applied.projection),
      matchesNothing,
      exact,
      filters: applied.names,
    };
    if (trace) {
      trace.reason = matchesNothing ? 'no role can read any document' : `filters applied: ${applied.names.join(', ') || 'none'}`;
      prepared.trace = trace;
    }
    return prepared;
  }

  /**
   * The query and projection to send to the store: the request's, ANDed with the applying filters and
   * (unless `pushdown: false`) with what the roles require of a readable document. Throws
   * FilterProjectionConflict when inclusive and exclusive projections meet.
   */
  async prepareQuery(query?: MongoQuery, projection?: MongoProjection, options: { pushdown?: boolean } = {}): Promise<PreparedQuery> {
    return this.run((ev) => this.queryFlow(ev, query, projection, options.pushdown !== false));
  }

  prepareQuerySync(query?: MongoQuery, projection?: MongoProjection, options: { pushdown?: boolean } = {}): PreparedQuery {
    return runSync((ev) => this.queryFlow(ev, query, projection, options.pushdown !== false));
  }
}
