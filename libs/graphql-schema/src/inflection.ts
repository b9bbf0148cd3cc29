/**
 * English singular and plural forms as App Services computed them for type and field names: the rule
 * set of Rails ActiveSupport's default inflections (its documented behaviour, written here from the rule
 * list: later rules win, irregular words and uncountable words first). Pure string functions.
 */

type Rule = readonly [RegExp, string];

const pluralRules: readonly Rule[] = [
  [/(quiz)$/i, '$1zes'],
  [/^(oxen)$/i, '$1'],
  [/^(ox)$/i, '$1en'],
  [/^(m|l)ice$/i, '$1ice'],
  [/^(m|l)ouse$/i, '$1ice'],
  [/(matr|vert|ind)(?:ix|ex)$/i, '$1ices'],
  [/(x|ch|ss|sh)$/i, '$1es'],
  [/([^aeiouy]|qu)y$/i, '$1ies'],
  [/(hive)$/i, '$1s'],
  [/(?:([^f])fe|([lr])f)$/i, '$1$2ves'],
  [/sis$/i, 'ses'],
  [/([ti])a$/i, '$1a'],
  [/([ti])um$/i, '$1a'],
  [/(buffal|tomat)o$/i, '$1oes'],
  [/(bu)s$/i, '$1ses'],
  [/(alias|status)$/i, '$1es'],
  [/(octop|vir)i$/i, '$1i'],
  [/(octop|vir)us$/i, '$1i'],
  [/^(ax|test)is$/i, '$1es'],
  [/s$/i, 's'],
  [/$/, 's'],
];

const singularRules: readonly Rule[] = [
  [/(database)s$/i, '$1'],
  [/(quiz)zes$/i, '$1'],
  [/(matr)ices$/i, '$1ix'],
  [/(vert|ind)ices$/i, '$1ex'],
  [/^(ox)en/i, '$1'],
  [/(alias|status)(es)?$/i, '$1'],
  [/(octop|vir)(us|i)$/i, '$1us'],
  [/^(a)x[ie]s$/i, '$1xis'],
  [/(cris|test)(is|es)$/i, '$1is'],
  [/(shoe)s$/i, '$1'],
  [/(o)es$/i, '$1'],
  [/(bus)(es)?$/i, '$1'],
  [/^(m|l)ice$/i, '$1ouse'],
  [/(x|ch|ss|sh)es$/i, '$1'],
  [/(m)ovies$/i, '$1ovie'],
  [/(s)eries$/i, '$1eries'],
  [/([^aeiouy]|qu)ies$/i, '$1y'],
  [/([lr])ves$/i, '$1f'],
  [/(tive)s$/i, '$1'],
  [/(hive)s$/i, '$1'],
  [/([^f])ves$/i, '$1fe'],
  [/(^analy)(sis|ses)$/i, '$1sis'],
  [/((a)naly|(b)a|(d)iagno|(p)arenthe|(p)rogno|(s)ynop|(t)he)(sis|ses)$/i, '$1sis'],
  [/([ti])a$/i, '$1um'],
  [/(n)ews$/i, '$1ews'],
  [/(ss)$/i, '$1'],
  [/s$/i, ''],
];

const irregulars: ReadonlyArray<readonly [string, string]> = [
  ['person', 'people'],
  ['man', 'men'],
  ['child', 'children'],
  ['sex', 'sexes'],
  ['move', 'moves'],
  ['zombie', 'zombies'],
];

const uncountables = ['equipment', 'information', 'rice', 'money', 'species', 'series', 'fish', 'sheep', 'jeans', 'police'];

function isUncountable(word: string): boolean {
  const lower = word.toLowerCase();
  return uncountables.some((u) => lower === u || lower.endsWith(u));
}

function applyIrregular(word: string, from: 'singular' | 'plural'): string | undefined {
  for (const [singular, plural] of irregulars) {
    const [source, target] = from === 'singular' ? [singular, plural] : [plural, singular];
    const match = new RegExp(`(${source[0]})${source.slice(1)}$`, 'i').exec(word);
    if (match) return word.slice(0, match.index) + match[1] + target.slice(1);
  }
  return undefined;
}

function applyRules(word: string, rules: readonly Rule[]): string {
  for (const [pattern, replacement] of rules) {
    if (pattern.test(word)) return word.replace(pattern, (...groups: unknown[]) => replacement.replace(/\$(\d)/g, (_, n: string) => (groups[Number(n)] as string | undefined) ?? ''));
  }
  return word;
}

export function pluralize(word: string): string {
  if (word.length === 0 || isUncountable(word)) return word;
  return applyIrregular(word, 'singular') ?? applyRules(word, pluralRules);
}

export function singularize(word: string): string {
  if (word.length === 0 || isUncountable(word)) return word;
  // An irregular plural (people) maps back; an irregular singular (person) stays as it is.
  for (const [singular] of irregulars) if (new RegExp(`${singular}$`, 'i').test(word)) return word;
  return applyIrregular(word, 'plural') ?? applyRules(word, singularRules);
}

export function upperFirst(word: string): string {
  return word.length === 0 ? word : word[0].toUpperCase() + word.slice(1);
}

export function lowerFirst(word: string): string {
  return word.length === 0 ? word : word[0].toLowerCase() + word.slice(1);
}
