/**
 * Explain traces: what a decision looked at. Built only when the caller asks (`explain: true`); every
 * recording site checks for a trace first, so a request without explain pays one null check per step.
 */

export type TracedOperation = 'read' | 'search' | 'insert' | 'update' | 'delete' | 'filters' | 'sync' | 'partition';

/** One evaluated expression: where it sits in the rules, its JSON source and what it gave. */
export interface TraceEvaluation {
  /** e.g. `roles[1](owner).apply_when`, `roles[0](owner).fields.email.read`, `filters[0](mine).apply_when` */
  at: string;
  expression: unknown;
  /** `undefined` when the expression is not defined and its default applied. */
  value: boolean | undefined;
  /** true when the value came from an earlier document of the same request (document-independent). */
  cached?: boolean;
}

export interface DecisionTrace {
  operation: TracedOperation;
  namespace?: string;
  /** Where the candidate roles came from: the collection's rules or the data source's default rules. */
  roleSource?: 'collection' | 'default' | 'none';
  /** The role that applied, or null when none did. */
  role: string | null;
  evaluations: TraceEvaluation[];
  /** The location of the expression (or default) that settled the outcome. */
  decidedBy?: string;
  /** Human-readable outcome, e.g. `hidden: no role applies`. */
  reason?: string;
  /** Dotted paths of fields removed from the visible document (reads) or refused (writes). */
  withheldFields: string[];
  /** Filters that applied (filters operation). */
  appliedFilters?: string[];
}

export function newTrace(operation: TracedOperation, namespace: string | undefined): DecisionTrace {
  return { operation, namespace, role: null, evaluations: [], withheldFields: [] };
}
