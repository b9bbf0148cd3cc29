import { CodedError } from '@tessera/domain';
import { ENDPOINT_NOT_FOUND_CODE } from '../data-api/endpoint-routes';

/**
 * Refusals of HTTPS endpoints and incoming webhooks before their function runs. App Services answered both
 * surfaces from its webhook machinery, with the codes realm-core knows (IncomingWebhookNotFound,
 * IncomingWebhookAuthFailed); failures of the function itself keep the runtime's codes.
 */
export enum EndpointErrorCode {
  /** An unknown route or webhook: the one not-found answer of the endpoint tree. */
  NotFound = ENDPOINT_NOT_FOUND_CODE,
  AuthFailed = 'IncomingWebhookAuthFailed',
  MethodNotAllowed = 'MethodNotAllowed',
  InvalidSession = 'InvalidSession',
}

const statuses: Readonly<Record<EndpointErrorCode, number>> = {
  [EndpointErrorCode.NotFound]: 404,
  [EndpointErrorCode.AuthFailed]: 401,
  [EndpointErrorCode.MethodNotAllowed]: 405,
  [EndpointErrorCode.InvalidSession]: 401,
};

export class EndpointError extends CodedError<EndpointErrorCode> {
  constructor(code: EndpointErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, statuses, options);
  }
}
