import { Decimal128 } from 'bson';
import { atan2, realFunction } from './numeric';

/** A decimal function's result, as the pipeline operator gives it. */
function of(op: string, text: string): string {
  return String(realFunction(Decimal128.fromString(text), op, () => Number.NaN));
}

/** A decimal's value as its significant digits (no trailing zeros) and the power of ten of the first: `-123e-2`. */
function canonical(text: string): string {
  const match = /^(-?)(\d*)\.?(\d*)(?:E([+-]\d+))?$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction, exponent] = match;
  const all = whole + fraction;
  const first = all.search(/[1-9]/);
  if (first < 0) return '0';
  const lead = Number(exponent ?? 0) + whole.length - 1 - first;
  return `${sign}${all.slice(first).replace(/0+$/, '')}e${lead}`;
}

/** Computed with mpmath at 200 digits, rounded half to even to 34. */
const REFERENCE: [string, string, string][] = [
    ['$sin', '-2.5', '-5984721441039564940518547021861623e-1'],
    ['$sin', '3.141592653589793238462643383279503', '-1158028306006248941790250554076922e-34'],
    ['$cos', '1E+100', '-9280819050746553434561946437769559e-1'],
    ['$sin', '123456789.123456789', '9998509308719309246478000800260099e-1'],
    ['$tan', '1.5707963267948966', '5199850618872027066019474166122687e16'],
    ['$tan', '-0.001', '-1000000333333466666720634942504418e-3'],
    ['$cos', '1E-20', '1e0'],
    ['$asin', '-0.9999999999', '-1570782184659272770429703474342938e0'],
    ['$acos', '0.123', '1447484051603024622850458323713085e0'],
    ['$atan', '-1E+40', '-1570796326794896619231321691639751e0'],
    ['$atan', '12.5', '1490966341082659303338367500072419e0'],
    ['$sinh', '-0.001', '-1000000166666675000000198412701168e-3'],
    ['$sinh', '100', '1344058570908067724206312775790007e43'],
    ['$cosh', '-20', '2425825977048951400151302264900492e8'],
    ['$tanh', '50', '1e0'],
    ['$tanh', '-1E-25', '-1e-25'],
    ['$asinh', '-1E-30', '-1e-30'],
    ['$asinh', '1E+40', '9279655090032177267013689030883274e1'],
    ['$asinh', '-3', '-1818446459232066823483698963560709e0'],
    ['$acosh', '1.0000000001', '1414213562361309935782178097179288e-5'],
    ['$acosh', '1E+300', '6914686750787736505148146685267674e2'],
    ['$atanh', '0.999999', '7254328619262047206741757083636344e0'],
    ['$atanh', '-0.3', '-3095196042031117154740673490610694e-1'],
    ['$degreesToRadians', '-1E-50', '-1745329251994329576923690768488613e-52'],
    ['$sin', '9.999999999999999999999999999999999E+6144', '5582907749092521238056875912416942e-1'],
    ['$tan', '1E+6000', '10524088602294015135055743012836e0'],
    ['$radiansToDegrees', '2.5E+10', '1432394487827058021919953870352629e12'],
];

describe('trigonometric and hyperbolic functions of decimals, to 34 digits', () => {
  it.each(REFERENCE)('%s(%s) is %s', (op, operand, expected) => {
    expect(canonical(of(op, operand))).toBe(expected);
  });

  it('computes the circular functions and their inverses', () => {
    expect(of('$sin', '1')).toBe('0.8414709848078965066525023216302990');
    expect(of('$cos', '1')).toBe('0.5403023058681397174009366074429766');
    expect(of('$tan', '1')).toBe('1.557407724654902230506974807458360');
    expect(of('$asin', '0.5')).toBe('0.5235987755982988730771072305465838');
    expect(of('$acos', '0.5')).toBe('1.047197551196597746154214461093168');
    expect(of('$atan', '1')).toBe('0.7853981633974483096156608458198757');
    expect(of('$acos', '-1')).toBe('3.141592653589793238462643383279503');
  });

  it('keeps a tiny operand its digits and reduces a huge angle exactly', () => {
    expect(of('$sin', '1E-40')).toBe('1.000000000000000000000000000000000E-40');
    expect(of('$atan', '1E-40')).toBe('1.000000000000000000000000000000000E-40');
    // sin(10^22) = -0.8522008497671888017727058937530293... (10^22 mod 2π needs 22 more digits of π).
    expect(of('$sin', '1E+22')).toBe('-0.8522008497671888017727058937530294');
  });

  it('computes the hyperbolic functions and their inverses', () => {
    expect(of('$sinh', '1')).toBe('1.175201193643801456882381850595601');
    expect(of('$cosh', '1')).toBe('1.543080634815243778477905620757062');
    expect(of('$tanh', '0.5')).toBe('0.4621171572600097585023184836436725');
    expect(of('$asinh', '1')).toBe('0.8813735870195430252326093249797923');
    expect(of('$acosh', '2')).toBe('1.316957896924816708625046347307968');
    expect(of('$atanh', '0.5')).toBe('0.5493061443340548456976226184612629');
    expect(of('$atanh', '0.9')).toBe('1.472219489583220230004513715943927');
  });

  it('converts degrees and radians and computes atan2 with every digit', () => {
    expect(of('$degreesToRadians', '180')).toBe('3.141592653589793238462643383279503');
    expect(of('$radiansToDegrees', '1')).toBe('57.29577951308232087679815481410517');
    expect(String(atan2(Decimal128.fromString('1'), Decimal128.fromString('-1')))).toBe('2.356194490192344928846982537459627');
    expect(String(atan2(Decimal128.fromString('0'), Decimal128.fromString('-1')))).toBe('3.141592653589793238462643383279503');
    expect(String(atan2(Decimal128.fromString('-1'), 1))).toBe('-0.7853981633974483096156608458198757');
  });
});
