import { hashPassword, verifyPassword } from '@tessera/credentials';
import { isDuplicateKeyError } from '@tessera/datastore';
import { randomBytes } from 'node:crypto';
import { TesseraError } from '@tessera/domain';
import { newObjectIdHex } from './ids';
import { type PlatformDatabase } from './platform-database';

/** An admin API key as listed: the private half is shown once, at creation, and stored only as a hash. */
export interface AdminApiKey {
  _id: string;
  name: string;
  public_key: string;
  user_id: string;
  disabled: boolean;
  /** Seconds since the epoch. */
  created: number;
}

interface StoredKey extends AdminApiKey {
  private_key_hash: string;
}

export enum AdminApiKeyErrorCode {
  InvalidParameter = 'InvalidParameter',
  APIKeyNotFound = 'APIKeyNotFound',
  APIKeyAlreadyExists = 'APIKeyAlreadyExists',
}

export class AdminApiKeyError extends TesseraError {
  readonly httpStatus: number;
  constructor(
    readonly errorCode: AdminApiKeyErrorCode,
    message: string,
  ) {
    super(message);
    this.httpStatus = errorCode === AdminApiKeyErrorCode.APIKeyNotFound ? 404 : errorCode === AdminApiKeyErrorCode.APIKeyAlreadyExists ? 409 : 400;
  }
}

/**
 * Admin API key pairs (the `mongodb-cloud` login of realm-cli: public key as username, private key as
 * apiKey) in `admin_api_keys`, public keys unique and names unique per admin. Each key acts as the admin
 * who created it.
 */
export class AdminApiKeyStore {
  constructor(private readonly db: PlatformDatabase) {}

  async create(userId: string, name: unknown): Promise<AdminApiKey & { private_key: string }> {
    if (typeof name !== 'string' || !/^[A-Za-z0-9_ -]{1,64}$/.test(name)) throw new AdminApiKeyError(AdminApiKeyErrorCode.InvalidParameter, 'an API key needs a name of 1 to 64 letters, digits, spaces, underscores or hyphens');
    const privateKey = randomBytes(24).toString('base64url');
    const key: StoredKey = { _id: newObjectIdHex(), name, public_key: randomBytes(6).toString('hex'), user_id: userId, disabled: false, created: Math.floor(Date.now() / 1000), private_key_hash: await hashPassword(privateKey) };
    try {
      await (await this.db.collection('admin_api_keys')).insertOne({ ...key });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new AdminApiKeyError(AdminApiKeyErrorCode.APIKeyAlreadyExists, `an API key named "${name}" already exists`);
      throw error;
    }
    return { ...summary(key), private_key: privateKey };
  }

  async list(userId: string): Promise<AdminApiKey[]> {
    const found = await (await this.db.collection('admin_api_keys')).find({ user_id: userId }).sort({ _id: 1 }).toArray();
    return (found as unknown as StoredKey[]).map(summary);
  }

  async remove(userId: string, id: string): Promise<void> {
    const removed = await (await this.db.collection('admin_api_keys')).deleteOne({ _id: id, user_id: userId });
    if (removed.deletedCount === 0) throw new AdminApiKeyError(AdminApiKeyErrorCode.APIKeyNotFound, `API key not found: '${id}'`);
  }

  /** The admin user id a key pair belongs to, or undefined when it does not match an enabled key. */
  async authenticate(publicKey: string, privateKey: string): Promise<string | undefined> {
    const key = (await (await this.db.collection('admin_api_keys')).findOne({ public_key: publicKey, disabled: false })) as StoredKey | null;
    if (!key) {
      await verifyPassword(privateKey, 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
      return undefined;
    }
    return (await verifyPassword(privateKey, key.private_key_hash)) ? key.user_id : undefined;
  }
}

function summary(key: StoredKey): AdminApiKey {
  const { private_key_hash: _hash, ...rest } = key;
  return rest;
}
