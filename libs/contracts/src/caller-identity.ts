// The two conversions of the one caller identity (schemas/caller.schema.ts): from the stored user record
// into the identity, once at the edge, and from the identity into the rules' `%%user`, once per identity.
import type { RuleUser } from '@tessera/rules';
import { EJSON, ObjectId } from 'bson';
import type { AppAuthEvent } from './schemas/apps-auth-event-occurred.schema';
import type { CallerUser } from './schemas/caller.schema';

/** What the identity is made from: the stored user record (@tessera/platform's AppUser has this shape). */
export interface CallerUserRecord {
  _id: string;
  type: 'normal' | 'server';
  data: Record<string, unknown>;
  identities: ReadonlyArray<{ id: string; provider_type: string }>;
}

/**
 * The caller identity of a stored user: metadata and custom user data (BSON values as the store gives them)
 * in canonical EJSON, identities reduced to what `context.user` shows. `customData` is the user's custom
 * data document when the app configures one (absent: `context.user.custom_data` is absent too).
 */
export function callerUserOf(user: CallerUserRecord, customData?: Record<string, unknown> | null): CallerUser {
  return {
    id: user._id,
    type: user.type,
    data: canonicalData(user.data),
    ...(customData ? { custom_data: canonicalData(customData) } : {}),
    identities: user.identities.map((identity) => ({ id: identity.id, provider_type: identity.provider_type })),
  };
}

// Most users (anonymous ones, every user of an app without metadata) have empty data: bson's EJSON converts
// even an empty document by a stringify-and-parse round trip, a visible share of a small request's CPU.
function isEmptyPlainObject(value: object): boolean {
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

function canonicalData(data: Record<string, unknown>): NonNullable<CallerUser['data']> {
  return isEmptyPlainObject(data) ? {} : EJSON.serialize(data, { relaxed: false });
}

function relaxedData(data: CallerUser['data']): Record<string, unknown> {
  if (!data || isEmptyPlainObject(data)) return {};
  return EJSON.deserialize(data, { relaxed: true }) as Record<string, unknown>;
}

const derived = new WeakMap<CallerUser, RuleUser>();

/**
 * The rules' `%%user`, derived from the caller identity: the one place where the identity changes shape
 * for the rules. `data` and `custom_data` come back from canonical EJSON to the values a document read
 * from the store holds (numbers as JS numbers), identities take the `providerType` key App Services
 * documents for `%%user.identities`, and the documented defaults are filled in (`type: normal`, empty
 * documents). The result is remembered per identity object: compiled rules remember request-level lookups
 * against the user object, and a function making many data calls keeps one. Treat both as immutable.
 */
export function ruleUserOf(user: CallerUser): RuleUser {
  let ruleUser = derived.get(user);
  if (!ruleUser) {
    ruleUser = {
      id: user.id,
      type: user.type ?? 'normal',
      data: relaxedData(user.data),
      custom_data: relaxedData(user.custom_data),
      identities: (user.identities ?? []).map((identity) => ({ id: identity.id, providerType: identity.provider_type })),
    };
    derived.set(user, ruleUser);
  }
  return ruleUser;
}

/** An auth event of `user` now (the `apps.auth-event.occurred` payload), with a fresh event id. */
export function authEventOf(appId: string, operationType: AppAuthEvent['operationType'], providers: readonly string[], user: CallerUserRecord): AppAuthEvent {
  return { appId, eventId: new ObjectId().toHexString(), operationType, providers: [...providers], user: callerUserOf(user), time: new Date().toISOString() };
}
