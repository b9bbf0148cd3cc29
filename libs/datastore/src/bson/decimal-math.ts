/**
 * Square roots, exponentials, logarithms, powers and the trigonometric and hyperbolic functions of decimals,
 * so that a decimal operand of $sqrt, $exp, $ln, $log10, $log, $pow, $sin ... $atanh, $atan2,
 * $degreesToRadians or $radiansToDegrees gets a decimal result to decimal128's 34 digits, as MongoDB's does
 * (it computes them with Intel's decimal library), rather than a double's 15 to 17.
 *
 * Square roots are exact: the integer square root of the coefficient widened to 70 digits, whose remainder
 * says whether the result is inexact, then one rounding (numeric.ts rounds every result to 34 digits, half to
 * even). The exponential and the logarithms are computed over bigints in fixed point with 100 digits after
 * the point and come out correct to 34 digits, except when the true value lies within about 10^-60 (relative)
 * of a rounding boundary, where it may round to the other neighbour. Exact cases are exact: log10 of a power
 * of ten, a logarithm whose base raised to an integer is the number, an integral power, the square root
 * `x^0.5`, `ln(1)`, `exp(0)`.
 *
 * Pure functions over finite decimals; NaN, infinities, zero bases and domain errors are the caller's.
 */

/** A finite decimal: (-1)^neg × coeff × 10^exp. */
export interface FiniteDecimal {
  neg: boolean;
  coeff: bigint;
  exp: number;
}

/** A result to round: `inexact` says the true value has nonzero digits beyond `value`'s (rounding's sticky bit). */
export interface DecimalResult {
  value: FiniteDecimal;
  inexact: boolean;
}

const POW10: bigint[] = [1n];

export function pow10(n: number): bigint {
  while (POW10.length <= n) POW10.push(POW10[POW10.length - 1] * 10n);
  return POW10[n];
}

export function digitCount(n: bigint): number {
  return n === 0n ? 1 : (n < 0n ? -n : n).toString().length;
}

/** Digits after the point of the fixed-point numbers below. */
const PLACES = 100;
const ONE = pow10(PLACES);

/** The largest power of `exp`'s or `pow`'s argument computed: beyond it decimal128 overflows to infinity or underflows to zero. */
const EXP_LIMIT = 15_000n * ONE;
/** Integral powers up to this exponent are computed exactly (the coefficient raised), larger ones through exp and ln. */
const EXACT_POWER_LIMIT = 1024n;

function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  // From above (a power of two beyond the root), Newton's iteration decreases to the floor of the root.
  let x = 1n << BigInt((n.toString(2).length >> 1) + 1);
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

function multiply(a: bigint, b: bigint): bigint {
  return (a * b) / ONE;
}

function divide(a: bigint, b: bigint): bigint {
  return (a * ONE) / b;
}

/** The nearest integer to a / b (b > 0). */
function roundedQuotient(a: bigint, b: bigint): bigint {
  return a >= 0n ? (2n * a + b) / (2n * b) : -((-2n * a + b) / (2n * b));
}

/** 2 × atanh(z) = ln((1 + z) / (1 - z)), for |z| well below 1. */
function lnRatio(z: bigint): bigint {
  const z2 = multiply(z, z);
  let sum = 0n;
  let power = z;
  for (let n = 1n; power !== 0n; n += 2n) {
    sum += power / n;
    power = multiply(power, z2);
  }
  return 2n * sum;
}

const LN2 = lnRatio(ONE / 3n); // 2 = (1 + 1/3) / (1 - 1/3)
const LN10 = 3n * LN2 + lnRatio(ONE / 9n); // 10 = 2^3 × (1 + 1/9) / (1 - 1/9)
const SQRT10 = isqrt(10n * ONE * ONE);
const SQRT2 = isqrt(2n * ONE * ONE);
const HALF_SQRT2 = SQRT2 / 2n;

