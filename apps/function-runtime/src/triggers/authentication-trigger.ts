/**
 * Authentication triggers as App Services defines them (`triggers/<name>.json`, `type: "AUTHENTICATION"`,
 * `config.operation_type` CREATE, LOGIN or DELETE, `config.providers`): which auth events fire which
 * function, and the auth event the function receives. Pure: no I/O, no transport.
 */
import { type AppConfig, type Trigger } from '@tessera/app-config';
import { type AppAuthEvent } from '@tessera/contracts';
import { EJSON } from 'bson';
import { triggerFunctionName } from './trigger-function';

export interface AuthenticationTrigger {
  name: string;
  id?: string;
  functionName: string;
  operationType: AppAuthEvent['operationType'];
  /** Provider types it listens to; empty: every provider. */
  providers: ReadonlySet<string>;
}

const cache = new WeakMap<AppConfig, AuthenticationTrigger[]>();

/** The enabled authentication triggers of a deployed app (parsed once per deployment). */
export function authenticationTriggers(config: AppConfig): AuthenticationTrigger[] {
  let triggers = cache.get(config);
  if (!triggers) {
    triggers = config.triggers.filter((trigger) => trigger.type === 'AUTHENTICATION' && trigger.disabled !== true).flatMap(parse);
    cache.set(config, triggers);
  }
  return triggers;
}

function parse(trigger: Trigger): AuthenticationTrigger[] {
  const config = (trigger.config ?? {}) as Record<string, unknown>;
  const functionName = triggerFunctionName(trigger);
  const operation = typeof config['operation_type'] === 'string' ? config['operation_type'].toUpperCase() : undefined;
  if (typeof functionName !== 'string' || (operation !== 'CREATE' && operation !== 'LOGIN' && operation !== 'DELETE')) return [];
  const providers = Array.isArray(config['providers']) ? config['providers'].filter((provider): provider is string => typeof provider === 'string') : [];
  return [{ name: trigger.name, ...(trigger.id ? { id: trigger.id } : {}), functionName, operationType: operation, providers: new Set(providers) }];
}

/** True when `trigger` fires on `event`: its operation, and one of its providers (or any, when it names none). */
export function firesOn(trigger: AuthenticationTrigger, event: AppAuthEvent): boolean {
  if (trigger.operationType !== event.operationType) return false;
  return trigger.providers.size === 0 || event.providers.some((provider) => trigger.providers.has(provider));
}

/** The user as a function sees it (`context.user`'s shape, BSON-typed metadata). */
export function eventUser(event: AppAuthEvent): Record<string, unknown> {
  const { user } = event;
  return {
    id: user.id,
    type: user.type ?? 'normal',
    data: user.data ? EJSON.deserialize(user.data, { relaxed: false }) : {},
    ...(user.custom_data ? { custom_data: EJSON.deserialize(user.custom_data, { relaxed: false }) } : {}),
    identities: user.identities ?? [],
  };
}

/** App Services' auth event, the argument of an authentication trigger's function. */
export function authTriggerEvent(event: AppAuthEvent): Record<string, unknown> {
  return { operationType: event.operationType, providers: event.providers, user: eventUser(event), time: new Date(event.time) };
}

/** The custom user data's user creation function (`on_user_creation_function_name`), when configured. */
export function userCreationFunction(config: AppConfig): string | undefined {
  const custom = config.settings.custom_user_data_config;
  const name = custom?.['on_user_creation_function_name'];
  return custom?.enabled === true && typeof name === 'string' && name !== '' ? name : undefined;
}
