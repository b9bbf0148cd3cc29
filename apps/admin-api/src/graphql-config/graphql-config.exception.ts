import { CodedError } from '@tessera/domain';

/** Errors of the GraphQL configuration endpoints that the admin API's shared codes do not name. */
export enum GraphqlConfigErrorCode {
  CustomResolverNotFound = 'CustomResolverNotFound',
  CustomResolverAlreadyExists = 'CustomResolverAlreadyExists',
}

const statuses: Record<GraphqlConfigErrorCode, number> = {
  [GraphqlConfigErrorCode.CustomResolverNotFound]: 404,
  [GraphqlConfigErrorCode.CustomResolverAlreadyExists]: 409,
};

export class GraphqlConfigError extends CodedError<GraphqlConfigErrorCode> {
  constructor(code: GraphqlConfigErrorCode, message: string) {
    super(code, message, statuses);
  }
}
