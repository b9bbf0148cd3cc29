import { z } from 'zod';
import type { AppUser } from './app-users';

/**
 * Reading an App Services user listing (the admin API's `GET /groups/{g}/apps/{a}/users` items, or a JSON
 * export of it) into users to import with their ids and identities. Pure: the store writes them
 * (`AppUserStore.importUser`). App Services never exported password hashes nor API key secrets; a listing
 * may carry `api_keys: [{ _id, name, key }]` per user (a Tessera extension) for keys whose secret the
 * operator still has, so servers holding them keep logging in.
 */

/** At most this many users per import request: the CLI sends a larger listing in batches. */
export const MAX_IMPORT_BATCH = 1000;

const objectIdHex = z.string().regex(/^[0-9a-fA-F]{24}$/, 'must be a 24-character hex ObjectId');
/** App Services gave dates as seconds since the epoch (its listing) or, in some exports, ISO strings or EJSON dates. */
const date = z.union([z.number().nonnegative(), z.string().datetime({ offset: true }), z.object({ $date: z.union([z.string(), z.number(), z.object({ $numberLong: z.string() })]) })]);

const identitySchema = z.object({
  id: z.string().min(1).max(1024),
  provider_type: z.string().min(1).max(64),
  provider_id: z.string().min(1).max(64),
  provider_data: z.record(z.unknown()).optional(),
});

const apiKeySchema = z.object({ _id: objectIdHex, name: z.string().min(1).max(256), key: z.string().min(16).max(1024), disabled: z.boolean().optional() });

const userSchema = z.object({
  _id: objectIdHex,
  identities: z.array(identitySchema).min(1).max(64),
  type: z.enum(['normal', 'server']).default('normal'),
  data: z.record(z.unknown()).default({}),
  creation_date: date.optional(),
  last_authentication_date: date.optional(),
  disabled: z.boolean().default(false),
  api_keys: z.array(apiKeySchema).max(64).optional(),
});

/** A user ready to store, and the API keys (with their secrets) that log in as it. */
export interface ImportedUser {
  user: AppUser;
  apiKeys: Array<{ _id: string; name: string; key: string; disabled: boolean }>;
}

export type ImportStatus = 'created' | 'unchanged' | 'conflict' | 'invalid';

/** One user's outcome, as the import reports it. */
export interface ImportResult {
  _id?: string;
  index: number;
  status: ImportStatus;
  error?: string;
}

/** The users of a listing: an array of users, or `{ users: [...] }`. Each item is checked on its own. */
export function parseUserListing(input: unknown): Array<{ index: number; imported?: ImportedUser; error?: string; _id?: string }> {
  const items = Array.isArray(input) ? input : typeof input === 'object' && input !== null && Array.isArray((input as { users?: unknown }).users) ? (input as { users: unknown[] }).users : undefined;
  if (!items) throw new TypeError('expected a JSON array of App Services users (or an object with a "users" array)');
  return items.map((item, index) => {
    const parsed = userSchema.safeParse(item);
    const _id = typeof item === 'object' && item !== null && typeof (item as { _id?: unknown })._id === 'string' ? (item as { _id: string })._id : undefined;
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { index, ...(_id ? { _id } : {}), error: `${issue?.path.join('.') || 'user'}: ${issue?.message ?? 'invalid'}` };
    }
    const value = parsed.data;
    const keys = new Set<string>();
    for (const identity of value.identities) {
      const key = `${identity.provider_type}|${identityId(identity)}`;
      if (keys.has(key)) return { index, _id: value._id, error: `identities: ${identity.provider_type} identity "${identity.id}" is listed twice` };
      keys.add(key);
    }
    const apiKeyIds = new Set(value.identities.filter((identity) => identity.provider_type === 'api-key').map((identity) => identity.id));
    const stray = value.api_keys?.find((key) => !apiKeyIds.has(key._id));
    if (stray) return { index, _id: value._id, error: `api_keys: key ${stray._id} is not one of the user's api-key identities` };
    const user: AppUser = {
      _id: value._id.toLowerCase(),
      type: value.type,
      identities: value.identities.map((identity) => ({ id: identityId(identity), provider_type: identity.provider_type, provider_id: identity.provider_id, ...(identity.provider_data ? { provider_data: identity.provider_data } : {}) })),
      data: value.data,
      disabled: value.disabled,
      createdAt: toDate(value.creation_date) ?? new Date(),
      ...(toDate(value.last_authentication_date) ? { lastLoginAt: toDate(value.last_authentication_date) } : {}),
    };
    return { index, _id: user._id, imported: { user, apiKeys: (value.api_keys ?? []).map((key) => ({ _id: key._id.toLowerCase(), name: key.name, key: key.key, disabled: key.disabled ?? false })) } };
  });
}

/**
 * The id Tessera knows an identity by. App Services gave email/password identities an internal id and the
 * email in `provider_data.email`; Tessera keys them by the email, which is what a login names.
 */
function identityId(identity: z.infer<typeof identitySchema>): string {
  const email = identity.provider_data?.['email'];
  return identity.provider_type === 'local-userpass' && typeof email === 'string' && email !== '' ? email : identity.id;
}

function toDate(value: z.infer<typeof date> | undefined): Date | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return value === 0 ? undefined : new Date(value * 1000);
  if (typeof value === 'string') return new Date(value);
  const raw = value.$date;
  const parsed = new Date(typeof raw === 'object' ? Number(raw.$numberLong) : raw);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}
