import { randomBytes } from 'node:crypto';
import { ObjectId } from 'bson';

/** A new 24-hex object id, as App Services uses for `_id` fields. */
export function newObjectIdHex(): string {
  return new ObjectId().toHexString();
}

const alphabet = 'abcdefghijklmnopqrstuvwxyz';

/** The client app id users put in their SDK configuration: `<name>-<5 lower-case letters>`. */
export function newClientAppId(name: string): string {
  const bytes = randomBytes(5);
  let suffix = '';
  for (const byte of bytes) suffix += alphabet[byte % alphabet.length];
  return `${name.toLowerCase()}-${suffix}`;
}