/** `d` with the trailing zeros of its coefficient taken into its exponent. */
function reduced(d: FiniteDecimal): FiniteDecimal {
  let { coeff, exp } = d;
  if (coeff === 0n) return { neg: d.neg, coeff, exp: 0 };
  while (coeff % 10n === 0n) {
    coeff /= 10n;
    exp++;
  }
  return { neg: d.neg, coeff, exp };
}

function sameValue(a: FiniteDecimal, b: FiniteDecimal): boolean {
  const x = reduced(a);
  const y = reduced(b);
  return x.neg === y.neg && x.coeff === y.coeff && x.exp === y.exp;
}

const DECIMAL_ONE: FiniteDecimal = { neg: false, coeff: 1n, exp: 0 };

function exact(value: FiniteDecimal): DecimalResult {
  return { value, inexact: false };
}

/** A fixed-point number as a decimal with every digit computed, rounded later. */
function fromFixed(fixed: bigint): DecimalResult {
  return { value: { neg: fixed < 0n, coeff: fixed < 0n ? -fixed : fixed, exp: -PLACES }, inexact: true };
}

/** The value of an integral decimal, or undefined when it has a fraction. */
function integralValue(d: FiniteDecimal): bigint | undefined {
  let magnitude: bigint;
  if (d.exp >= 0) {
    // Beyond any exact power computed here: only its size and parity matter, and it is even.
    magnitude = d.exp > 40 ? pow10(40) : d.coeff * pow10(d.exp);
  } else {
    const divisor = pow10(-d.exp);
    if (d.coeff % divisor !== 0n) return undefined;
    magnitude = d.coeff / divisor;
  }
  return d.neg ? -magnitude : magnitude;
}

/** ln(d) in fixed point, for d > 0. */
function lnFixed(d: FiniteDecimal): bigint {
  // d = m × 10^a with m in [√10/10, √10), then m = 2^k × r with r in [√2/2, √2): ln d = a ln 10 + k ln 2 + ln r.
  const digits = digitCount(d.coeff);
  let a = d.exp + digits - 1;
  let m = digits - 1 <= PLACES ? d.coeff * pow10(PLACES - digits + 1) : d.coeff / pow10(digits - 1 - PLACES);
  if (m >= SQRT10) {
    m /= 10n;
    a += 1;
  }
  let k = 0n;
  while (m > SQRT2) {
    m /= 2n;
    k++;
  }
  while (m < HALF_SQRT2) {
    m *= 2n;
    k--;
  }
  return BigInt(a) * LN10 + k * LN2 + lnRatio(divide(m - ONE, m + ONE));
}

/** e^x for x in fixed point (|x| up to EXP_LIMIT), every digit computed. */
function expFixed(x: bigint): DecimalResult {
  // x = k ln 2 + r with |r| <= ln 2 / 2: e^x = 2^k × e^r, e^r by its Taylor series.
  const k = roundedQuotient(x, LN2);
  const r = x - k * LN2;
  let sum = ONE;
  let term = ONE;
  for (let n = 1n; ; n++) {
    term = multiply(term, r) / n;
    if (term === 0n) break;
    sum += term;
  }
  // 2^-k = 5^k / 10^k: the division is exact in decimal.
  if (k >= 0n) return { value: { neg: false, coeff: sum * 2n ** k, exp: -PLACES }, inexact: true };
  return { value: { neg: false, coeff: sum * 5n ** -k, exp: -PLACES + Number(k) }, inexact: true };
}

/** The decimal value of a fixed-point product `fixed × d`, for the argument of exp. */
function scaled(fixed: bigint, d: FiniteDecimal): bigint {
  const product = fixed * d.coeff;
  const signed = d.neg ? -product : product;
  return d.exp >= 0 ? signed * pow10(d.exp) : signed / pow10(-d.exp);
}

