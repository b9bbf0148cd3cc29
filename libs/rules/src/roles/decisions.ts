/** What a rule decision says: the outcome, the role that decided, the trace when asked for. */
import { type DecisionTrace } from '../explain/trace';
import { type RulesError } from '../errors/rules.error';
import { type RuleDocument } from '../expressions/values';

export interface Decision {
  allowed: boolean;
  /** The role that applied, or null when none did. */
  role: string | null;
  trace?: DecisionTrace;
}

export interface ReadDecision extends Decision {
  /** The visible document: the stored one, or a copy without the fields the user may not read. */
  document?: RuleDocument;
}

export interface WriteDecision extends Decision {
  /** For a refused write: App Services' error (`SchemaValidationFailedWrite`, `insert not permitted`). */
  error?: RulesError;
}
