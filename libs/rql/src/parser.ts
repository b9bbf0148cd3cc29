/**
 * A recursive-descent parser for the Realm Query Language grammar of realm-core v14 (query_bison.yy):
 * predicates, comparisons, arithmetic, list literals, quantifiers, post-operators, aggregates, subqueries and
 * the SORT/DISTINCT/LIMIT descriptors. It builds the tree and decodes constants; it does not decide what the
 * server serves (translate.ts does). Every failure is an RqlError with the offset; input size and nesting
 * depth are bounded so no input can exhaust the stack or the CPU.
 */
import { type Binary, type Long } from 'bson';
import {
  type CompareOp,
  type ParsedQuery,
  type PathElement,
  type Quantifier,
  type RqlConstant,
  type RqlDescriptor,
  type RqlExpression,
  type RqlProperty,
  type RqlQuery,
  type RqlScalar,
  type RqlValue,
} from './ast';
import { base64Bytes, base64String, binaryValue, floatValue, integerValue, objectIdValue, parseInteger, stringValue, timestampValue, uuidValue } from './constants';
import { RqlError, RqlErrorCode, syntaxError } from './errors';
import { type Token, type TokenType, tokenize } from './lexer';

export interface ParseOptions {
  /** Values of `$0`, `$1`, ...: scalars, or arrays for list arguments. */
  args?: readonly unknown[];
  /** Longest query text accepted, in UTF-16 units (default 256 KiB). */
  maxLength?: number;
  /** Deepest nesting of parentheses, NOT and arithmetic accepted (default 100). */
  maxDepth?: number;
}

export const DEFAULT_MAX_QUERY_LENGTH = 256 * 1024;
export const DEFAULT_MAX_QUERY_DEPTH = 100;

/** Tokens realm-core accepts as a key path element besides identifiers (its `id` rule). */
const ID_TOKENS = new Set<TokenType>([
  'id', 'links', 'beginswith', 'endswith', 'contains', 'like', 'between', 'keyval', 'sort', 'distinct', 'limit',
  'ascending', 'descending', 'in', 'text', 'binary', 'first', 'last', 'indexsize',
]);
const EQUALITY = new Set<TokenType>(['==', '!=', 'in']);
const RELATIONAL = new Set<TokenType>(['<', '<=', '>', '>=']);
const STRING_OPS = new Set<TokenType>(['beginswith', 'endswith', 'contains', 'like']);
const COMPARISON_STARTS = new Set<TokenType>([...EQUALITY, ...RELATIONAL, ...STRING_OPS, 'text', 'between', 'geowithin']);
const QUANTIFIERS: Partial<Record<TokenType, Quantifier>> = { any: 'any', all: 'all', none: 'none' };

type Group = { query: RqlQuery } | { expr: RqlExpression; parenthesized: boolean };

