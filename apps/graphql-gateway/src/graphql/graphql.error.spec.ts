import { type GraphQLError, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, execute, parse } from 'graphql/index.js';
import { GraphqlErrorCode, toClientError } from './graphql.error';

describe('toClientError', () => {
  it("shows graphql-js's non-null violation, naming the field, and hides other plain errors", async () => {
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: {
          name: { type: new GraphQLNonNull(GraphQLString), resolve: () => null },
          secret: { type: GraphQLString, resolve: () => { throw new Error('connection to 10.0.0.7 refused'); } },
        },
      }),
    });
    const internal: unknown[] = [];
    const run = async (query: string): Promise<GraphQLError> => {
      const result = await execute({ schema, document: parse(query) });
      const [error] = result.errors ?? [];
      if (!error) throw new Error('expected an error');
      return toClientError(error, (e) => internal.push(e));
    };
    const violation = await run('{ name }');
    expect(violation.message).toBe('Cannot return null for non-nullable field Query.name.');
    expect(violation.extensions['code']).toBeUndefined();
    const hidden = await run('{ secret }');
    expect(hidden.message).toBe('internal server error');
    expect(hidden.extensions['code']).toBe(GraphqlErrorCode.Internal);
    expect(internal).toHaveLength(1);
    // Only graphql-js's exact wording passes: a resolver's own error that merely starts alike stays hidden.
    expect(toClientError(new Error('Cannot return null for non-nullable field Query.name. Also: password=x'), () => undefined).message).toBe('internal server error');
  });
});
