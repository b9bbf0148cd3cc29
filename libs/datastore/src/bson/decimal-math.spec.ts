import fc from 'fast-check';
import { Decimal128 } from 'bson';
import { type FiniteDecimal, decimalExp, decimalLog, decimalSqrt } from './decimal-math';
import { log, pow, realFunction } from './numeric';

const decimal = (text: string) => Decimal128.fromString(text);
const sqrt = (text: string) => String(realFunction(decimal(text), '$sqrt', Math.sqrt));
const exp = (text: string) => String(realFunction(decimal(text), '$exp', Math.exp));
const ln = (text: string) => String(realFunction(decimal(text), '$ln', Math.log));
const log10 = (text: string) => String(realFunction(decimal(text), '$log10', Math.log10));

/** A positive decimal of up to 34 digits and any exponent decimal128 holds. */
const positiveDecimal = fc
  .record({ coeff: fc.bigInt({ min: 1n, max: 10n ** 34n - 1n }), exp: fc.integer({ min: -6176, max: 6111 }) })
  .map(({ coeff, exp }): FiniteDecimal => ({ neg: false, coeff, exp }));

// Expected values are Python's decimal module's, at 34 digits with half-even rounding (correctly rounded).
describe('decimal math to 34 digits', () => {
  it('takes square roots exactly rounded, exact ones at their ideal exponent', () => {
    expect(sqrt('2')).toBe('1.414213562373095048801688724209698');
    expect(sqrt('2.25')).toBe('1.5');
    expect(sqrt('4.00')).toBe('2.0');
    expect(sqrt('1E-400')).toBe('1E-200');
    expect(sqrt('0')).toBe('0');
    expect(sqrt('Infinity')).toBe('Infinity');
    // A decimal too small for a double keeps its sign for the domain check.
    const refuseNegative = (x: number) => {
      if (x < 0) throw new RangeError('negative');
    };
    expect(() => realFunction(decimal('-1E-400'), '$sqrt', Math.sqrt, refuseNegative)).toThrow(RangeError);
  });

  it('answers the square root to at least 36 digits before rounding, and says when it is inexact', () => {
    fc.assert(
      fc.property(positiveDecimal, (d) => {
        const { value, inexact } = decimalSqrt(d);
        // value = R × 10^f: R is the integer root of d's coefficient at the exponent 2f, exact or not.
        const shift = d.exp - 2 * value.exp;
        const square = value.coeff * value.coeff;
        if (!inexact) return shift >= 0 ? square === d.coeff * 10n ** BigInt(shift) : square * 10n ** BigInt(-shift) === d.coeff;
        const widened = d.coeff * 10n ** BigInt(shift);
        return shift >= 0 && value.coeff.toString().length >= 36 && square < widened && widened < (value.coeff + 1n) ** 2n;
      }),
    );
  });

  it('computes e^x, ln x and log10 x to 34 digits, exact results exactly', () => {
    expect(exp('1')).toBe('2.718281828459045235360287471352662');
    expect(exp('0')).toBe('1');
    expect(exp('-14100')).toBe('2.804175329404342359982730889110728E-6124');
    expect(exp('20000')).toBe('Infinity');
    expect(exp('-20000')).toBe('0E-6176');
    expect(ln('10')).toBe('2.302585092994045684017991454684364');
    expect(ln('1')).toBe('0');
    expect(ln('1E-6000')).toBe('-13815.51055796427410410794872810619');
    expect(ln('1.000000000000000000000000000000001')).toBe('9.999999999999999999999999999999995E-34');
    expect(log10('2')).toBe('0.3010299956639811952137388947244930');
    expect(log10('1000')).toBe('3');
    expect(log10('1E-1427')).toBe('-1427');
  });

  it('keeps ln and exp inverse to one another within the last digits', () => {
    fc.assert(
      fc.property(fc.record({ coeff: fc.bigInt({ min: 1n, max: 10n ** 20n }), exp: fc.integer({ min: -40, max: -16 }), neg: fc.boolean() }), (x) => {
        const e = decimalExp(x).value;
        const back = decimalLog(e).value;
        const given = Number(`${x.neg ? '-' : ''}${x.coeff}e${x.exp}`);
        const answered = Number(`${back.neg ? '-' : ''}${back.coeff}e${back.exp}`);
        return Math.abs(answered - given) <= Math.abs(given) * 1e-12 + 1e-30;
      }),
    );
  });

  it('takes logarithms in any base, exact when the base raised to an integer is the number', () => {
    expect(String(log(decimal('100'), 3))).toBe('4.191806548578769208593135044042803');
    expect(String(log(decimal('8'), 2))).toBe('3');
    expect(String(log(decimal('0.125'), decimal('2')))).toBe('-3');
    expect(String(log(decimal('1'), 7))).toBe('0');
    expect(String(log(decimal('1E-400'), 10))).toBe('-400');
    expect(() => log(decimal('2'), decimal('1.0'))).toThrow(expect.objectContaining({ code: 28759 }));
  });

  it('raises decimals to powers: integral ones exactly, others through exp and ln', () => {
    expect(String(pow(decimal('1.5'), decimal('2.5')))).toBe('2.755675960631075360471944584044128');
    expect(String(pow(decimal('1.1'), 2))).toBe('1.21');
    expect(String(pow(decimal('2'), -2))).toBe('0.25');
    expect(String(pow(3, decimal('3')))).toBe('27');
    expect(String(pow(decimal('-2'), 3))).toBe('-8');
    expect(String(pow(decimal('4'), 0.5))).toBe('2');
    expect(String(pow(decimal('-8'), 0.5))).toBe('NaN');
    expect(String(pow(decimal('1.234567890123456789012345678901234'), 1024))).toBe('5.144422935700966762257281418340688E+93');
    expect(String(pow(decimal('1.234567890123456789012345678901234'), -1024))).toBe('1.943852619620867918185468043898015E-94');
    expect(String(pow(decimal('1E-400'), -1))).toBe('1E+400');
    expect(String(pow(decimal('10'), 7000))).toBe('Infinity');
    expect(() => pow(decimal('0'), -1)).toThrow(expect.objectContaining({ code: 28764 }));
  });
});