class Parser {
  private position = 0;
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly options: ParseOptions,
    private readonly maxDepth: number,
  ) {}

  parse(): ParsedQuery {
    const query = this.parseOr();
    const descriptors = this.parseDescriptors();
    if (this.peek().type !== 'end') this.fail(`unexpected ${describe(this.peek())}`);
    return { query, descriptors };
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.position + offset, this.tokens.length - 1)];
  }

  private next(): Token {
    const token = this.peek();
    if (token.type !== 'end') this.position += 1;
    return token;
  }

  private isPunct(text: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.type === 'punct' && token.text === text;
  }

  private expectPunct(text: string): Token {
    if (!this.isPunct(text)) this.fail(`expected '${text}' but found ${describe(this.peek())}`);
    return this.next();
  }

  private expect(type: TokenType, what: string): Token {
    if (this.peek().type !== type) this.fail(`expected ${what} but found ${describe(this.peek())}`);
    return this.next();
  }

  private fail(message: string, token = this.peek()): never {
    throw syntaxError(message, token.at);
  }

  private enter(): void {
    this.depth += 1;
    if (this.depth > this.maxDepth) this.fail(`the query nests deeper than ${this.maxDepth} levels`);
  }

  private leave(): void {
    this.depth -= 1;
  }

  // query: OR binds loosest, then AND, then NOT.
  private parseOr(): RqlQuery {
    return this.continueOr(this.parseAnd());
  }

  private continueOr(left: RqlQuery): RqlQuery {
    while (this.peek().type === 'or') {
      this.next();
      left = { kind: 'or', left, right: this.parseAnd() };
    }
    return left;
  }

  private parseAnd(): RqlQuery {
    return this.continueAnd(this.parseUnary());
  }

  private continueAnd(left: RqlQuery): RqlQuery {
    while (this.peek().type === 'and') {
      this.next();
      left = { kind: 'and', left, right: this.parseUnary() };
    }
    return left;
  }

  private parseUnary(): RqlQuery {
    const token = this.peek();
    this.enter();
    try {
      if (token.type === 'not') {
        this.next();
        return { kind: 'not', query: this.parseUnary() };
      }
      if (token.type === 'truepredicate' || token.type === 'falsepredicate') {
        this.next();
        return { kind: 'bool', value: token.type === 'truepredicate' };
      }
      if (this.isPunct('(')) {
        this.next();
        const group = this.parseGroup();
        this.expectPunct(')');
        if ('query' in group) return group.query;
        return this.parseComparison(this.continueArithmetic(group.expr, 0), true);
      }
      const left = this.parseArithmetic(0);
      return this.parseComparison(left, left.kind === 'arithmetic');
    } finally {
      this.leave();
    }
  }

  /**
   * The inside of a parenthesis, which is a predicate (`(a == 1 || b == 2)`) or an operand (`(a + 1) > 2`):
   * only what follows it tells which, as in realm-core's LALR grammar.
   */
  private parseGroup(): Group {
    const token = this.peek();
    this.enter();
    try {
      if (token.type === 'not' || token.type === 'truepredicate' || token.type === 'falsepredicate') return { query: this.parseOr() };
      let expr: RqlExpression;
      let parenthesized: boolean;
      if (this.isPunct('(')) {
        this.next();
        const inner = this.parseGroup();
        this.expectPunct(')');
        if ('query' in inner) return { query: this.continueOr(this.continueAnd(inner.query)) };
        expr = this.continueArithmetic(inner.expr, 0);
        parenthesized = true;
      } else {
        expr = this.parseArithmetic(0);
        parenthesized = expr.kind === 'arithmetic';
      }
      if (!COMPARISON_STARTS.has(this.peek().type)) return { expr, parenthesized };
      return { query: this.continueOr(this.continueAnd(this.parseComparison(expr, parenthesized))) };
    } finally {
      this.leave();
    }
  }

  private parseComparison(left: RqlExpression, isExpression: boolean): RqlQuery {
    const token = this.peek();
    if (EQUALITY.has(token.type) || RELATIONAL.has(token.type)) {
      this.next();
      const op = token.type === 'in' ? 'in' : (token.type as CompareOp);
      const caseInsensitive = EQUALITY.has(token.type) && this.peek().type === 'case';
      if (caseInsensitive) this.next();
      return { kind: 'compare', op, left, right: this.parseArithmetic(0), caseInsensitive };
    }
    if (STRING_OPS.has(token.type) || token.type === 'text') {
      if (isExpression) this.fail(`${token.text} needs a value on its left, not an expression`, token);
      this.next();
      const caseInsensitive = token.type !== 'text' && this.peek().type === 'case';
      if (caseInsensitive) this.next();
      return { kind: 'compare', op: token.type as CompareOp, left, right: this.parseValue(), caseInsensitive };
    }
    if (token.type === 'between') {
      if (isExpression) this.fail('BETWEEN needs a value on its left, not an expression', token);
      this.next();
      const range = this.parseValue();
      if (range.kind !== 'constant' || !range.list) this.fail('BETWEEN needs a list {low, high}', token);
      return { kind: 'between', value: left as RqlValue, range };
    }
    if (token.type === 'geowithin') {
      if (left.kind !== 'property') this.fail('geoWithin needs a property on its left', token);
      throw new RqlError(RqlErrorCode.Unsupported, 'Invalid query: geoWithin queries are not supported in server-side queries');
    }
    return this.fail(`expected a comparison but found ${describe(token)}`);
  }

  private parseArithmetic(minPrecedence: number): RqlExpression {
    return this.continueArithmetic(this.parseArithmeticAtom(), minPrecedence);
  }

  private continueArithmetic(left: RqlExpression, minPrecedence: number): RqlExpression {
    for (;;) {
      const token = this.peek();
      if (token.type !== 'op') return left;
      const precedence = token.text === '*' || token.text === '/' ? 2 : 1;
      if (precedence < minPrecedence) return left;
      this.next();
      this.enter();
      const right = this.parseArithmetic(precedence + 1);
      this.leave();
      left = { kind: 'arithmetic', op: token.text as '+' | '-' | '*' | '/', left, right };
    }
  }

  private parseArithmeticAtom(): RqlExpression {
    if (!this.isPunct('(')) return this.parseValue();
    this.next();
    this.enter();
    const inner = this.parseArithmetic(0);
    this.leave();
    this.expectPunct(')');
    return inner;
  }

  private parseValue(): RqlValue {
    const token = this.peek();
    const quantifier = QUANTIFIERS[token.type];
    if (quantifier) {
      this.next();
      if (this.isPunct('{')) return { ...this.parseList(), quantifier };
      if (this.peek().type === 'arg') return { ...this.parseConstant(), quantifier };
      return { ...this.parseProperty(), quantifier };
    }
    if (this.isPunct('{')) return this.parseList();
    if (token.type === 'subquery') return this.parseSubquery();
    if ((ID_TOKENS.has(token.type) && !(token.type === 'binary' && this.isPunct('(', 1))) || token.type === 'kparg') {
      const path = this.parsePath();
      const aggregate = this.peek(1).type;
      if (this.isPunct('.') && (aggregate === 'min' || aggregate === 'max' || aggregate === 'sum' || aggregate === 'avg')) {
        this.next();
        this.next();
        if (!this.isPunct('.')) return { kind: 'aggregate', path, op: aggregate };
        this.next();
        return { kind: 'aggregate', path, op: aggregate, field: this.parseId() };
      }
      return this.withPostOp({ kind: 'property', path });
    }
    return this.parseConstant();
  }

  private parseProperty(): RqlProperty {
    if (!ID_TOKENS.has(this.peek().type) && this.peek().type !== 'kparg') this.fail(`expected a key path but found ${describe(this.peek())}`);
    return this.withPostOp({ kind: 'property', path: this.parsePath() });
  }

  private withPostOp(property: RqlProperty): RqlProperty {
    if (this.isPunct('.') && this.peek(1).type === 'size') {
      this.position += 2;
      return { ...property, postOp: 'size' };
    }
    if (this.isPunct('.') && this.peek(1).type === 'type') {
      this.position += 2;
      return { ...property, postOp: 'type' };
    }
    if (this.isPunct('[') && this.peek(1).type === 'indexsize' && this.isPunct(']', 2)) {
      this.position += 3;
      return { ...property, postOp: 'size' };
    }
    return property;
  }

  private parseId(): string {
    const token = this.peek();
    if (!ID_TOKENS.has(token.type)) this.fail(`expected a property name but found ${describe(token)}`);
    this.next();
    return token.type === 'links' ? '@links' : token.text;
  }

  private parsePath(): PathElement[] {
    const first = this.peek();
    if (first.type === 'kparg') {
      throw new RqlError(RqlErrorCode.Unsupported, 'Invalid query: key path arguments ($K) are not supported in server-side queries');
    }
    const path: PathElement[] = [this.parseId()];
    for (;;) {
      if (this.isPunct('.') && ID_TOKENS.has(this.peek(1).type)) {
        this.next();
        path.push(this.parseId());
      } else if (this.isPunct('[') && this.peek(1).type !== 'indexsize') {
        this.next();
        path.push(this.parseIndex());
        this.expectPunct(']');
      } else {
        return path;
      }
    }
  }

  private parseIndex(): PathElement {
    const token = this.next();
    // A plain string switch: the default branch stands for every other token type.
    switch (token.type as string) {
      case 'natural0':
        return Number(parseInteger(token.text));
      case 'first':
        return { index: 'first' };
      case 'last':
        return { index: 'last' };
      case 'string':
        return stringValue(token.text);
      case 'arg': {
        const value = this.argument(token);
        if (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value) && value >= 0)) return value;
        return this.fail('an index argument must be a string or a non-negative integer', token);
      }
      default:
        if (token.type === 'op' && token.text === '*') return { index: 'all' };
        return this.fail(`expected an index but found ${describe(token)}`, token);
    }
  }

  private parseSubquery(): RqlValue {
    this.next();
    this.expectPunct('(');
    const path = this.parsePath();
    this.expectPunct(',');
    const variable = this.parseId();
    this.expectPunct(',');
    const query = this.parseOr();
    this.expectPunct(')');
    this.expectPunct('.');
    this.expect('size', '@size or @count');
    return { kind: 'subquery', path, variable, query };
  }

  private parseList(): RqlConstant {
    const open = this.expectPunct('{');
    const list: RqlScalar[] = [];
    if (!this.isPunct('}')) {
      for (;;) {
        const item = this.parseConstant();
        if (item.list) this.fail('a list literal cannot hold a list', open);
        list.push(item.value);
        if (this.isPunct('}')) break;
        this.expectPunct(',');
      }
    }
    this.expectPunct('}');
    return { kind: 'constant', value: null, list, text: '{...}' };
  }

  private argument(token: Token): unknown {
    const index = Number(token.text.slice(1));
    const args = this.options.args ?? [];
    if (index >= args.length) this.fail(`Request for argument at index ${index} but only ${args.length} argument(s) were provided`, token);
    return args[index];
  }

  private parseConstant(): RqlConstant {
    const token = this.next();
    const constant = (value: RqlScalar): RqlConstant => ({ kind: 'constant', value, text: token.text });
    switch (token.type as string) {
      case 'natural0':
      case 'number':
        return constant(integerValue(parseInteger(token.text)));
      case 'float':
        return constant(floatValue(token.text));
      case 'infinity':
        return constant(token.text.startsWith('-') ? -Infinity : Infinity);
      case 'nan':
        return constant(Number.NaN);
      case 'string':
        return constant(stringValue(token.text));
      case 'base64':
        return constant(base64String(token.text, token.at));
      case 'timestamp': {
        const { date, subMillisecond } = timestampValue(token.text, token.at);
        return subMillisecond ? { ...constant(date), subMillisecond } : constant(date);
      }
      case 'uuid':
        return constant(uuidValue(token.text));
      case 'oid':
        return constant(objectIdValue(token.text));
      case 'true':
        return constant(true);
      case 'false':
        return constant(false);
      case 'null':
        return constant(null);
      case 'link':
      case 'typedlink':
        return { ...constant(null), link: true };
      case 'obj': {
        this.expectPunct('(');
        this.expect('string', 'a table name');
        this.expectPunct(',');
        this.parseConstant();
        this.expectPunct(')');
        return { ...constant(null), link: true };
      }
      case 'binary': {
        this.expectPunct('(');
        const inner = this.next();
        if (inner.type !== 'string' && inner.type !== 'base64') this.fail(`expected a string but found ${describe(inner)}`, inner);
        this.expectPunct(')');
        const bytes = inner.type === 'base64' ? base64Bytes(inner.text, inner.at) : Buffer.from(stringValue(inner.text), 'utf8');
        return constant(binaryValue(bytes));
      }
      case 'arg': {
        const value = this.argument(token);
        if (Array.isArray(value)) return { kind: 'constant', value: null, list: value.map((item) => argumentScalar(item, token)), text: token.text };
        return constant(argumentScalar(value, token));
      }
      default:
        return this.fail(`unexpected ${describe(token)}`, token);
    }
  }

  private parseDescriptors(): RqlDescriptor[] {
    const descriptors: RqlDescriptor[] = [];
    for (;;) {
      const token = this.peek();
      if (token.type === 'sort') {
        this.next();
        this.expectPunct('(');
        const keys: { path: PathElement[]; ascending: boolean }[] = [];
        do {
          if (keys.length > 0) this.next();
          const path = this.parsePath();
          const direction = this.next();
          if (direction.type !== 'ascending' && direction.type !== 'descending') this.fail(`expected ASCENDING or DESCENDING but found ${describe(direction)}`, direction);
          keys.push({ path, ascending: direction.type === 'ascending' });
        } while (this.isPunct(','));
        this.expectPunct(')');
        descriptors.push({ kind: 'sort', keys });
      } else if (token.type === 'distinct') {
        this.next();
        this.expectPunct('(');
        const paths: PathElement[][] = [this.parsePath()];
        while (this.isPunct(',')) {
          this.next();
          paths.push(this.parsePath());
        }
        this.expectPunct(')');
        descriptors.push({ kind: 'distinct', paths });
      } else if (token.type === 'limit') {
        this.next();
        this.expectPunct('(');
        const count = this.expect('natural0', 'a non-negative integer');
        this.expectPunct(')');
        descriptors.push({ kind: 'limit', count: Number(parseInteger(count.text)) });
      } else {
        return descriptors;
      }
    }
  }
}

function argumentScalar(value: unknown, token: Token): RqlScalar {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string' || value instanceof Date) return value;
  if (typeof value === 'bigint') return integerValue(value);
  const bsonType = (value as { _bsontype?: string })._bsontype;
  if (bsonType === 'ObjectId' || bsonType === 'Binary' || bsonType === 'Long') return value as Binary | Long;
  throw syntaxError(`argument ${token.text} is not a value a query can compare`, token.at);
}

function describe(token: Token): string {
  return token.type === 'end' ? 'end of input' : `'${token.text}'`;
}

/** Parses one RQL string (a subscription's query) into its tree. Throws RqlError, never anything else. */
export function parseQuery(text: string, options: ParseOptions = {}): ParsedQuery {
  const maxLength = options.maxLength ?? DEFAULT_MAX_QUERY_LENGTH;
  if (text.length > maxLength) throw new RqlError(RqlErrorCode.Syntax, `Invalid query: the query is longer than ${maxLength} characters`, maxLength);
  return new Parser(tokenize(text), options, options.maxDepth ?? DEFAULT_MAX_QUERY_DEPTH).parse();
}
