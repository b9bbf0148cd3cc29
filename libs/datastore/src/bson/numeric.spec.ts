import { Decimal128, Double, Long } from 'bson';
import { DatastoreError } from '../api/datastore.error';
import { NumericTotal, abs, add, convertToNumber, divide, mod, multiply, numericKind, pow, roundTo, subtract } from './numeric';

/** A stored number's BSON type and value, for comparing results. */
function typed(value: unknown): [string | undefined, string] {
  return [numericKind(value), String(value instanceof Double ? value.value : value)];
}

describe('numbers computed with MongoDB types', () => {
  it('adds ints into an int, a long when int32 overflows, and longs into a double when int64 overflows', () => {
    expect(typed(add([1, 2]))).toEqual(['int', '3']);
    expect(typed(add([2147483647, 1]))).toEqual(['long', '2147483648']);
    expect(typed(add([Long.fromNumber(1), 2]))).toEqual(['long', '3']);
    expect(typed(add([Long.MAX_VALUE, 1]))).toEqual(['double', '9223372036854776000']);
    expect(typed(add([1, 0.5]))).toEqual(['double', '1.5']);
    expect(typed(add([new Double(1), 1]))).toEqual(['double', '2']);
    expect(add([1, null])).toBeNull();
  });

  it('computes longs beyond 2^53 exactly', () => {
    expect(String(add([Long.fromString('9007199254740993'), 2]))).toBe('9007199254740995');
    expect(String(subtract(Long.fromString('9007199254740993'), 1))).toBe('9007199254740992');
    expect(String(multiply([Long.fromString('3037000499'), Long.fromString('3037000499')]))).toBe('9223372030926249001');
  });

  it('lets a decimal win, computed exactly', () => {
    expect(String(add([Decimal128.fromString('0.1'), Decimal128.fromString('0.2')]))).toBe('0.3');
    expect(String(add([Decimal128.fromString('1.10'), 2]))).toBe('3.10');
    expect(String(add([Decimal128.fromString('1'), 0.5]))).toBe('1.500000000000000');
    expect(String(multiply([Decimal128.fromString('1.5'), Decimal128.fromString('2.0')]))).toBe('3.00');
    expect(String(divide(Decimal128.fromString('1'), 3))).toBe('0.3333333333333333333333333333333333');
    expect(String(divide(Decimal128.fromString('10'), 4))).toBe('2.5');
  });

  it('gives an int product an int, a long when it leaves int32, and a double once an integral product overflows', () => {
    expect(typed(multiply([3, 4]))).toEqual(['int', '12']);
    expect(typed(multiply([65536, 65536]))).toEqual(['long', '4294967296']);
    expect(typed(multiply([Long.fromString('4611686018427387904'), 4, 0]))).toEqual(['double', '0']);
  });

  it('divides into a double and refuses a zero divisor', () => {
    expect(typed(divide(4, 2))).toEqual(['double', '2']);
    expect(typed(divide(Long.fromNumber(5), 2))).toEqual(['double', '2.5']);
    expect(() => divide(1, 0)).toThrow(expect.objectContaining({ code: 16608 }));
  });

  it("keeps the wider operand's type for $mod and the operand's for $abs", () => {
    expect(typed(mod(Long.fromNumber(10), 3))).toEqual(['long', '1']);
    expect(typed(mod(-7, 3))).toEqual(['int', '-1']);
    expect(typed(mod(new Double(7), 2))).toEqual(['double', '1']);
    expect(typed(abs(-2147483648))).toEqual(['long', '2147483648']);
    expect(typed(abs(new Double(-2)))).toEqual(['double', '2']);
    expect(() => abs(Long.MIN_VALUE)).toThrow(DatastoreError);
  });

  it('rounds half to even and truncates, keeping the type', () => {
    expect(typed(roundTo(2.5, 0, '$round'))).toEqual(['double', '2']);
    expect(typed(roundTo(3.5, 0, '$round'))).toEqual(['double', '4']);
    expect(typed(roundTo(1250, -2, '$round'))).toEqual(['int', '1200']);
    expect(typed(roundTo(Long.fromNumber(1350), -2, '$round'))).toEqual(['long', '1400']);
    expect(typed(roundTo(-2.7, 0, '$trunc'))).toEqual(['double', '-2']);
    expect(typed(roundTo(1.2345, 2, '$trunc'))).toEqual(['double', '1.23']);
    expect(String(roundTo(Decimal128.fromString('2.345'), 2, '$round'))).toBe('2.34');
  });

  it('raises an int to an int power as an int, a long or a double as MongoDB does', () => {
    expect(typed(pow(2, 10))).toEqual(['int', '1024']);
    expect(typed(pow(2, 40))).toEqual(['long', '1099511627776']);
    expect(typed(pow(2, 70))).toEqual(['double', String(2 ** 70)]);
    expect(typed(pow(2, -1))).toEqual(['double', '0.5']);
    expect(typed(pow(Long.fromNumber(3), 2))).toEqual(['long', '9']);
  });

  it('sums and averages with $sum and $avg result types', () => {
    const total = new NumericTotal();
    expect(typed(total.sum())).toEqual(['int', '0']);
    expect(total.average()).toBeNull();
    for (const value of [1, 'skipped', Long.fromNumber(2), 3]) total.addValue(value);
    expect(typed(total.sum())).toEqual(['long', '6']);
    expect(typed(total.average())).toEqual(['double', '2']);
    const tenths = new NumericTotal();
    for (let i = 0; i < 10; i++) tenths.addValue(0.1);
    expect(typed(tenths.sum())).toEqual(['double', '1']);
  });

  it('converts to each numeric type, failing with ConversionFailure', () => {
    expect(typed(convertToNumber(new Double(2.9), 'int'))).toEqual(['int', '2']);
    expect(typed(convertToNumber(5, 'long'))).toEqual(['long', '5']);
    expect(typed(convertToNumber(Long.fromNumber(5), 'double'))).toEqual(['double', '5']);
    expect(String(convertToNumber(2.5, 'decimal'))).toBe('2.50000000000000');
    expect(typed(convertToNumber('-12', 'long'))).toEqual(['long', '-12']);
    expect(typed(convertToNumber(true, 'double'))).toEqual(['double', '1']);
    expect(typed(convertToNumber(new Date(5), 'long'))).toEqual(['long', '5']);
    for (const [value, target] of [
      [Long.fromNumber(2 ** 40), 'int'],
      ['1.5', 'int'],
      [Number.NaN, 'long'],
      [new Date(5), 'int'],
      [{}, 'double'],
    ] as const) {
      expect(() => convertToNumber(value, target)).toThrow(expect.objectContaining({ codeName: 'ConversionFailure', code: 241 }));
    }
  });
});
