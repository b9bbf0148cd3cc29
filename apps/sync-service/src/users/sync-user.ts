/**
 * `%%user` of the partition permissions: the user as rules see it everywhere else, derived from the one
 * caller identity of the contracts (id, type, provider metadata, identities, custom user data).
 */
import { callerUserOf, ruleUserOf } from '@tessera/contracts';
import { type Document } from '@tessera/datastore';
import { type AppUser } from '@tessera/platform';
import { type RuleUser } from '@tessera/rules';

export function syncRuleUser(user: AppUser, customData: Document | null): RuleUser {
  return ruleUserOf(callerUserOf(user, customData));
}
