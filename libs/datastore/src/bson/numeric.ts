/**
 * MongoDB's numeric types in computation, over stored values (see values.ts): the BSON type a computed
 * number takes and the exact arithmetic behind it. An int with an int gives an int, or a long when the
 * result leaves int32's range; a long gives a long, or a double when it leaves int64's; a double gives a
 * double; a decimal wins over all. Longs are computed as bigints and decimals as scaled bigints, so a long
 * beyond 2^53 or a decimal 0.1 + 0.2 comes out as MongoDB's does; a decimal's square root, exponential,
 * logarithms and powers are decimal-math.ts's.
 *
 * Pure functions over evaluated arguments: the aggregation operators that call them are in
 * engine/typed-expressions.ts. No mingo and no I/O here.
 */
import { Decimal128, Long } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import {
  type DecimalResult,
  decimalAcos,
  decimalAcosh,
  decimalAsin,
  decimalAsinh,
  decimalAtan,
  decimalAtan2,
  decimalAtanh,
  decimalCos,
  decimalCosh,
  decimalDegreesToRadians,
  decimalExp,
  decimalLog,
  decimalPower,
  decimalRadiansToDegrees,
  decimalSin,
  decimalSinh,
  decimalSqrt,
  decimalTan,
  decimalTanh,
  digitCount,
  pow10,
} from './decimal-math';
import { isInt32Number, storedDouble, typeName } from './values';

export type NumericKind = 'int' | 'long' | 'double' | 'decimal';

const RANK: Readonly<Record<NumericKind, number>> = { int: 0, long: 1, double: 2, decimal: 3 };

/** The BSON numeric type of a stored value, or undefined for a value that is not a number. */
export function numericKind(value: unknown): NumericKind | undefined {
  if (typeof value === 'number') return isInt32Number(value) ? 'int' : 'double';
  if (typeof value === 'bigint') return 'long';
  if (value === null || typeof value !== 'object') return undefined;
  switch ((value as { _bsontype?: unknown })._bsontype) {
    case 'Long':
      return 'long';
    case 'Double':
      return 'double';
    case 'Int32':
      return 'int';
    case 'Decimal128':
      return 'decimal';
    default:
      return undefined;
  }
}

export function widerKind(a: NumericKind, b: NumericKind): NumericKind {
  return RANK[a] >= RANK[b] ? a : b;
}

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function fitsLong(n: bigint): boolean {
  return n >= INT64_MIN && n <= INT64_MAX;
}

/** The exact integer an int or a long holds. */
function integerOf(value: unknown): bigint {
  if (typeof value === 'number') return BigInt(value);
  if (typeof value === 'bigint') return value;
  const { low, high, value: n } = value as { low?: number; high?: number; value?: number };
  if (typeof n === 'number') return BigInt(n); // Int32
  // A Long of any bson copy, from its two 32-bit halves (bson's toBigInt goes through a string).
  return BigInt.asIntN(64, (BigInt(high ?? 0) << 32n) | BigInt((low ?? 0) >>> 0));
}

