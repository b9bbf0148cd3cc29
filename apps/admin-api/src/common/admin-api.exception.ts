import { CodedError, type ErrorBody } from '@tessera/domain';
import type { ConfigViolation } from '@tessera/app-config';

export enum AdminApiErrorCode {
  BadRequest = 'BadRequest',
  InvalidParameter = 'InvalidParameter',
  InvalidAppName = 'InvalidAppName',
  AppAlreadyExists = 'AppAlreadyExists',
  TemplateNotFound = 'TemplateNotFound',
  GroupNotFound = 'GroupNotFound',
  ServiceNotFound = 'ServiceNotFound',
  AuthProviderNotFound = 'AuthProviderNotFound',
  RuleNotFound = 'RuleNotFound',
  TriggerNotFound = 'TriggerNotFound',
  UserNotFound = 'UserNotFound',
  SessionNotFound = 'SessionNotFound',
  UserAlreadyExists = 'UserAlreadyExists',
  APIKeyNotFound = 'APIKeyNotFound',
  APIKeyAlreadyExists = 'APIKeyAlreadyExists',
  ServiceAlreadyExists = 'ServiceAlreadyExists',
  FunctionNotFound = 'FunctionNotFound',
  ValueNotFound = 'ValueNotFound',
  EndpointNotFound = 'EndpointNotFound',
  LogForwarderNotFound = 'LogForwarderNotFound',
  DeploymentNotFound = 'DeploymentNotFound',
  DeploymentMigrationNotFound = 'DeploymentMigrationNotFound',
  AccessListEntryNotFound = 'AccessListEntryNotFound',
  InvalidConfiguration = 'InvalidConfiguration',
  PartitionSyncNotAllowed = 'PartitionSyncNotAllowed',
  SyncRulesLocked = 'SyncRulesLocked',
  NotImplemented = 'NotImplemented',
  SyncServiceUnavailable = 'SyncServiceUnavailable',
  /** Another service this request needs (the client API for `send_confirm`) did not answer. */
  ServiceUnavailable = 'ServiceUnavailable',
  ClientFileNotFound = 'ClientFileNotFound',
  EnvironmentValueNotFound = 'EnvironmentValueNotFound',
  EnvironmentValueAlreadyExists = 'EnvironmentValueAlreadyExists',
  CustomResolverNotFound = 'CustomResolverNotFound',
  CustomResolverAlreadyExists = 'CustomResolverAlreadyExists',
  IncomingWebhookNotFound = 'IncomingWebhookNotFound',
  IncomingWebhookAlreadyExists = 'IncomingWebhookAlreadyExists',
  SchemaNotFound = 'SchemaNotFound',
  SchemaAlreadyExists = 'SchemaAlreadyExists',
  CommandNotFound = 'CommandNotFound',
}

const statuses: Record<AdminApiErrorCode, number> = {
  [AdminApiErrorCode.BadRequest]: 400,
  [AdminApiErrorCode.InvalidParameter]: 400,
  [AdminApiErrorCode.InvalidAppName]: 400,
  [AdminApiErrorCode.AppAlreadyExists]: 409,
  [AdminApiErrorCode.TemplateNotFound]: 400,
  [AdminApiErrorCode.GroupNotFound]: 404,
  [AdminApiErrorCode.ServiceNotFound]: 404,
  [AdminApiErrorCode.AuthProviderNotFound]: 404,
  [AdminApiErrorCode.RuleNotFound]: 404,
  [AdminApiErrorCode.TriggerNotFound]: 404,
  [AdminApiErrorCode.UserNotFound]: 404,
  [AdminApiErrorCode.SessionNotFound]: 404,
  [AdminApiErrorCode.UserAlreadyExists]: 409,
  [AdminApiErrorCode.APIKeyNotFound]: 404,
  [AdminApiErrorCode.APIKeyAlreadyExists]: 409,
  [AdminApiErrorCode.ServiceAlreadyExists]: 409,
  [AdminApiErrorCode.FunctionNotFound]: 404,
  [AdminApiErrorCode.ValueNotFound]: 404,
  [AdminApiErrorCode.EndpointNotFound]: 404,
  [AdminApiErrorCode.LogForwarderNotFound]: 404,
  [AdminApiErrorCode.DeploymentNotFound]: 404,
  [AdminApiErrorCode.DeploymentMigrationNotFound]: 404,
  [AdminApiErrorCode.AccessListEntryNotFound]: 404,
  [AdminApiErrorCode.InvalidConfiguration]: 400,
  [AdminApiErrorCode.PartitionSyncNotAllowed]: 400,
  [AdminApiErrorCode.SyncRulesLocked]: 409,
  [AdminApiErrorCode.NotImplemented]: 501,
  [AdminApiErrorCode.SyncServiceUnavailable]: 503,
  [AdminApiErrorCode.ServiceUnavailable]: 503,
  [AdminApiErrorCode.ClientFileNotFound]: 404,
  [AdminApiErrorCode.EnvironmentValueNotFound]: 404,
  [AdminApiErrorCode.EnvironmentValueAlreadyExists]: 409,
  [AdminApiErrorCode.CustomResolverNotFound]: 404,
  [AdminApiErrorCode.CustomResolverAlreadyExists]: 409,
  [AdminApiErrorCode.IncomingWebhookNotFound]: 404,
  [AdminApiErrorCode.IncomingWebhookAlreadyExists]: 409,
  [AdminApiErrorCode.SchemaNotFound]: 404,
  [AdminApiErrorCode.SchemaAlreadyExists]: 409,
  [AdminApiErrorCode.CommandNotFound]: 404,
};

/**
 * Errors of the admin API. When a configuration is refused, `violations` lists every problem with the
 * file and the JSON path it is in, and the wire body carries them next to `error` and `error_code`.
 */
export class AdminApiError extends CodedError<AdminApiErrorCode> {
  constructor(
    code: AdminApiErrorCode,
    message: string,
    readonly violations: readonly ConfigViolation[] = [],
  ) {
    super(code, message, statuses);
  }

  override toBody(link?: string): ErrorBody & { violations?: readonly ConfigViolation[] } {
    const body = super.toBody(link);
    return this.violations.length ? { ...body, violations: this.violations } : body;
  }
}