/** A result beyond decimal128's range: toDecimal128 makes it an infinity (a huge exponent) or a zero (a tiny one). */
function outOfRange(neg: boolean, overflow: boolean): DecimalResult {
  return { value: { neg, coeff: 1n, exp: overflow ? 100_000 : -100_000 }, inexact: true };
}

/** √d, for d >= 0: exact when it is, at the ideal exponent (half the operand's, rounded down). */
export function decimalSqrt(d: FiniteDecimal): DecimalResult {
  if (d.coeff === 0n) return exact({ neg: d.neg, coeff: 0n, exp: Math.floor(d.exp / 2) });
  let widen = Math.max(0, 72 - digitCount(d.coeff));
  if ((d.exp - widen) % 2 !== 0) widen++;
  const square = d.coeff * pow10(widen);
  let root = isqrt(square);
  let exp = (d.exp - widen) / 2;
  if (root * root !== square) return { value: { neg: false, coeff: root, exp }, inexact: true };
  const ideal = Math.floor(d.exp / 2);
  while (exp < ideal && root % 10n === 0n) {
    root /= 10n;
    exp++;
  }
  return exact({ neg: false, coeff: root, exp });
}

/** e^d. */
export function decimalExp(d: FiniteDecimal): DecimalResult {
  if (d.coeff === 0n) return exact(DECIMAL_ONE);
  const x = scaled(ONE, d);
  if (x > EXP_LIMIT || x < -EXP_LIMIT) return outOfRange(false, x > 0n);
  return expFixed(x);
}

/**
 * The logarithm of d > 0 in a base > 0 other than 1 (absent: the natural logarithm). Exact when the base
 * raised to an integer is d (log10(1000) is 3), as the decimal library's is.
 */
export function decimalLog(d: FiniteDecimal, base?: FiniteDecimal): DecimalResult {
  if (sameValue(d, DECIMAL_ONE)) return exact({ neg: false, coeff: 0n, exp: 0 });
  const ln = lnFixed(d);
  if (!base) return fromFixed(ln);
  const decimal = sameValue(base, { neg: false, coeff: 10n, exp: 0 });
  const power = reduced(d);
  if (decimal && power.coeff === 1n) return exact({ neg: power.exp < 0, coeff: BigInt(Math.abs(power.exp)), exp: 0 });
  const quotient = divide(ln, decimal ? LN10 : lnFixed(base));
  const n = roundedQuotient(quotient, ONE);
  const distance = quotient - n * ONE;
  if ((distance < 0n ? -distance : distance) < pow10(PLACES - 60) && (n < 0n ? -n : n) <= EXACT_POWER_LIMIT && isPower(d, base, n)) {
    return exact({ neg: n < 0n, coeff: n < 0n ? -n : n, exp: 0 });
  }
  return fromFixed(quotient);
}

/** True when base^n = d exactly. */
function isPower(d: FiniteDecimal, base: FiniteDecimal, n: bigint): boolean {
  const count = n < 0n ? -n : n;
  const power: FiniteDecimal = { neg: false, coeff: base.coeff ** count, exp: base.exp * Number(count) };
  // base^-n = d exactly when d × base^n = 1.
  return n >= 0n ? sameValue(power, d) : sameValue({ neg: false, coeff: power.coeff * d.coeff, exp: power.exp + d.exp }, DECIMAL_ONE);
}

/**
 * base^exponent for a base other than zero: exact for an integral exponent up to EXACT_POWER_LIMIT (a
 * negative one answers the power to divide 1 by: `reciprocal`), and for `x^0.5`; else e^(exponent × ln|base|).
 * A negative base with a fractional exponent is the caller's (NaN).
 */
