import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { TesseraError } from '@tessera/domain';
import { newObjectIdHex } from './ids';
import { readJsonFile, writeJsonFile } from './json-file';
import { hashPassword, verifyPassword } from './passwords';

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
 * apiKey) in `<dataDir>/platform/admin-api-keys.json`. Each key acts as the admin who created it.
 */
export class FileAdminApiKeyStore {
  constructor(private readonly dataDir: string) {}

  private get path(): string {
    return join(this.dataDir, 'platform', 'admin-api-keys.json');
  }

  private async read(): Promise<StoredKey[]> {
    return (await readJsonFile<StoredKey[]>(this.path)) ?? [];
  }

  async create(userId: string, name: unknown): Promise<AdminApiKey & { private_key: string }> {
    if (typeof name !== 'string' || !/^[A-Za-z0-9_ -]{1,64}$/.test(name)) throw new AdminApiKeyError(AdminApiKeyErrorCode.InvalidParameter, 'an API key needs a name of 1 to 64 letters, digits, spaces, underscores or hyphens');
    const keys = await this.read();
    if (keys.some((key) => key.user_id === userId && key.name === name)) throw new AdminApiKeyError(AdminApiKeyErrorCode.APIKeyAlreadyExists, `an API key named "${name}" already exists`);
    const privateKey = randomBytes(24).toString('base64url');
    const key: StoredKey = { _id: newObjectIdHex(), name, public_key: randomBytes(6).toString('hex'), user_id: userId, disabled: false, created: Math.floor(Date.now() / 1000), private_key_hash: await hashPassword(privateKey) };
    await writeJsonFile(this.path, [...keys, key]);
    return { ...summary(key), private_key: privateKey };
  }

  async list(userId: string): Promise<AdminApiKey[]> {
    return (await this.read()).filter((key) => key.user_id === userId).map(summary);
  }

  async remove(userId: string, id: string): Promise<void> {
    const keys = await this.read();
    const remaining = keys.filter((key) => !(key.user_id === userId && key._id === id));
    if (remaining.length === keys.length) throw new AdminApiKeyError(AdminApiKeyErrorCode.APIKeyNotFound, `API key not found: '${id}'`);
    await writeJsonFile(this.path, remaining);
  }

  /** The admin user id a key pair belongs to, or undefined when it does not match an enabled key. */
  async authenticate(publicKey: string, privateKey: string): Promise<string | undefined> {
    const key = (await this.read()).find((candidate) => candidate.public_key === publicKey && !candidate.disabled);
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
