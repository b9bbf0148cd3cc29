/**
 * `%%user` of the partition permissions: the user as rules see it everywhere else (id, type, provider
 * metadata, identities, custom user data). One small derivation, so that it can follow the platform's one
 * caller type when there is one.
 */
import { type Document } from '@tessera/datastore';
import { type AppUser } from '@tessera/platform';
import { type RuleUser } from '@tessera/rules';

export function syncRuleUser(user: AppUser, customData: Document | null): RuleUser {
  return {
    id: user._id,
    type: user.type,
    data: { ...user.data },
    custom_data: customData ?? {},
    // `provider_type` is what App Services rules and functions read; `providerType` is the rules library's field.
    identities: user.identities.map((identity) => ({ id: identity.id, providerType: identity.provider_type, provider_type: identity.provider_type })),
  };
}
