/**
 * The rule documents as App Services stores them (rules v2): `data_sources/<svc>/<db>/<coll>/rules.json`
 * and `default_rule.json`. Plain JSON types; compileRules turns them into closures.
 */

/** A rule expression: a boolean or a JSON object (see the expression language). */
export type Expression = boolean | { [key: string]: unknown };

export interface FieldPermission {
  read?: Expression;
  write?: Expression;
  /** Rules for the fields of an embedded document. */
  fields?: Record<string, FieldPermission>;
}

export interface RoleConfig {
  name: string;
  apply_when?: Expression;
  document_filters?: { read?: Expression; write?: Expression };
  read?: Expression;
  write?: Expression;
  insert?: Expression;
  delete?: Expression;
  search?: Expression;
  fields?: Record<string, FieldPermission>;
  additional_fields?: { read?: Expression; write?: Expression };
}

export interface FilterConfig {
  name: string;
  apply_when?: Expression;
  query?: Record<string, unknown>;
  projection?: Record<string, unknown>;
}

/** `rules.json` of a collection, or `default_rule.json` of a data source (no database/collection). */
export interface RuleSetConfig {
  database?: string;
  collection?: string;
  roles?: RoleConfig[];
  filters?: FilterConfig[];
}

/** `partition.permissions` of a Partition-Based Sync configuration. */
export interface PartitionPermissionsConfig {
  read?: Expression;
  write?: Expression;
}
