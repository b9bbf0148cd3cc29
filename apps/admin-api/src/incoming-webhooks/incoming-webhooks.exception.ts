import { CodedError } from '@tessera/domain';

export enum IncomingWebhooksErrorCode {
  IncomingWebhookNotFound = 'IncomingWebhookNotFound',
  IncomingWebhookAlreadyExists = 'IncomingWebhookAlreadyExists',
  SchemaNotFound = 'SchemaNotFound',
  SchemaAlreadyExists = 'SchemaAlreadyExists',
  CommandNotFound = 'CommandNotFound',
}

const statuses: Record<IncomingWebhooksErrorCode, number> = {
  [IncomingWebhooksErrorCode.IncomingWebhookNotFound]: 404,
  [IncomingWebhooksErrorCode.IncomingWebhookAlreadyExists]: 409,
  [IncomingWebhooksErrorCode.SchemaNotFound]: 404,
  [IncomingWebhooksErrorCode.SchemaAlreadyExists]: 409,
  [IncomingWebhooksErrorCode.CommandNotFound]: 404,
};

/** Errors of the incoming webhook, schema and service command endpoints, answered with App Services' error body. */
export class IncomingWebhooksError extends CodedError<IncomingWebhooksErrorCode> {
  constructor(code: IncomingWebhooksErrorCode, message: string) {
    super(code, message, statuses);
  }
}
