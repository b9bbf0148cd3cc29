import { TesseraError } from '@tessera/domain';
import { GraphQLError } from 'graphql/index.js';

export enum GraphqlErrorCode {
  /** More than 10 root resolvers in one operation. */
  MaxQueries = 'MaxQueriesReached',
  /** Relationships nested deeper than 5 levels. */
  MaxRelationshipDepth = 'MaxRelationshipDepthExceeded',
  /** A custom resolver's function could not run. */
  FunctionFailed = 'FunctionExecutionError',
  /** Unexpected failures; the message on the wire is generic. */
  Internal = 'InternalServerError',
}

/** App Services' documented limit messages (reference A.1). */
export const MAX_QUERIES_MESSAGE = 'max number of queries reached';
export const MAX_DEPTH_MESSAGE = 'max relationship depth exceeded';

/** graphql-js's message for a null answered for a non-null field (execute.js, completeValue). */
const NON_NULL_VIOLATION = /^Cannot return null for non-nullable field [_A-Za-z][_0-9A-Za-z]*\.[_A-Za-z][_0-9A-Za-z]*\.$/;

export class GraphqlEndpointError extends TesseraError {
  readonly httpStatus: number;
  constructor(
    readonly errorCode: GraphqlErrorCode | string,
    message: string,
    httpStatus = 400,
  ) {
    super(message);
    this.httpStatus = httpStatus;
  }
}

/**
 * What a resolver failure shows the client: errors that carry an App Services code (rules, data access,
 * functions) keep their client-safe message and put the code in `extensions.code`; anything else is an
 * internal error, logged by the caller and answered with a generic message.
 */
export function toClientError(error: unknown, onInternal: (error: unknown) => void): GraphQLError {
  if (error instanceof GraphQLError) {
    if (error.originalError === undefined || error.originalError instanceof GraphQLError) return error;
    const inner = toClientError(error.originalError, onInternal);
    return new GraphQLError(inner.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, extensions: { ...error.extensions, ...inner.extensions } });
  }
  if (error instanceof TesseraError || (error instanceof Error && typeof (error as { errorCode?: unknown }).errorCode === 'string')) {
    return new GraphQLError(error.message, { extensions: { code: (error as unknown as { errorCode: string }).errorCode } });
  }
  // graphql-js's own verdict on what a resolver answered (a null for a non-null field) comes as a plain Error
  // naming only the schema's field: the client's to see, as a GraphQL server shows it.
  if (error instanceof Error && NON_NULL_VIOLATION.test(error.message)) return new GraphQLError(error.message);
  onInternal(error);
  return new GraphQLError('internal server error', { extensions: { code: GraphqlErrorCode.Internal } });
}
