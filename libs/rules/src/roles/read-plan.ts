/**
 * The read flow of one request, settled as far as the request alone allows. Before the first document,
 * the roles whose apply_when does not read the document are decided (a false one drops out, a true one
 * ends the list), and for each remaining role whatever of its read flow does not read the document
 * (document_filters, read, write, constant field permissions) is decided too. Per document only the
 * apply_when values that read the document remain, then a prepared outcome: hidden, the whole document,
 * a copy with a fixed set of fields, or the general read flow for that role.
 *
 * This is `readDocument` (flows.ts) for reads without a trace and without `%function`: same order of
 * evaluation, same answers. The flows are pure, so deciding a document-independent expression once per
 * request instead of once per document cannot change a decision. Nothing here is used when explaining.
 */
import { type CompiledExpression, usesDocument } from '../expressions/compile';
import { type EvaluationContext } from '../expressions/context';
import { type RuleDocument } from '../expressions/values';
import { type CompiledRole, type StaticFieldPlan } from './compiled-role';
import { type ReadDecision } from './decisions';
import { type ApplyWhenCache, documentFiltersAllowRead, ownedCopy, readAs, staticVisibleFields } from './flows';
import { syncEvaluator } from './steps';

const Outcome = {
  Hidden: 0,
  Whole: 1,
  StaticFields: 2,
  /** Something the role decides reads the document: run the read flow for the role. */
  PerDocument: 3,
} as const;
type Outcome = (typeof Outcome)[keyof typeof Outcome];

interface ReadStep {
  readonly role: CompiledRole;
  /** The role's apply_when, when it reads the document; null when the role applies to every document. */
  readonly applies: ((ctx: EvaluationContext) => boolean) | null;
  readonly outcome: Outcome;
  readonly fields: StaticFieldPlan | undefined;
}

export interface ReadPlan {
  readonly steps: readonly ReadStep[];
}

const independent = (expression: CompiledExpression | undefined): boolean => expression === undefined || !usesDocument(expression.info);

/** The role's read outcome, when nothing of it reads the document (`ctx` has no document). */
function settledOutcome(role: CompiledRole, ctx: EvaluationContext): Outcome {
  const filters = role.documentFilters;
  if (!independent(filters?.read) || !independent(filters?.write) || !independent(role.read) || !independent(role.write)) return Outcome.PerDocument;
  // The same steps, in the same order, as readAs (flows.ts) for a read without search.
  if (!documentFiltersAllowRead(syncEvaluator, role, ctx, undefined)) return Outcome.Hidden;
  const read = syncEvaluator.optional(role.read, ctx, undefined, role.labels.read);
  if (read === true) return Outcome.Whole;
  if (syncEvaluator.optional(role.write, ctx, undefined, role.labels.write) === true) return Outcome.Whole;
  if (read === false || !role.hasFieldRules) return Outcome.Hidden;
  return role.staticFields ? Outcome.StaticFields : Outcome.PerDocument;
}

/**
 * Builds the plan of a request. `ctx` is the request's context without a document; `cache` is the
 * request's apply_when memory, shared with the general flows. Only for rules without `%function`.
 */
export function buildReadPlan(roles: readonly CompiledRole[], ctx: EvaluationContext, cache: ApplyWhenCache): ReadPlan {
  const steps: ReadStep[] = [];
  for (const role of roles) {
    let applies: ReadStep['applies'] = null;
    if (role.applyWhenIsDocumentIndependent) {
      let value = cache[role.index];
      if (value === undefined) cache[role.index] = value = syncEvaluator.bool(role.applyWhen, ctx, undefined, role.labels.applyWhen);
      if (!value) continue;
    } else {
      const node = role.applyWhen.node;
      // A synchronous node (the plan is only built for rules without %function).
      if (node.async) throw new Error('read plans are for synchronous rules');
      applies = node.run;
    }
    const outcome = settledOutcome(role, ctx);
    steps.push({ role, applies, outcome, fields: outcome === Outcome.StaticFields ? role.staticFields : undefined });
    if (applies === null) break;
  }
  return { steps };
}

/** The step whose role applies to the document in `ctx`, or undefined when no role does. */
function applyingStep(plan: ReadPlan, ctx: EvaluationContext): ReadStep | undefined {
  const steps = plan.steps;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    if (step.applies === null || step.applies(ctx)) return step;
  }
  return undefined;
}

/** The visible document under the step's role, or undefined when the role hides it. */
function visibleUnder(step: ReadStep, doc: RuleDocument, ctx: EvaluationContext, copy: ((value: unknown) => unknown) | undefined): RuleDocument | undefined {
  switch (step.outcome) {
    case Outcome.Hidden:
      return undefined;
    case Outcome.Whole:
      return copy ? (copy(doc) as RuleDocument) : doc;
    case Outcome.StaticFields:
      return staticVisibleFields(doc, step.fields as StaticFieldPlan, copy);
    case Outcome.PerDocument: {
      const visible = readAs(syncEvaluator, step.role, doc, ctx, false, undefined);
      return visible !== undefined && copy ? ownedCopy(doc, visible, copy) : visible;
    }
  }
}

/** Reads one document with the plan (no trace). `ctx` holds the document as root and prevRoot. */
export function readWithPlan(plan: ReadPlan, doc: RuleDocument, ctx: EvaluationContext, copy: ((value: unknown) => unknown) | undefined): ReadDecision {
  const step = applyingStep(plan, ctx);
  if (step === undefined) return { allowed: false, role: null };
  const document = visibleUnder(step, doc, ctx, copy);
  return document === undefined ? { allowed: false, role: step.role.name } : { allowed: true, role: step.role.name, document };
}

/** Only the visible document (or undefined), for callers that need no decision object. */
export function visibleWithPlan(plan: ReadPlan, doc: RuleDocument, ctx: EvaluationContext, copy: ((value: unknown) => unknown) | undefined): RuleDocument | undefined {
  const step = applyingStep(plan, ctx);
  return step === undefined ? undefined : visibleUnder(step, doc, ctx, copy);
}
