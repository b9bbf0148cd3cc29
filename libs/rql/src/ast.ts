/**
 * The parsed form of a Realm Query Language string, as realm-core's grammar builds it (query_bison.yy), with
 * constants already decoded to the BSON values they stand for and `$n` arguments substituted.
 */
import { type Binary, type Long, type ObjectId } from 'bson';

/** ANY/SOME, ALL, NONE before a key path, a list literal or an argument. */
export type Quantifier = 'any' | 'all' | 'none';

export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'beginswith' | 'endswith' | 'contains' | 'like' | 'text';

/** A constant's value: numbers are JS numbers (a Long beyond 2^53), dates are JS Dates, UUIDs Binary subtype 4. */
export type RqlScalar = null | boolean | number | Long | string | Date | ObjectId | Binary;

export interface RqlConstant {
  kind: 'constant';
  value: RqlScalar;
  /** For dates: the constant named a time between two milliseconds (realm-core keeps nanoseconds). */
  subMillisecond?: boolean;
  /** Link literals (O12, L1:2, obj('T', pk)): parsed, never served. */
  link?: boolean;
  /** A `{...}` list literal, or an argument that was a list. */
  list?: RqlScalar[];
  quantifier?: Quantifier;
  /** Where the constant starts, for messages. */
  text: string;
}

export type PathElement = string | number | { index: 'first' | 'last' | 'all' };

export interface RqlProperty {
  kind: 'property';
  path: PathElement[];
  quantifier?: Quantifier;
  /** `.@size`/`.@count`/`[SIZE]`, or `.@type`. */
  postOp?: 'size' | 'type';
}

export interface RqlAggregate {
  kind: 'aggregate';
  path: PathElement[];
  op: 'min' | 'max' | 'sum' | 'avg';
  field?: string;
}

export interface RqlSubquery {
  kind: 'subquery';
  path: PathElement[];
  variable: string;
  query: RqlQuery;
}

export interface RqlArithmetic {
  kind: 'arithmetic';
  op: '+' | '-' | '*' | '/';
  left: RqlExpression;
  right: RqlExpression;
}

export type RqlValue = RqlConstant | RqlProperty | RqlAggregate | RqlSubquery;
export type RqlExpression = RqlValue | RqlArithmetic;

export type RqlQuery =
  | { kind: 'bool'; value: boolean }
  | { kind: 'and' | 'or'; left: RqlQuery; right: RqlQuery }
  | { kind: 'not'; query: RqlQuery }
  | { kind: 'compare'; op: CompareOp; left: RqlExpression; right: RqlExpression; caseInsensitive: boolean }
  | { kind: 'between'; value: RqlValue; range: RqlConstant }
  | { kind: 'geowithin'; property: RqlProperty };

export type RqlDescriptor =
  | { kind: 'sort'; keys: { path: PathElement[]; ascending: boolean }[] }
  | { kind: 'distinct'; paths: PathElement[][] }
  | { kind: 'limit'; count: number };

export interface ParsedQuery {
  query: RqlQuery;
  descriptors: RqlDescriptor[];
}