/** An int's or a long's value as a JS number when that is exact, else undefined (a long beyond 2^53). */
function safeIntegerOf(value: unknown, kind: NumericKind): number | undefined {
  if (kind === 'int') return typeof value === 'number' ? value : (value as { value: number }).value;
  const n = doubleOf(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A stored number as a JS number (a long beyond 2^53 to the nearest double). */
export function doubleOf(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  const tag = (value as { _bsontype?: unknown })._bsontype;
  if (tag === 'Long') return Number(integerOf(value));
  if (tag === 'Decimal128') return Number.parseFloat(String(value));
  return (value as { value: number }).value;
}

/** An integral result of int operands: an int when it fits, else a long, else a double. */
export function intResult(n: number | bigint): unknown {
  if (typeof n === 'number') return isInt32Number(n) || n === 0 ? n + 0 : Long.fromNumber(n);
  if (n >= INT32_MIN && n <= INT32_MAX) return Number(n);
  return longResult(n);
}

/** An integral result with a long operand: a long, else (beyond int64) a double. */
export function longResult(n: number | bigint): unknown {
  if (typeof n === 'number') return Long.fromNumber(n);
  return fitsLong(n) ? Long.fromBigInt(n) : storedDouble(Number(n));
}

/** `n` (a safe integer or a bigint) as an integral result of operands of `kind`. */
function integralResult(kind: NumericKind, n: number | bigint): unknown {
  return kind === 'int' ? intResult(n) : longResult(n);
}

// ---- decimals ----

/** A finite decimal: (-1)^neg × coeff × 10^exp, or a special value. */
interface Dec {
  neg: boolean;
  coeff: bigint;
  exp: number;
  special?: 'NaN' | 'Infinity';
}

const DEC_DIGITS = 34;

const DEC_NAN: Dec = { neg: false, coeff: 0n, exp: 0, special: 'NaN' };

function parseDecimal(text: string): Dec | undefined {
  if (/^[+-]?nan$/i.test(text)) return DEC_NAN;
  const inf = /^([+-])?inf(?:inity)?$/i.exec(text);
  if (inf) return { neg: inf[1] === '-', coeff: 0n, exp: 0, special: 'Infinity' };
  const m = /^([+-])?(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? m[4] ?? '';
  return { neg: m[1] === '-', coeff: BigInt(`${m[2] ?? ''}${fraction}` || '0'), exp: Number(m[5] ?? 0) - fraction.length };
}

/** The exact value of a finite double as a decimal rounded to 34 digits (what MongoDB rounds doubles by). */
function exactDecimal(x: number): Dec {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? DEC_NAN : { neg: x < 0, coeff: 0n, exp: 0, special: 'Infinity' };
  const neg = x < 0 || Object.is(x, -0);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  if (exponent >= 0) return roundDigits(neg, mantissa << BigInt(exponent), 0);
  // m / 2^k = m × 5^k / 10^k
  return roundDigits(neg, mantissa * 5n ** BigInt(-exponent), exponent);
}

/** A stored number as a decimal: ints and longs exactly, a double to 15 digits (as MongoDB converts one). */
function decimalOf(value: unknown, kind: NumericKind): Dec {
  switch (kind) {
    case 'int':
    case 'long': {
      const n = integerOf(value);
      return { neg: n < 0n, coeff: n < 0n ? -n : n, exp: 0 };
    }
    case 'double': {
      const x = doubleOf(value);
      if (!Number.isFinite(x)) return exactDecimal(x);
      const dec = parseDecimal(x.toPrecision(15)) ?? DEC_NAN;
      return Object.is(x, -0) ? { ...dec, neg: true } : dec;
    }
    case 'decimal':
      return parseDecimal(String(value)) ?? DEC_NAN;
  }
}

/** `coeff × 10^exp` rounded half to even to 34 digits; `sticky` says digits below `coeff` were not zero. */
function roundDigits(neg: boolean, coeff: bigint, exp: number, sticky = false): Dec {
  const digits = digitCount(coeff);
  if (digits <= DEC_DIGITS) return { neg, coeff, exp };
  const drop = digits - DEC_DIGITS;
  const divisor = pow10(drop);
  let kept = coeff / divisor;
  const rest = coeff % divisor;
  const half = divisor / 2n;
  if (rest > half || (rest === half && (sticky || kept % 2n === 1n))) kept += 1n;
  if (digitCount(kept) > DEC_DIGITS) return { neg, coeff: kept / 10n, exp: exp + drop + 1 };
  return { neg, coeff: kept, exp: exp + drop };
}

/** Decimal128's least exponent: a value with digits below 10^-6176 is rounded to that place (a subnormal, or zero). */
const DEC_EXP_MIN = -6176;

function toDecimal128(dec: Dec): Decimal128 {
  if (dec.special === 'NaN') return Decimal128.fromString('NaN');
  if (dec.special === 'Infinity') return Decimal128.fromString(dec.neg ? '-Infinity' : 'Infinity');
  // Rounded here: bson's own rounding of those is wrong (it makes 5E-6177 into 5E-6176).
  const tiny = dec.exp < DEC_EXP_MIN;
  const { neg, coeff, exp } = tiny && digitCount(dec.coeff) + dec.exp < DEC_EXP_MIN - 1 ? { neg: dec.neg, coeff: 0n, exp: DEC_EXP_MIN } : tiny ? decQuantize(dec, DEC_EXP_MIN, 'halfEven') : dec;
  try {
    return Decimal128.fromStringWithRounding(`${neg ? '-' : ''}${coeff}E${exp}`);
  } catch {
    // Beyond decimal128's exponent range: an overflow is an infinity.
    return Decimal128.fromString(coeff !== 0n ? (neg ? '-Infinity' : 'Infinity') : neg ? '-0' : '0');
  }
}

function decimalToNumber(dec: Dec): number {
  if (dec.special === 'NaN') return Number.NaN;
  if (dec.special === 'Infinity') return dec.neg ? -Infinity : Infinity;
  const n = Number.parseFloat(`${dec.coeff}e${dec.exp}`);
  return dec.neg ? -n : n;
}

/** A decimal operation with a special operand, done in doubles (the specials mean the same there). */
function specialDecimal(a: Dec, b: Dec, op: (x: number, y: number) => number): Dec | undefined {
  if (!a.special && !b.special) return undefined;
  return exactDecimal(op(decimalToNumber(a), decimalToNumber(b)));
}

function signed(dec: Dec): bigint {
  return dec.neg ? -dec.coeff : dec.coeff;
}

function fromSigned(n: bigint, exp: number, negativeZero: boolean): Dec {
  return roundDigits(n < 0n || (n === 0n && negativeZero), n < 0n ? -n : n, exp);
}

function decAdd(a: Dec, b: Dec): Dec {
  const special = specialDecimal(a, b, (x, y) => x + y);
  if (special) return special;
  const exp = Math.min(a.exp, b.exp);
  const sum = signed(a) * pow10(a.exp - exp) + signed(b) * pow10(b.exp - exp);
  return fromSigned(sum, exp, a.neg && b.neg);
}

function decNegate(a: Dec): Dec {
  return a.special === 'NaN' ? a : { ...a, neg: !a.neg };
}

function decMultiply(a: Dec, b: Dec): Dec {
  const special = specialDecimal(a, b, (x, y) => x * y);
  if (special) return special;
  return roundDigits(a.neg !== b.neg, a.coeff * b.coeff, a.exp + b.exp);
}

function decDivide(a: Dec, b: Dec): Dec {
  const special = specialDecimal(a, b, (x, y) => x / y);
  if (special) return special;
  const neg = a.neg !== b.neg;
  const ideal = a.exp - b.exp;
  if (a.coeff === 0n) return { neg, coeff: 0n, exp: ideal };
  // Enough digits for 34 significant ones and a rounding digit, then the exact quotient at its ideal exponent.
  const scale = Math.max(0, DEC_DIGITS + 1 + digitCount(b.coeff) - digitCount(a.coeff));
  const numerator = a.coeff * pow10(scale);
  let quotient = numerator / b.coeff;
  const remainder = numerator % b.coeff;
  let exp = ideal - scale;
  if (remainder === 0n) {
    while (exp < ideal && quotient % 10n === 0n && quotient !== 0n) {
      quotient /= 10n;
      exp++;
    }
    return roundDigits(neg, quotient, exp);
  }
  return roundDigits(neg, quotient, exp, true);
}

/** The remainder of a truncating division, with the dividend's sign. */
function decMod(a: Dec, b: Dec): Dec {
  const special = specialDecimal(a, b, (x, y) => x % y);
  if (special) return special;
  const exp = Math.min(a.exp, b.exp);
  const x = a.coeff * pow10(a.exp - exp);
  const y = b.coeff * pow10(b.exp - exp);
  return roundDigits(a.neg, x % y, exp);
}

type Rounding = 'halfEven' | 'down' | 'floor' | 'ceiling';

/** `a` rounded to the exponent `exp` (a quantum of 10^exp). */
function decQuantize(a: Dec, exp: number, mode: Rounding): Dec {
  if (a.special || a.exp >= exp) return a;
  const divisor = pow10(exp - a.exp);
  let kept = a.coeff / divisor;
  const rest = a.coeff % divisor;
  if (rest !== 0n) {
    const half = divisor / 2n;
    if (mode === 'halfEven' && (rest > half || (rest === half && kept % 2n === 1n))) kept += 1n;
    else if ((mode === 'floor' && a.neg) || (mode === 'ceiling' && !a.neg)) kept += 1n;
  }
  return { neg: a.neg, coeff: kept, exp };
}

function decIsZero(a: Dec): boolean {
  return !a.special && a.coeff === 0n;
}

/** The integer part of a finite decimal (truncated), or undefined for NaN and infinities. */
function decTruncated(a: Dec): bigint | undefined {
  if (a.special) return undefined;
  const magnitude = a.exp >= 0 ? a.coeff * pow10(a.exp) : a.coeff / pow10(-a.exp);
  return a.neg ? -magnitude : magnitude;
}

// ---- errors ----

function typeMismatch(code: number, message: string): never {
  throw new DatastoreError('TypeMismatch', message, { code });
}

function badValue(code: number, message: string): never {
  throw new DatastoreError('BadValue', message, { code });
}

function isNullish(value: unknown): boolean {
  return value === null || value === undefined;
}

/** MongoDB's name of a value's type in messages. */
function nameOf(value: unknown): string {
  if (value === undefined) return 'missing';
  if (typeof value === 'boolean') return 'bool';
  if (value instanceof Date) return 'date';
  return typeName(value);
}

// ---- sums ----

/**
 * A running total of numbers with MongoDB's result type ($add, $sum, $avg): the integral operands summed
 * exactly, the doubles with compensation (MongoDB sums them in double-double), the decimals exactly.
 */
export class NumericTotal {
  kind: NumericKind = 'int';
  count = 0;
  private integral: number | bigint = 0;
  private doubles = 0;
  private compensation = 0;
  private decimals: Dec | undefined;

  /** Adds a stored number of the kind given. */
  add(value: unknown, kind: NumericKind): void {
    this.count++;
    if (RANK[kind] > RANK[this.kind]) this.kind = kind;
    switch (kind) {
      case 'int':
      case 'long': {
        const n: number | undefined = typeof this.integral === 'number' ? safeIntegerOf(value, kind) : undefined;
        if (n !== undefined) {
          const sum = (this.integral as number) + n;
          if (Number.isSafeInteger(sum)) {
            this.integral = sum;
            return;
          }
        }
        this.integral = BigInt(this.integral) + integerOf(value);
        return;
      }
      case 'double': {
        // Neumaier's compensated summation.
        const x = doubleOf(value);
        const sum = this.doubles + x;
        if (Number.isFinite(sum)) this.compensation += Math.abs(this.doubles) >= Math.abs(x) ? this.doubles - sum + x : x - sum + this.doubles;
        this.doubles = sum;
        return;
      }
      case 'decimal': {
        const dec = decimalOf(value, 'decimal');
        this.decimals = this.decimals ? decAdd(this.decimals, dec) : dec;
        return;
      }
    }
  }

  /** Adds any stored value: true when it was a number. */
  addValue(value: unknown): boolean {
    const kind = numericKind(value);
    if (kind === undefined) return false;
    this.add(value, kind);
    return true;
  }

  private doubleTotal(): number {
    const doubles = this.doubles + this.compensation;
    if (typeof this.integral === 'number' || !Number.isFinite(doubles)) return Number(this.integral) + doubles;
    const whole = Math.trunc(doubles);
    return Number(this.integral + BigInt(whole)) + (doubles - whole);
  }

  private decimalTotal(): Dec {
    let total = this.decimals ?? { neg: false, coeff: 0n, exp: 0 };
    if (this.integral !== 0) total = decAdd(total, decimalOf(this.integral, 'long'));
    if (this.doubles !== 0 || this.compensation !== 0) total = decAdd(total, decimalOf(this.doubles + this.compensation, 'double'));
    return total;
  }

  /** The sum as MongoDB's $sum gives it (an int 0 for no numbers). */
  sum(): unknown {
    switch (this.kind) {
      case 'int':
      case 'long':
        return integralResult(this.kind, this.integral);
      case 'double':
        return storedDouble(this.doubleTotal());
      case 'decimal':
        return toDecimal128(this.decimalTotal());
    }
  }

  /** The mean as MongoDB's $avg gives it: a double (a decimal with a decimal operand), null for no numbers. */
  average(): unknown {
    if (this.count === 0) return null;
    if (this.kind === 'decimal') return toDecimal128(decDivide(this.decimalTotal(), { neg: false, coeff: BigInt(this.count), exp: 0 }));
    return storedDouble(this.doubleTotal() / this.count);
  }
}

// ---- arithmetic expressions ----

function numericOperand(value: unknown, op: string, code: number): NumericKind {
  const kind = numericKind(value);
  if (kind === undefined) typeMismatch(code, `${op} only supports numeric types, not ${nameOf(value)}`);
  return kind;
}

/**
 * The sum or product of plain JS numbers (most operands) computed directly, or undefined when an operand is
 * not a JS number or an integral result leaves the exact range of doubles.
 */
function plainResult(values: readonly unknown[], op: 'add' | 'multiply'): unknown {
  let result = op === 'add' ? 0 : 1;
  let integral = true;
  for (const v of values) {
    if (typeof v !== 'number') return undefined;
    result = op === 'add' ? result + v : result * v;
    if (integral && !isInt32Number(v)) integral = false;
  }
  if (!integral) return storedDouble(result);
  return Number.isSafeInteger(result) ? intResult(result) : undefined;
}

/** $add: numbers, and at most one date (the sum is then a date). Null when an operand is null or missing. */
export function add(values: readonly unknown[]): unknown {
  const plain = plainResult(values, 'add');
  if (plain !== undefined) return plain;
  const total = new NumericTotal();
  let date: Date | undefined;
  for (const v of values) {
    if (isNullish(v)) return null;
    if (v instanceof Date) {
      if (date) typeMismatch(16612, 'only one date allowed in an $add expression');
      date = v;
      continue;
    }
    const kind = numericKind(v);
    if (kind === undefined) typeMismatch(16554, `$add only supports numeric or date types, not ${nameOf(v)}`);
    total.add(v, kind);
  }
  if (!date) return total.sum();
  return new Date(date.getTime() + Math.round(doubleOf(total.sum())));
}

/**
 * $multiply: the product of numbers in the widest operand type. As in MongoDB, an integral product that
 * leaves int64's range makes the result a double, whatever follows.
 */
export function multiply(values: readonly unknown[]): unknown {
  const plain = plainResult(values, 'multiply');
  if (plain !== undefined) return plain;
  let kind: NumericKind = 'int';
  let exact: number | bigint | undefined = 1;
  let product = 1;
  let dec: Dec | undefined;
  for (const v of values) {
    if (isNullish(v)) return null;
    const k = numericOperand(v, '$multiply', 16555);
    if (k === 'decimal' && !dec) dec = exact === undefined || kind === 'double' ? decimalOf(product, 'double') : decimalOf(exact, 'long');
    kind = widerKind(kind, k);
    if (dec) {
      dec = decMultiply(dec, decimalOf(v, k));
      continue;
    }
    product *= doubleOf(v);
    if (exact === undefined) continue;
    if (k === 'double') {
      exact = undefined;
      continue;
    }
    const n: number | undefined = typeof exact === 'number' ? safeIntegerOf(v, k) : undefined;
    const step: number | undefined = n === undefined ? undefined : (exact as number) * n;
    if (step !== undefined && Number.isSafeInteger(step)) {
      exact = step;
      continue;
    }
    exact = BigInt(exact) * integerOf(v);
    if (!fitsLong(exact)) {
      exact = undefined;
      kind = 'double';
    }
  }
  if (dec) return toDecimal128(dec);
  if (kind === 'double' || exact === undefined) return storedDouble(product);
  return integralResult(kind, exact);
}

/** $subtract: numbers, a date less a number (a date) or less a date (a long of milliseconds). */
export function subtract(a: unknown, b: unknown): unknown {
  if (isNullish(a) || isNullish(b)) return null;
  if (a instanceof Date) {
    if (b instanceof Date) return Long.fromNumber(a.getTime() - b.getTime());
    if (numericKind(b) !== undefined) return new Date(a.getTime() - Math.round(doubleOf(b)));
  }
  const ka = numericKind(a);
  const kb = numericKind(b);
  if (ka === undefined || kb === undefined) typeMismatch(16556, `can't $subtract ${nameOf(b)} from ${nameOf(a)}`);
  const kind = widerKind(ka, kb);
  switch (kind) {
    case 'decimal':
      return toDecimal128(decAdd(decimalOf(a, ka), decNegate(decimalOf(b, kb))));
    case 'double':
      return storedDouble(doubleOf(a) - doubleOf(b));
    case 'int':
    case 'long': {
      const x = safeIntegerOf(a, ka);
      const y = safeIntegerOf(b, kb);
      if (x !== undefined && y !== undefined && Number.isSafeInteger(x - y)) return integralResult(kind, x - y);
      return integralResult(kind, integerOf(a) - integerOf(b));
    }
  }
}

function isZero(value: unknown, kind: NumericKind): boolean {
  return kind === 'decimal' ? decIsZero(decimalOf(value, kind)) : doubleOf(value) === 0;
}

/** $divide: a double, or a decimal when either operand is one. */
export function divide(a: unknown, b: unknown): unknown {
  if (isNullish(a) || isNullish(b)) return null;
  const ka = numericKind(a);
  const kb = numericKind(b);
  if (ka === undefined || kb === undefined) typeMismatch(16609, `$divide only supports numeric types, not ${nameOf(a)} and ${nameOf(b)}`);
  if (isZero(b, kb)) badValue(16608, "can't $divide by zero");
  if (ka === 'decimal' || kb === 'decimal') return toDecimal128(decDivide(decimalOf(a, ka), decimalOf(b, kb)));
  return storedDouble(doubleOf(a) / doubleOf(b));
}

/** $mod: the remainder in the wider operand type, with the dividend's sign. */
export function mod(a: unknown, b: unknown): unknown {
  if (isNullish(a) || isNullish(b)) return null;
  const ka = numericKind(a);
  const kb = numericKind(b);
  if (ka === undefined || kb === undefined) typeMismatch(16611, `$mod only supports numeric types, not ${nameOf(a)} and ${nameOf(b)}`);
  if (isZero(b, kb)) badValue(16610, "can't $mod by zero");
  const kind = widerKind(ka, kb);
  switch (kind) {
    case 'decimal':
      return toDecimal128(decMod(decimalOf(a, ka), decimalOf(b, kb)));
    case 'double':
      return storedDouble(doubleOf(a) % doubleOf(b));
    case 'int':
    case 'long':
      return integralResult(kind, integerOf(a) % integerOf(b));
  }
}

/** $abs, keeping the type (the int -2^31 becomes a long; the long -2^63 has no absolute value). */
export function abs(value: unknown): unknown {
  if (isNullish(value)) return null;
  const kind = numericOperand(value, '$abs', 28765);
  switch (kind) {
    case 'int':
      return intResult(Math.abs(value as number));
    case 'long': {
      const n = integerOf(value);
      if (n === INT64_MIN) badValue(28680, "can't take $abs of long long min");
      return Long.fromBigInt(n < 0n ? -n : n);
    }
    case 'double':
      return storedDouble(Math.abs(doubleOf(value)));
    case 'decimal': {
      const dec = decimalOf(value, kind);
      return toDecimal128(dec.special === 'NaN' ? dec : { ...dec, neg: false });
    }
  }
}

/** $ceil and $floor: an int or a long is already integral; a double stays a double, a decimal a decimal. */
export function ceilOrFloor(value: unknown, op: '$ceil' | '$floor'): unknown {
  if (isNullish(value)) return null;
  const kind = numericOperand(value, op, 28765);
  switch (kind) {
    case 'int':
    case 'long':
      return value;
    case 'double':
      return storedDouble(op === '$ceil' ? Math.ceil(doubleOf(value)) : Math.floor(doubleOf(value)));
    case 'decimal':
      return toDecimal128(decQuantize(decimalOf(value, kind), 0, op === '$ceil' ? 'ceiling' : 'floor'));
  }
}

/**
 * $round (half to even) and $trunc (toward zero) to `place` decimal places (negative: to tens, hundreds...),
 * keeping the type. A double is rounded by its exact value to 34 digits, as MongoDB does.
 */
export function roundTo(value: unknown, place: unknown, op: '$round' | '$trunc'): unknown {
  if (isNullish(value) || isNullish(place)) return null;
  const kind = numericOperand(value, op, 51081);
  const placeKind = numericKind(place);
  const digits = placeKind === undefined ? Number.NaN : doubleOf(place);
  if (!Number.isInteger(digits) || digits < -20 || digits > 100) badValue(51083, `${op} requires "place" argument to be an integer between -20 and 100, but got ${String(place)}`);
  const mode: Rounding = op === '$round' ? 'halfEven' : 'down';
  switch (kind) {
    case 'int':
    case 'long': {
      if (digits >= 0) return value;
      const n = integerOf(value);
      const rounded = decQuantize({ neg: n < 0n, coeff: n < 0n ? -n : n, exp: 0 }, -digits, mode);
      return integralResult(kind, signed(rounded) * pow10(rounded.exp));
    }
    case 'double': {
      const x = doubleOf(value);
      if (!Number.isFinite(x)) return value;
      const rounded = decimalToNumber(decQuantize(exactDecimal(x), -digits, mode));
      return storedDouble(rounded === 0 && (x < 0 || Object.is(x, -0)) ? -0 : rounded);
    }
    case 'decimal':
      return toDecimal128(decQuantize(decimalOf(value, kind), -digits, mode));
  }
}

/**
 * A number's value as a double for a domain check: a decimal too small for a double keeps its sign (1E-400
 * is positive, not zero).
 */
function checkedDouble(value: unknown, kind: NumericKind): number {
  const x = doubleOf(value);
  if (kind !== 'decimal' || x !== 0) return x;
  const dec = decimalOf(value, kind);
  if (dec.special || dec.coeff === 0n) return x;
  return dec.neg ? -Number.MIN_VALUE : Number.MIN_VALUE;
}

/** A result of decimal-math.ts rounded to 34 digits. */
function rounded(result: DecimalResult): Dec {
  const { neg, coeff, exp } = result.value;
  return roundDigits(neg, coeff, exp, result.inexact);
}

const DEC_ONE: Dec = { neg: false, coeff: 1n, exp: 0 };

function decIsOne(a: Dec): boolean {
  return !a.special && !a.neg && a.coeff !== 0n && decIsZero(decAdd(a, decNegate(DEC_ONE)));
}

function decIsIntegral(a: Dec): boolean {
  return a.exp >= 0 || a.coeff % pow10(-a.exp) === 0n;
}

/** $pow with a decimal operand (the other one converted as MongoDB converts it): computed in decimal. */
function decimalPow(base: Dec, exponent: Dec): Decimal128 {
  const special = specialDecimal(base, exponent, (x, y) => x ** y);
  if (special) return toDecimal128(special);
  if (base.coeff === 0n) return toDecimal128(exactDecimal(decimalToNumber(base) ** decimalToNumber(exponent)));
  if (base.neg && !decIsIntegral(exponent)) return toDecimal128(DEC_NAN);
  const result = decimalPower(base, exponent);
  if (result.reciprocal) return toDecimal128(decDivide(DEC_ONE, result.value));
  return toDecimal128(rounded(result));
}

/** $pow: an int or a long when an integral power fits one (as MongoDB computes it), else a double or a decimal. */
export function pow(base: unknown, exponent: unknown): unknown {
  if (isNullish(base) || isNullish(exponent)) return null;
  const kb = numericKind(base);
  if (kb === undefined) typeMismatch(28762, `$pow's base must be numeric, not ${nameOf(base)}`);
  const ke = numericKind(exponent);
  if (ke === undefined) typeMismatch(28763, `$pow's exponent must be numeric, not ${nameOf(exponent)}`);
  const x = checkedDouble(base, kb);
  const y = doubleOf(exponent);
  if (x === 0 && y < 0) badValue(28764, '$pow cannot take a base of 0 and a negative exponent');
  if (kb === 'decimal' || ke === 'decimal') return decimalPow(decimalOf(base, kb), decimalOf(exponent, ke));
  if (kb === 'double' || ke === 'double') return storedDouble(x ** y);
  const kind = widerKind(kb, ke);
  const b = integerOf(base);
  const e = integerOf(exponent);
  if (b === 0n) return integralResult(kind, e === 0n ? 1n : 0n);
  if (b === 1n) return integralResult(kind, 1n);
  if (b === -1n) return integralResult(kind, e % 2n === 0n ? 1n : -1n);
  if (e > 63n || e < 0n) return storedDouble(x ** y);
  const result = b ** e;
  return fitsLong(result) ? integralResult(kind, result) : storedDouble(x ** y);
}

const DEC_TEN: Dec = { neg: false, coeff: 10n, exp: 0 };

/** The math functions computed in decimal for a decimal operand (decimal-math.ts). */
const DECIMAL_FUNCTIONS: Readonly<Record<string, (a: Dec) => DecimalResult>> = {
  $sqrt: decimalSqrt,
  $exp: decimalExp,
  $ln: (a) => decimalLog(a),
  $log10: (a) => decimalLog(a, DEC_TEN),
  $sin: decimalSin,
  $cos: decimalCos,
  $tan: decimalTan,
  $asin: decimalAsin,
  $acos: decimalAcos,
  $atan: decimalAtan,
  $sinh: decimalSinh,
  $cosh: decimalCosh,
  $tanh: decimalTanh,
  $asinh: decimalAsinh,
  $acosh: decimalAcosh,
  $atanh: decimalAtanh,
  $degreesToRadians: decimalDegreesToRadians,
  $radiansToDegrees: decimalRadiansToDegrees,
};

/**
 * A math function of one number with a double result ($sqrt, $exp, $ln, $log10, the trigonometric and
 * hyperbolic ones, the angle conversions): a decimal operand gives a decimal, computed in decimal to 34
 * digits (decimal-math.ts); a NaN or infinite one in doubles, where the specials mean the same. `check`
 * refuses an operand out of the function's domain.
 */
export function realFunction(value: unknown, op: string, fn: (x: number) => number, check?: (x: number) => void): unknown {
  if (isNullish(value)) return null;
  const kind = numericOperand(value, op, 28765);
  check?.(checkedDouble(value, kind));
  if (kind !== 'decimal') return storedDouble(fn(doubleOf(value)));
  const dec = decimalOf(value, kind);
  const decimal = DECIMAL_FUNCTIONS[op] as ((a: Dec) => DecimalResult) | undefined;
  if (decimal && !dec.special) return toDecimal128(rounded(decimal(dec)));
  return toDecimal128(exactDecimal(fn(decimalToNumber(dec))));
}

/** $atan2: the angle of the point (x, y); in decimal when either is a decimal. */
export function atan2(y: unknown, x: unknown): unknown {
  if (isNullish(y) || isNullish(x)) return null;
  const ky = numericOperand(y, '$atan2', 28765);
  const kx = numericOperand(x, '$atan2', 28765);
  if (ky !== 'decimal' && kx !== 'decimal') return storedDouble(Math.atan2(doubleOf(y), doubleOf(x)));
  const dy = decimalOf(y, ky);
  const dx = decimalOf(x, kx);
  if (dy.special || dx.special || (dy.coeff === 0n && dx.coeff === 0n)) return toDecimal128(exactDecimal(Math.atan2(decimalToNumber(dy), decimalToNumber(dx))));
  return toDecimal128(rounded(decimalAtan2(dy, dx)));
}

/** $log: the logarithm of a number in a base; in decimal when either is a decimal. */
export function log(value: unknown, base: unknown): unknown {
  if (isNullish(value) || isNullish(base)) return null;
  const kv = numericKind(value);
  if (kv === undefined) typeMismatch(28756, `$log's argument must be numeric, not ${nameOf(value)}`);
  const kb = numericKind(base);
  if (kb === undefined) typeMismatch(28757, `$log's base must be numeric, not ${nameOf(base)}`);
  const x = checkedDouble(value, kv);
  const b = checkedDouble(base, kb);
  const decimal = kv === 'decimal' || kb === 'decimal';
  const baseIsOne = decimal ? decIsOne(decimalOf(base, kb)) : b === 1;
  if (!(x > 0) && !Number.isNaN(x)) badValue(28758, `$log's argument must be a positive number, but is ${x}`);
  if ((!(b > 0) || baseIsOne) && !Number.isNaN(b)) badValue(28759, `$log's base must be a positive number not equal to 1, but is ${b}`);
  if (!decimal) return storedDouble(Math.log(x) / Math.log(b));
  const dx = decimalOf(value, kv);
  const db = decimalOf(base, kb);
  if (dx.special || db.special) return toDecimal128(exactDecimal(Math.log(x) / Math.log(b)));
  return toDecimal128(rounded(decimalLog(dx, db)));
}

// ---- conversions ----

export type NumericTarget = NumericKind;

function conversionFailure(message: string): never {
  throw new DatastoreError('ConversionFailure', `${message} in $convert with no onError value`);
}

function integralTarget(n: bigint, target: 'int' | 'long', shown: string): unknown {
  if (target === 'int') {
    if (n < INT32_MIN || n > INT32_MAX) conversionFailure(`Conversion would overflow target type: ${shown}`);
    return Number(n);
  }
  if (!fitsLong(n)) conversionFailure(`Conversion would overflow target type: ${shown}`);
  return Long.fromBigInt(n);
}

function parseFailure(text: string, target: NumericTarget): never {
  conversionFailure(`Failed to parse number '${text}' as ${target}`);
}

/** A double as an int or a long, truncated toward zero: NaN, infinities and values out of range fail. */
function truncatedDouble(x: number, target: 'int' | 'long'): unknown {
  if (Number.isNaN(x)) conversionFailure('Attempt to convert NaN value to integer type');
  if (!Number.isFinite(x) || Math.abs(x) >= 2 ** 63) conversionFailure(`Conversion would overflow target type: ${x}`);
  return integralTarget(BigInt(Math.trunc(x)), target, String(x));
}

/**
 * `value` converted to a numeric BSON type, as $convert, $toInt, $toLong, $toDouble and $toDecimal do (a
 * null or missing value is the caller's). Fails with MongoDB's ConversionFailure.
 */
export function convertToNumber(value: unknown, target: NumericTarget): unknown {
  if (typeof value === 'boolean') {
    const n = value ? 1 : 0;
    return target === 'int' ? n : target === 'long' ? Long.fromNumber(n) : target === 'double' ? storedDouble(n) : Decimal128.fromString(String(n));
  }
  if (typeof value === 'string') return convertString(value, target);
  if (value instanceof Date) {
    const ms = value.getTime();
    if (target === 'int') conversionFailure('Unsupported conversion from date to int');
    return target === 'long' ? Long.fromNumber(ms) : target === 'double' ? storedDouble(ms) : Decimal128.fromString(String(ms));
  }
  const kind = numericKind(value);
  if (kind === undefined) conversionFailure(`Unsupported conversion from ${nameOf(value)} to ${target}`);
  switch (target) {
    case 'int':
    case 'long':
      if (kind === 'double') return truncatedDouble(doubleOf(value), target);
      if (kind === 'decimal') {
        const dec = decimalOf(value, kind);
        if (dec.special === 'NaN') conversionFailure('Attempt to convert NaN value to integer type');
        const n = decTruncated(dec);
        if (n === undefined) conversionFailure(`Conversion would overflow target type: ${String(value)}`);
        return integralTarget(n, target, String(value));
      }
      return integralTarget(integerOf(value), target, String(integerOf(value)));
    case 'double': {
      if (kind === 'decimal') {
        const dec = decimalOf(value, kind);
        const x = decimalToNumber(dec);
        if (!dec.special && !Number.isFinite(x)) conversionFailure(`Conversion would overflow target type: ${String(value)}`);
        return storedDouble(x);
      }
      return storedDouble(doubleOf(value));
    }
    case 'decimal':
      return kind === 'decimal' ? value : toDecimal128(decimalOf(value, kind));
  }
}

function convertString(text: string, target: NumericTarget): unknown {
  switch (target) {
    case 'int':
    case 'long': {
      if (!/^[+-]?\d+$/.test(text)) parseFailure(text, target);
      return integralTarget(BigInt(text), target, text);
    }
    case 'double': {
      const dec = parseDecimal(text);
      if (!dec) parseFailure(text, target);
      const x = decimalToNumber(dec);
      if (!dec.special && !Number.isFinite(x)) conversionFailure(`Conversion would overflow target type: ${text}`);
      return storedDouble(x);
    }
    case 'decimal': {
      const dec = parseDecimal(text);
      if (!dec) parseFailure(text, target);
      return toDecimal128(roundDigits(dec.neg, dec.coeff, dec.exp));
    }
  }
}