export function decimalPower(base: FiniteDecimal, exponent: FiniteDecimal): DecimalResult & { reciprocal?: true } {
  if (exponent.coeff === 0n || sameValue(base, DECIMAL_ONE)) return exact(DECIMAL_ONE);
  const n = integralValue(exponent);
  const negative = base.neg && n !== undefined && n % 2n !== 0n;
  if (n !== undefined && (n < 0n ? -n : n) <= EXACT_POWER_LIMIT) {
    const count = n < 0n ? -n : n;
    const power = { value: { neg: negative, coeff: base.coeff ** count, exp: base.exp * Number(count) }, inexact: false };
    return n < 0n ? { ...power, reciprocal: true } : power;
  }
  if (!base.neg && sameValue(exponent, { neg: false, coeff: 5n, exp: -1 })) return decimalSqrt(base);
  const x = scaled(lnFixed({ ...base, neg: false }), exponent);
  if (x > EXP_LIMIT || x < -EXP_LIMIT) return outOfRange(negative, x > 0n);
  const result = expFixed(x);
  return { ...result, value: { ...result.value, neg: negative } };
}

// ---- trigonometric and hyperbolic functions ----
//
// Computed in fixed point at a precision chosen per call: PLACES and guard digits, plus the operand's own
// size where it matters (a tiny operand keeps its 34 digits relative to itself; a huge angle is reduced by
// π/2 known to as many digits beyond its integral part). Correct to 34 digits under the same caveat as exp
// and ln (a true value within about 10^-60 of a rounding boundary may round to the other neighbour).

const GUARD = 10;

/** The power of ten of a nonzero decimal's leading digit. */
function magnitudeOf(d: FiniteDecimal): number {
  return d.exp + digitCount(d.coeff) - 1;
}

/** d × 10^places, truncated toward zero. */
function toFixedAt(d: FiniteDecimal, places: number): bigint {
  const shift = d.exp + places;
  const magnitude = shift >= 0 ? d.coeff * pow10(shift) : d.coeff / pow10(-shift);
  return d.neg ? -magnitude : magnitude;
}

function fromFixedAt(fixed: bigint, places: number): DecimalResult {
  return { value: { neg: fixed < 0n, coeff: fixed < 0n ? -fixed : fixed, exp: -places }, inexact: true };
}

/** Σ (-1)^k / ((2k+1) n^(2k+1)) = atan(1/n), at scale `one`. */
function atanInverse(n: bigint, one: bigint): bigint {
  const n2 = n * n;
  let term = one / n;
  let sum = term;
  for (let k = 1n; term !== 0n; k++) {
    term /= n2;
    sum += (k % 2n === 0n ? term : -term) / (2n * k + 1n);
  }
  return sum;
}

let piPlaces = 0;
let piDigits = 0n;

/** π at `places` digits after the point (Machin's formula; the most precise computed so far is kept). */
function piAt(places: number): bigint {
  if (places > piPlaces) {
    const wide = places + GUARD;
    const one = pow10(wide);
    piDigits = 16n * atanInverse(5n, one) - 4n * atanInverse(239n, one);
    piPlaces = wide;
  }
  return piDigits / pow10(piPlaces - places);
}

/** sin r and cos r at scale `one`, for |r| <= π/4 (Taylor series). */
function sinCosFixed(r: bigint, one: bigint): { sin: bigint; cos: bigint } {
  const r2 = (r * r) / one;
  let sin = r;
  let term = r;
  for (let n = 2n; term !== 0n; n += 2n) {
    term = -(term * r2) / one / (n * (n + 1n));
    sin += term;
  }
  let cos = one;
  term = one;
  for (let n = 1n; term !== 0n; n += 2n) {
    term = -(term * r2) / one / (n * (n + 1n));
    cos += term;
  }
  return { sin, cos };
}

function zeroResult(d: FiniteDecimal): DecimalResult {
  return exact({ neg: d.neg, coeff: 0n, exp: 0 });
}

