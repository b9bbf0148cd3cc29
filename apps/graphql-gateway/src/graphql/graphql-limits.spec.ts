import { buildSchema, parse, validate } from 'graphql/index.js';
import { appServicesLimits } from './graphql-limits';

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
    // Each of the 17 fragments: its two spread sites in the depth walk, one lookup in the root count.
    expect(visits).toBeLessThanOrEqual(3 * 17);
  });

  it('still counts root fields through fragments', () => {
    const roots = Array.from({ length: 11 }, (_unused, i) => `a${i}: a`).join(' ');
    const errors = validate(schema, parse(`{ ...R } fragment R on Query { ${roots} }`), [appServicesLimits]);
    expect(errors.map((error) => error.message)).toEqual(['max number of queries reached']);
  });
});
