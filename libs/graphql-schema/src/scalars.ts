/**
 * The BSON scalars of the generated schema. Outgoing values are BSON values from the store; incoming
 * literals and variables become the BSON values the collection schema names (an ObjectId string becomes
 * an ObjectId), so a translated filter compares like with like.
 */
import { Decimal128, Long, ObjectId, Timestamp } from 'bson';
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql/index.js';

function literalString(node: ValueNode, scalar: string): string {
  if (node.kind === Kind.STRING || node.kind === Kind.INT || node.kind === Kind.FLOAT) return node.value;
  throw new GraphQLError(`${scalar} cannot represent a non-string value`, { nodes: node });
}

function toObjectId(value: unknown): ObjectId {
  if (value instanceof ObjectId) return value;
  if (typeof value === 'string' && /^[0-9a-fA-F]{24}$/.test(value)) return new ObjectId(value);
  throw new GraphQLError(`ObjectId cannot represent value: ${JSON.stringify(value)}`);
}

export const ObjectIdScalar = new GraphQLScalarType({
  name: 'ObjectId',
  serialize(value) {
    if (value instanceof ObjectId) return value.toHexString();
    if (typeof value === 'string') return value;
    throw new GraphQLError(`ObjectId cannot represent value: ${String(value)}`);
  },
  parseValue: toObjectId,
  parseLiteral: (node) => toObjectId(literalString(node, 'ObjectId')),
});

function toDate(value: unknown): Date {
  const date = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) throw new GraphQLError(`DateTime cannot represent value: ${JSON.stringify(value)}`);
  return date;
}

export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  serialize(value) {
    if (value instanceof Timestamp) return new Date(value.high * 1000).toISOString();
    return toDate(value).toISOString();
  },
  parseValue: toDate,
  parseLiteral: (node) => toDate(literalString(node, 'DateTime')),
});

function toLong(value: unknown): Long {
  if (Long.isLong(value)) return value;
  if (typeof value === 'number' && Number.isInteger(value)) return Long.fromNumber(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Long.fromString(value);
  throw new GraphQLError(`Long cannot represent value: ${JSON.stringify(value)}`);
}

export const LongScalar = new GraphQLScalarType({
  name: 'Long',
  serialize(value) {
    const long = typeof value === 'object' && value !== null && 'valueOf' in value && !Long.isLong(value) ? toLong((value as { valueOf(): unknown }).valueOf()) : toLong(value);
    // A Long inside the double range travels as a JSON number; beyond it as a string, so no digit is lost.
    const safe = long.lessThanOrEqual(Long.fromNumber(Number.MAX_SAFE_INTEGER)) && long.greaterThanOrEqual(Long.fromNumber(Number.MIN_SAFE_INTEGER));
    return safe ? long.toNumber() : long.toString();
  },
  parseValue: toLong,
  parseLiteral: (node) => toLong(literalString(node, 'Long')),
});

function toDecimal(value: unknown): Decimal128 {
  if (value instanceof Decimal128) return value;
  if ((typeof value === 'string' && value.trim() !== '') || typeof value === 'number') {
    try {
      return Decimal128.fromString(String(value));
    } catch {
      // fall through to the error below
    }
  }
  throw new GraphQLError(`Decimal cannot represent value: ${JSON.stringify(value)}`);
}

export const DecimalScalar = new GraphQLScalarType({
  name: 'Decimal',
  serialize: (value) => (value instanceof Decimal128 ? value.toString() : toDecimal(value).toString()),
  parseValue: toDecimal,
  parseLiteral: (node) => toDecimal(literalString(node, 'Decimal')),
});