/** sin, cos and tan of an angle in radians: the angle reduced by the nearest multiple of π/2. */
function trigonometric(d: FiniteDecimal, which: 'sin' | 'cos' | 'tan'): DecimalResult {
  if (d.coeff === 0n) return which === 'cos' ? exact(DECIMAL_ONE) : zeroResult(d);
  const magnitude = magnitudeOf(d);
  // Reduced with π/2 known to every digit of the angle's integral part and PLACES beyond; the remainder
  // is then worked at PLACES (and a tiny angle's own digits).
  const reduction = PLACES + GUARD + Math.abs(magnitude);
  const places = PLACES + GUARD + Math.max(0, -magnitude);
  const one = pow10(places);
  const x = toFixedAt(d, reduction);
  const halfPi = piAt(reduction) / 2n;
  const k = roundedQuotient(x, halfPi);
  const { sin, cos } = sinCosFixed((x - k * halfPi) / pow10(reduction - places), one);
  const quadrant = Number(((k % 4n) + 4n) % 4n);
  const s = [sin, cos, -sin, -cos][quadrant];
  const c = [cos, -sin, -cos, sin][quadrant];
  if (which === 'sin') return fromFixedAt(s, places);
  if (which === 'cos') return fromFixedAt(c, places);
  return fromFixedAt((s * one) / c, places);
}

export function decimalSin(d: FiniteDecimal): DecimalResult {
  return trigonometric(d, 'sin');
}

export function decimalCos(d: FiniteDecimal): DecimalResult {
  return trigonometric(d, 'cos');
}

export function decimalTan(d: FiniteDecimal): DecimalResult {
  return trigonometric(d, 'tan');
}

/** atan of x at scale `one` (|x| <= 1): halved twice (atan x = 2 atan(x / (1 + √(1 + x²)))), then its series. */
function atanSmall(x: bigint, one: bigint): bigint {
  let z = x;
  for (let i = 0; i < 2; i++) z = (z * one) / (one + isqrt(one * one + z * z));
  const z2 = (z * z) / one;
  let sum = z;
  let power = z;
  for (let n = 1n; power !== 0n; n++) {
    power = -(power * z2) / one;
    sum += power / (2n * n + 1n);
  }
  return 4n * sum;
}

/** atan d in fixed point, with its scale: beyond 1 in magnitude, π/2 - atan(1/d). */
function atanFixed(d: FiniteDecimal): { fixed: bigint; places: number } {
  const magnitude = magnitudeOf(d);
  const places = PLACES + GUARD + Math.max(0, -magnitude);
  const one = pow10(places);
  const x = toFixedAt(d, places);
  const abs = x < 0n ? -x : x;
  if (abs <= one) return { fixed: atanSmall(x, one), places };
  // 1/d at this scale, from d's digits (not from x, whose fraction may have been cut).
  const inverse = (pow10(places) * pow10(places)) / toFixedAt({ ...d, neg: false }, places);
  const value = piAt(places) / 2n - atanSmall(inverse, one);
  return { fixed: d.neg ? -value : value, places };
}

export function decimalAtan(d: FiniteDecimal): DecimalResult {
  if (d.coeff === 0n) return zeroResult(d);
  const { fixed, places } = atanFixed(d);
  return fromFixedAt(fixed, places);
}

/** asin d for |d| <= 1: atan(d / √(1 - d²)), ±π/2 at ±1. */
function asinFixed(d: FiniteDecimal): { fixed: bigint; places: number } {
  const magnitude = magnitudeOf(d);
  const places = PLACES + GUARD + Math.max(0, -magnitude);
  const one = pow10(places);
  const x = toFixedAt(d, places);
  const rest = one * one - x * x;
  if (rest <= 0n) return { fixed: d.neg ? -piAt(places) / 2n : piAt(places) / 2n, places };
  // The ratio as a decimal of `places` fractional digits: atanFixed picks its own precision from it.
  const ratio = (x * one) / isqrt(rest);
  return atanFixed({ neg: ratio < 0n, coeff: ratio < 0n ? -ratio : ratio, exp: -places });
}

