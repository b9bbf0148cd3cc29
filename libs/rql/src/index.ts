// Public entry of @tessera/rql: Realm Query Language for flexible sync subscriptions (pure: no store, no transport).
export type { CompareOp, ParsedQuery, PathElement, Quantifier, RqlConstant, RqlDescriptor, RqlExpression, RqlProperty, RqlQuery, RqlScalar, RqlValue } from './ast';
export { RqlError, RqlErrorCode, SYNC_BAD_QUERY_ERROR_CODE, isRqlError } from './errors';
export { parseQuery, DEFAULT_MAX_QUERY_DEPTH, DEFAULT_MAX_QUERY_LENGTH, type ParseOptions } from './parser';
export { translateQuery, type QueryableFields, type RqlField, type RqlFieldType, type RqlTable, type TranslatedQuery } from './translate';
export { compilePlan, planToFilter, type DocumentMatcher, type Plan, type ValueTest } from './plan';
export { SubscriptionIndex, SubscriptionScan, equalityConstraint, type SessionMatch, type ViewChange } from './subscription-index';
