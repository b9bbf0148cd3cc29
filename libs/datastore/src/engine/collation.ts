/**
 * MongoDB collations on Node's ICU (`Intl.Collator`): a `collation` document validated as MongoDB 7
 * validates it, turned into a string comparison. Strings compare by the collator; every other type keeps
 * BSON order (see compareValues, which consults the comparison active while the engine runs an operation).
 */
import { DatastoreError } from '../api/datastore.error';
import { type Document, isPlainObject, withStringComparison } from '../bson/values';

/** A collation as the driver sends it (`{locale, strength, caseLevel, caseFirst, numericOrdering, ...}`). */
export type Collation = Document;

/** A compiled collation: undefined stands for the simple (binary) one. */
export type StringComparison = ((a: string, b: string) => number) | undefined;

const KNOWN_FIELDS = new Set(['locale', 'strength', 'caseLevel', 'caseFirst', 'numericOrdering', 'alternate', 'maxVariable', 'normalization', 'backwards', 'version']);

function badValue(message: string): never {
  throw new DatastoreError('BadValue', message, { clientError: true });
}

function unsupported(message: string): never {
  throw new DatastoreError('CommandNotSupported', message, { clientError: true });
}

function booleanField(spec: Document, field: string): boolean | undefined {
  const value = spec[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new DatastoreError('TypeMismatch', `BSON field 'collation.${field}' is the wrong type '${typeof value}', expected type 'bool'`, { clientError: true });
  return value;
}

function stringField(spec: Document, field: string, allowed: string[]): string | undefined {
  const value = spec[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new DatastoreError('TypeMismatch', `BSON field 'collation.${field}' is the wrong type '${typeof value}', expected type 'string'`, { clientError: true });
  if (!allowed.includes(value)) badValue(`Field '${field}' must be one of ${allowed.map((a) => `'${a}'`).join(', ')}. Got: ${value}`);
  return value;
}

/** The ICU locale for a MongoDB locale name (`en_US` -> `en-US`), or undefined when ICU has no such locale. */
function icuLocale(locale: string): string | undefined {
  const tag = locale.replace(/_/g, '-').replace(/@.*$/, '');
  try {
    return Intl.Collator.supportedLocalesOf([tag])[0];
  } catch {
    return undefined;
  }
}

/** True when `collation` is absent or the simple one. */
export function isSimpleCollation(collation: Collation | undefined): boolean {
  return collation === undefined || (collation.locale === 'simple' && Object.keys(collation).length === 1);
}

const compiled = new Map<string, StringComparison>();
/** One comparison per distinct set of ICU parameters, however the collation document spells them. */
const byParameters = new Map<string, (a: string, b: string) => number>();
/** The parameters of each comparison compiled (two collations are the same when these are). */
const parametersOf = new WeakMap<(a: string, b: string) => number, string>();

/**
 * Validates a collation document and compiles it: undefined for the simple collation. Errors are MongoDB's:
 * a missing locale (40414), an unknown field (40415), an unknown locale or bad value (BadValue), and
 * `backwards` or `maxVariable: 'space'` (CommandNotSupported: ICU in Node offers neither).
 */
export function compileCollation(collation: unknown): StringComparison {
  if (collation === undefined) return undefined;
  if (!isPlainObject(collation)) throw new DatastoreError('TypeMismatch', "BSON field 'collation' is the wrong type, expected type 'object'", { clientError: true });
  const key = JSON.stringify(collation);
  if (compiled.has(key)) return compiled.get(key);
  for (const field of Object.keys(collation)) if (!KNOWN_FIELDS.has(field)) throw new DatastoreError('Location40415', `BSON field 'collation.${field}' is an unknown field.`, { clientError: true });
  const locale = collation.locale;
  if (locale === undefined) throw new DatastoreError('Location40414', "BSON field 'locale' is missing but a required field", { clientError: true });
  if (typeof locale !== 'string') throw new DatastoreError('TypeMismatch', "BSON field 'collation.locale' is the wrong type, expected type 'string'", { clientError: true });
  if (locale === 'simple') {
    if (Object.keys(collation).length > 1 && Object.keys(collation).some((f) => f !== 'locale' && f !== 'version')) badValue("Field 'locale' is invalid with other collation options: the simple locale takes none");
    compiled.set(key, undefined);
    return undefined;
  }
  const tag = icuLocale(locale);
  if (!tag) badValue(`Field 'locale' is invalid in: ${JSON.stringify(collation)}`);
  const strengthValue = collation.strength ?? 3;
  if (typeof strengthValue !== 'number' || !Number.isInteger(strengthValue) || strengthValue < 1 || strengthValue > 5) badValue(`Field 'strength' must be an integer 1 through 5. Got: ${JSON.stringify(strengthValue)}`);
  const strength = strengthValue;
  const caseLevel = booleanField(collation, 'caseLevel') ?? false;
  const caseFirst = stringField(collation, 'caseFirst', ['upper', 'lower', 'off']) ?? 'off';
  const numeric = booleanField(collation, 'numericOrdering') ?? false;
  const alternate = stringField(collation, 'alternate', ['non-ignorable', 'shifted']) ?? 'non-ignorable';
  const maxVariable = stringField(collation, 'maxVariable', ['punct', 'space']) ?? 'punct';
  booleanField(collation, 'normalization');
  if (booleanField(collation, 'backwards') === true) unsupported('collation backwards: true (French secondary ordering) is not supported by the Tessera datastore');
  if (alternate === 'shifted' && maxVariable === 'space') unsupported("collation maxVariable: 'space' is not supported by the Tessera datastore (alternate: 'shifted' ignores spaces and punctuation)");
  // ICU strengths: 1 base letters, 2 accents, 3 case (Intl's 'variant'); caseLevel adds case to strength 1.
  const sensitivity = strength === 1 ? (caseLevel ? 'case' : 'base') : strength === 2 && !caseLevel ? 'accent' : 'variant';
  const parameters = JSON.stringify([tag, sensitivity, strength === 5, caseFirst, numeric, alternate]);
  let comparison = byParameters.get(parameters);
  if (!comparison) {
    const collator = new Intl.Collator(tag, { usage: 'sort', sensitivity, caseFirst: caseFirst === 'off' ? 'false' : (caseFirst as 'upper' | 'lower'), numeric, ignorePunctuation: alternate === 'shifted' });
    const compare = collator.compare.bind(collator);
    // Strength 5 (identical) breaks the remaining ties by code point.
    comparison = strength === 5 ? (a, b) => compare(a, b) || (a < b ? -1 : a > b ? 1 : 0) : compare;
    if (byParameters.size > 256) byParameters.delete(byParameters.keys().next().value as string);
    byParameters.set(parameters, comparison);
    parametersOf.set(comparison, parameters);
  }
  if (compiled.size > 256) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, comparison);
  return comparison;
}

/** True when two compiled comparisons order every string alike (the same collation, however spelled). */
export function sameComparison(a: StringComparison, b: StringComparison): boolean {
  return a === b || (a !== undefined && b !== undefined && parametersOf.get(a) === parametersOf.get(b));
}

/** True when two collation documents (absent: simple) compare strings alike. */
export function sameCollation(a: Collation | undefined, b: Collation | undefined): boolean {
  return sameComparison(compileCollation(a), compileCollation(b));
}

/** Runs `fn` (synchronous engine work) with strings compared by `collation`. */
export function withCollation<T>(collation: Collation | undefined, fn: () => T): T {
  const comparison = compileCollation(collation);
  return comparison ? withStringComparison(comparison, fn) : withStringComparison(undefined, fn);
}