export function decimalAsin(d: FiniteDecimal): DecimalResult {
  if (d.coeff === 0n) return zeroResult(d);
  const { fixed, places } = asinFixed(d);
  return fromFixedAt(fixed, places);
}

export function decimalAcos(d: FiniteDecimal): DecimalResult {
  if (sameValue(d, DECIMAL_ONE)) return exact({ neg: false, coeff: 0n, exp: 0 });
  if (d.coeff === 0n) return fromFixedAt(piAt(PLACES + GUARD) / 2n, PLACES + GUARD);
  const { fixed, places } = asinFixed(d);
  return fromFixedAt(piAt(places) / 2n - fixed, places);
}

/**
 * atan2(y, x), the angle of the point (x, y): atan(y / x), moved by π when x is negative. Zeros of either
 * sign are the caller's (they mean the same as in doubles), except a zero y with a nonzero x.
 */
export function decimalAtan2(y: FiniteDecimal, x: FiniteDecimal): DecimalResult {
  if (y.coeff === 0n) return x.neg ? fromFixedAt(y.neg ? -piAt(PLACES + GUARD) : piAt(PLACES + GUARD), PLACES + GUARD) : zeroResult(y);
  if (x.coeff === 0n) return fromFixedAt(y.neg ? -piAt(PLACES + GUARD) / 2n : piAt(PLACES + GUARD) / 2n, PLACES + GUARD);
  // y / x with 120 digits: enough for atan's 34 whatever its size.
  const widen = Math.max(0, 120 + digitCount(x.coeff) - digitCount(y.coeff));
  const ratio: FiniteDecimal = { neg: y.neg !== x.neg, coeff: (y.coeff * pow10(widen)) / x.coeff, exp: y.exp - x.exp - widen };
  const { fixed, places } = atanFixed(ratio);
  if (!x.neg) return fromFixedAt(fixed, places);
  const pi = piAt(places);
  return fromFixedAt(y.neg ? fixed - pi : fixed + pi, places);
}

/** d × π / 180 and d × 180 / π, to every digit d has. */
export function decimalDegreesToRadians(d: FiniteDecimal): DecimalResult {
  const places = PLACES + GUARD;
  return { value: { neg: d.neg, coeff: (d.coeff * piAt(places)) / 180n, exp: d.exp - places }, inexact: d.coeff !== 0n };
}

export function decimalRadiansToDegrees(d: FiniteDecimal): DecimalResult {
  const places = PLACES + GUARD;
  return { value: { neg: d.neg, coeff: (d.coeff * 180n * pow10(2 * places)) / piAt(places), exp: d.exp - places }, inexact: d.coeff !== 0n };
}

/** e^x as a fixed-point number at PLACES (x in fixed point), or undefined beyond decimal128's range. */
function expAt(x: bigint): bigint | undefined {
  if (x > EXP_LIMIT || x < -EXP_LIMIT) return undefined;
  return toFixedAt(expFixed(x).value, PLACES);
}

/** sinh, cosh, tanh: by their series below 1 in magnitude (no cancellation), else from e^|d|. */
function hyperbolic(d: FiniteDecimal, which: 'sinh' | 'cosh' | 'tanh'): DecimalResult {
  if (d.coeff === 0n) return which === 'cosh' ? exact(DECIMAL_ONE) : zeroResult(d);
  const magnitude = magnitudeOf(d);
  if (magnitude < 0) {
    const places = PLACES + GUARD - magnitude;
    const one = pow10(places);
    const x = toFixedAt(d, places);
    const x2 = (x * x) / one;
    let sinh = x;
    let term = x;
    for (let n = 2n; term !== 0n; n += 2n) {
      term = (term * x2) / one / (n * (n + 1n));
      sinh += term;
    }
    let cosh = one;
    term = one;
    for (let n = 1n; term !== 0n; n += 2n) {
      term = (term * x2) / one / (n * (n + 1n));
      cosh += term;
    }
    return fromFixedAt(which === 'sinh' ? sinh : which === 'cosh' ? cosh : (sinh * one) / cosh, places);
  }
  const abs = scaled(ONE, { ...d, neg: false });
  const e = expAt(abs);
  if (e === undefined) {
    if (which === 'tanh') return fromFixedAt(d.neg ? -ONE : ONE, PLACES);
    return outOfRange(which === 'sinh' && d.neg, true);
  }
  const inverse = (ONE * ONE) / e;
  const sinh = (e - inverse) / 2n;
  const cosh = (e + inverse) / 2n;
  const value = which === 'sinh' ? sinh : which === 'cosh' ? cosh : (sinh * ONE) / cosh;
  return fromFixedAt(d.neg && which !== 'cosh' ? -value : value, PLACES);
}

