import { CodedError } from '@tessera/domain';

/**
 * Refusals of HTTPS endpoints and incoming webhooks before their function runs. App Services answered both
 * surfaces from its webhook machinery, with the codes realm-core knows (IncomingWebhookNotFound,
 * IncomingWebhookAuthFailed); failures of the function itself keep the runtime's codes.
 */
export enum EndpointErrorCode {
  NotFound = 'IncomingWebhookNotFound',
  AuthFailed = 'IncomingWebhookAuthFailed',
  MethodNotAllowed = 'MethodNotAllowed',
  InvalidSession = 'InvalidSession',
  UserNotFound = 'UserNotFound',
  BadRequest = 'BadRequest',
}

const statuses: Readonly<Record<EndpointErrorCode, number>> = {
  [EndpointErrorCode.NotFound]: 404,
  [EndpointErrorCode.AuthFailed]: 401,
  [EndpointErrorCode.MethodNotAllowed]: 405,
  [EndpointErrorCode.InvalidSession]: 401,
  [EndpointErrorCode.UserNotFound]: 401,
  [EndpointErrorCode.BadRequest]: 400,
};

export class EndpointError extends CodedError<EndpointErrorCode> {
  constructor(code: EndpointErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, statuses, options);
  }
}
