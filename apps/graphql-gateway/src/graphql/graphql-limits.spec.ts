import { buildSchema, parse, validate } from 'graphql/index.js';
import { appServicesLimits, MAX_SELECTIONS, MAX_SELECTIONS_MESSAGE } from './graphql-limits';

/** `{ ...F0 }` where each fragment spreads the next one twice: 2^levels paths through one small document. */
function fragmentBomb(levels: number, leaf: string): string {
  let query = '{ ...F0 } ';
  for (let i = 0; i < levels; i++) query += `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} } `;
  return `${query}fragment F${levels} on Query { ${leaf} }`;
}

describe('the App Services limits as validation rules', () => {
  const schema = buildSchema('type Item { name: String } type Query { item: Item, a: Int }');

  it('walks each fragment once per type, so a doubling fragment chain is validated at once', () => {
    let visits = 0;
    // Counts the fragment lookups of the rule: the walk before the fix made 2^17 of them (2^30 held the server for minutes).
    const document = parse(fragmentBomb(16, 'item { name }'));
    const errors = validate(schema, document, [
      (context) => {
        const getFragment = context.getFragment.bind(context);
        context.getFragment = (name) => {
          visits += 1;
          return getFragment(name);
        };
        return appServicesLimits(context);
      },
    ]);
    expect(errors).toEqual([]);
    // Each of the 17 fragments: its two spread sites in the depth walk, one lookup in the root count, one in
    // the count of the response's fields.
    expect(visits).toBeLessThanOrEqual(4 * 17);
  });

  it('still counts root fields through fragments', () => {
    const roots = Array.from({ length: 11 }, (_unused, i) => `a${i}: a`).join(' ');
    const errors = validate(schema, parse(`{ ...R } fragment R on Query { ${roots} }`), [appServicesLimits]);
    expect(errors.map((error) => error.message)).toEqual(['max number of queries reached']);
  });

  it('counts introspection fields as root resolvers, __typename not', () => {
    const schemas = Array.from({ length: 11 }, (_unused, i) => `s${i}: __schema { queryType { name } }`).join(' ');
    expect(validate(schema, parse(`{ ${schemas} }`), [appServicesLimits]).map((error) => error.message)).toEqual(['max number of queries reached']);
    const types = Array.from({ length: 11 }, (_unused, i) => `t${i}: __type(name: "Item") { name }`).join(' ');
    expect(validate(schema, parse(`{ ${types} }`), [appServicesLimits]).map((error) => error.message)).toEqual(['max number of queries reached']);
    const typenames = Array.from({ length: 50 }, (_unused, i) => `n${i}: __typename`).join(' ');
    expect(validate(schema, parse(`{ ${typenames} a item { name } }`), [appServicesLimits])).toEqual([]);
  });

  it('refuses an operation whose response would hold more fields than the bound, counting aliases apart', () => {
    const names = (n: number) => Array.from({ length: n }, (_unused, i) => `n${i}: name`).join(' ');
    expect(validate(schema, parse(`{ item { ${names(MAX_SELECTIONS - 1)} } }`), [appServicesLimits])).toEqual([]);
    expect(validate(schema, parse(`{ item { ${names(MAX_SELECTIONS)} } }`), [appServicesLimits]).map((error) => error.message)).toEqual([MAX_SELECTIONS_MESSAGE]);
    // Through a fragment spread in several aliased places: each place is its own part of the response.
    const tree = buildSchema('type Item { name: String, child: Item } type Query { item: Item }');
    const places = Array.from({ length: 40 }, (_unused, i) => `c${i}: child { ...Names }`).join(' ');
    expect(validate(tree, parse(`{ item { ${places} } } fragment Names on Item { ${names(60)} }`), [appServicesLimits]).map((error) => error.message)).toEqual([MAX_SELECTIONS_MESSAGE]);
    expect(validate(tree, parse(`{ item { ${places.replace(/c\d+: /g, '')} } } fragment Names on Item { ${names(60)} }`), [appServicesLimits])).toEqual([]);
  });

  it('merges a fragment spread again and again into one place, as execution does', () => {
    expect(validate(schema, parse(fragmentBomb(30, 'item { name } a')), [appServicesLimits])).toEqual([]);
  });
});