export function decimalSinh(d: FiniteDecimal): DecimalResult {
  return hyperbolic(d, 'sinh');
}

export function decimalCosh(d: FiniteDecimal): DecimalResult {
  return hyperbolic(d, 'cosh');
}

export function decimalTanh(d: FiniteDecimal): DecimalResult {
  return hyperbolic(d, 'tanh');
}

/** atanh z = Σ z^(2n+1) / (2n+1) at scale `one`, for |z| well below 1. */
function atanhSeries(z: bigint, one: bigint): bigint {
  const z2 = (z * z) / one;
  let sum = z;
  let power = z;
  for (let n = 1n; power !== 0n; n++) {
    power = (power * z2) / one;
    sum += power / (2n * n + 1n);
  }
  return sum;
}

/** ln of a positive fixed-point number at `places`. */
function lnOfFixed(fixed: bigint, places: number): bigint {
  return lnFixed({ neg: false, coeff: fixed, exp: -places });
}

/** atanh d for |d| < 1 (±1: ±infinity): by its series up to 1/2, else ½ ln((1 + d) / (1 - d)). */
export function decimalAtanh(d: FiniteDecimal): DecimalResult {
  if (d.coeff === 0n) return zeroResult(d);
  const magnitude = magnitudeOf(d);
  const places = PLACES + GUARD + Math.max(0, -magnitude);
  const one = pow10(places);
  const x = toFixedAt(d, places);
  const abs = x < 0n ? -x : x;
  if (abs >= one) return outOfRange(d.neg, true);
  if (2n * abs <= one) return fromFixedAt(atanhSeries(x, one), places);
  const half = lnOfFixed(((one + abs) * one) / (one - abs), places) / 2n;
  return fromFixedAt(d.neg ? -half : half, PLACES);
}

/** asinh d = atanh(d / √(1 + d²)) below 1 in magnitude, else ±ln(|d| + √(d² + 1)). */
export function decimalAsinh(d: FiniteDecimal): DecimalResult {
  if (d.coeff === 0n) return zeroResult(d);
  const magnitude = magnitudeOf(d);
  if (magnitude < 0) {
    const places = PLACES + GUARD - magnitude;
    const one = pow10(places);
    const x = toFixedAt(d, places);
    return fromFixedAt(atanhSeries((x * one) / isqrt(one * one + x * x), one), places);
  }
  const places = PLACES + GUARD;
  const x = toFixedAt({ ...d, neg: false }, places);
  const one = pow10(places);
  const ln = lnOfFixed(x + isqrt(x * x + one * one), places);
  return fromFixedAt(d.neg ? -ln : ln, PLACES);
}

/** acosh d = ln(d + √(d² - 1)), for d >= 1. */
export function decimalAcosh(d: FiniteDecimal): DecimalResult {
  if (sameValue(d, DECIMAL_ONE)) return exact({ neg: false, coeff: 0n, exp: 0 });
  const places = PLACES + GUARD;
  const one = pow10(places);
  const x = toFixedAt(d, places);
  return fromFixedAt(lnOfFixed(x + isqrt(x * x - one * one), places), PLACES);
}
