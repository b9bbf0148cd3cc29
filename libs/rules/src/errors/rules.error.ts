/**
 * Errors raised by the rules library: TesseraErrors, so every transport edge maps them to App Services
 * bodies. See docs/decisions/0011-rules-error-outside-domain.md.
 */
import { CodedError } from '@tessera/domain';

export enum RulesErrorCode {
  /** The namespace has neither collection rules nor default rules (App Services: HTTP 403). */
  NoMatchingRuleFound = 'NoMatchingRuleFound',
  /** A write was refused by the role's permissions (App Services' code for refused writes). */
  SchemaValidationFailedWrite = 'SchemaValidationFailedWrite',
  /** An expression is malformed: unknown operator or expansion, wrong operand shape. */
  InvalidExpression = 'InvalidExpression',
  /** A role or filter is malformed, e.g. a filter's apply_when uses a document expansion. */
  InvalidRule = 'InvalidRule',
  /** Applying filters mix inclusive and exclusive projections: the query fails. */
  FilterProjectionConflict = 'FilterProjectionConflict',
  /** A `%function` rule could not be called (no callback) or threw. */
  RuleFunctionFailed = 'RuleFunctionFailed',
  /** A synchronous entry point was used on rules that contain `%function`. */
  AsyncEvaluationRequired = 'AsyncEvaluationRequired',
}

const HTTP_STATUS: Record<RulesErrorCode, number> = {
  [RulesErrorCode.NoMatchingRuleFound]: 403,
  [RulesErrorCode.SchemaValidationFailedWrite]: 403,
  [RulesErrorCode.InvalidExpression]: 400,
  [RulesErrorCode.InvalidRule]: 400,
  [RulesErrorCode.FilterProjectionConflict]: 400,
  [RulesErrorCode.RuleFunctionFailed]: 500,
  [RulesErrorCode.AsyncEvaluationRequired]: 500,
};

export interface RulesErrorBody {
  error: string;
  error_code: string;
  link?: string;
}

export class RulesError extends CodedError<RulesErrorCode> {
  /**
   * @param message safe to show to a client (for refused writes: `insert not permitted`, ...)
   * @param reason the detailed explanation for logs and explain traces (role, namespace, document id)
   */
  constructor(
    code: RulesErrorCode,
    message: string,
    readonly reason?: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, HTTP_STATUS, options);
  }
}

export function isRulesError(value: unknown): value is RulesError {
  return value instanceof RulesError;
}
