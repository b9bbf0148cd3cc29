import { type Document, isDuplicateKeyError } from '@tessera/datastore';
import { TesseraError } from '@tessera/domain';
import { newObjectIdHex } from './ids';
import { type PlatformDatabase } from './platform-database';
import { type SecretsCipher } from './secrets-cipher';

/** A secret as the admin API lists it: never with its value. */
export interface SecretSummary {
  _id: string;
  name: string;
}

export enum SecretStoreErrorCode {
  SecretNotFound = 'SecretNotFound',
  SecretAlreadyExists = 'SecretAlreadyExists',
  InvalidSecretName = 'InvalidParameter',
}

export class SecretStoreError extends TesseraError {
  readonly httpStatus: number;
  constructor(
    readonly errorCode: SecretStoreErrorCode,
    message: string,
  ) {
    super(message);
    this.httpStatus = errorCode === SecretStoreErrorCode.SecretNotFound ? 404 : errorCode === SecretStoreErrorCode.SecretAlreadyExists ? 409 : 400;
  }
}

const secretName = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Secret values of each app (`secrets`, names unique per app), kept apart from its configuration. The
 * configuration only names secrets; values leave this store only towards the services that use them
 * (`values()`), never through a listing. Values are stored sealed (`sealed`, AES-256-GCM, bound to the
 * app), never in clear; a record still holding a clear `value` (written before encryption) is read as it
 * is until `sealStoredSecrets` rewrites it at boot.
 */
export class SecretStore {
  constructor(
    private readonly db: PlatformDatabase,
    private readonly cipher: SecretsCipher,
  ) {}

  async list(appId: string): Promise<SecretSummary[]> {
    const found = await (await this.db.collection('secrets')).find({ app_id: appId }, { name: 1 }).sort({ name: 1 }).toArray();
    return found.map((secret) => ({ _id: String(secret['_id']), name: String(secret['name']) }));
  }

  async create(appId: string, name: unknown, value: unknown): Promise<SecretSummary> {
    const checkedName = checkName(name);
    const secret = { _id: newObjectIdHex(), name: checkedName };
    try {
      await (await this.db.collection('secrets')).insertOne({ ...secret, app_id: appId, sealed: this.seal(appId, stringValue(value)) });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw alreadyExists(checkedName);
      throw error;
    }
    return secret;
  }

  async update(appId: string, id: string, change: { name?: unknown; value?: unknown }): Promise<void> {
    const secrets = await this.db.collection('secrets');
    const set: Document = {};
    if (change.name !== undefined) set['name'] = checkName(change.name);
    if (change.value !== undefined) set['sealed'] = this.seal(appId, stringValue(change.value));
    const filter = { app_id: appId, $or: [{ _id: id }, { name: id }] };
    let matched: number;
    try {
      matched = Object.keys(set).length === 0 ? await secrets.countDocuments(filter) : (await secrets.updateOne(filter, { $set: set, ...(set['sealed'] ? { $unset: { value: '' } } : {}) })).matchedCount;
    } catch (error) {
      if (isDuplicateKeyError(error)) throw alreadyExists(String(set['name']));
      throw error;
    }
    if (matched === 0) throw new SecretStoreError(SecretStoreErrorCode.SecretNotFound, `secret not found: '${id}'`);
  }

  /** Creates or replaces secrets by name (a push carrying secrets.json). */
  async upsert(appId: string, values: Record<string, string>): Promise<void> {
    const secrets = await this.db.collection('secrets');
    for (const [name, value] of Object.entries(values)) {
      await secrets.updateOne({ app_id: appId, name: checkName(name) }, { $set: { sealed: this.seal(appId, value) }, $unset: { value: '' }, $setOnInsert: { _id: newObjectIdHex() } }, { upsert: true });
    }
  }

  async remove(appId: string, id: string): Promise<void> {
    const removed = await (await this.db.collection('secrets')).deleteOne({ app_id: appId, $or: [{ _id: id }, { name: id }] });
    if (removed.deletedCount === 0) throw new SecretStoreError(SecretStoreErrorCode.SecretNotFound, `secret not found: '${id}'`);
  }

  /** Secret name -> value, for the services that resolve `secret_config` and `from_secret` values. */
  async values(appId: string): Promise<Record<string, string>> {
    const found = await (await this.db.collection('secrets')).find({ app_id: appId }).toArray();
    return Object.fromEntries(found.map((secret) => [String(secret['name']), this.valueOf(secret)]));
  }

  /** Seals records still in clear and reseals those of an older key; returns how many it rewrote. */
  async sealStored(): Promise<number> {
    const secrets = await this.db.collection('secrets');
    let rewritten = 0;
    for (const secret of await secrets.find({}).toArray()) {
      const appId = String(secret['app_id']);
      if (secret['sealed'] !== undefined && !this.cipher.isStale(secret['sealed'])) continue;
      const sealed = this.seal(appId, this.valueOf(secret));
      const filter = secret['sealed'] !== undefined ? { _id: secret['_id'], 'sealed.kid': (secret['sealed'] as { kid: string }).kid } : { _id: secret['_id'], value: { $exists: true } };
      rewritten += (await secrets.updateOne(filter, { $set: { sealed }, $unset: { value: '' } })).modifiedCount;
    }
    return rewritten;
  }

  private seal(appId: string, value: string): Document {
    return { ...this.cipher.sealText(value, secretContext(appId)) };
  }

  private valueOf(secret: Document): string {
    if (secret['sealed'] !== undefined) return this.cipher.openText(secret['sealed'], secretContext(String(secret['app_id'])));
    return String(secret['value']);
  }
}

function secretContext(appId: string): string {
  return `secrets:${appId}`;
}

function alreadyExists(name: string): SecretStoreError {
  return new SecretStoreError(SecretStoreErrorCode.SecretAlreadyExists, `secret already exists with name '${name}'`);
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || !secretName.test(name)) {
    throw new SecretStoreError(SecretStoreErrorCode.InvalidSecretName, `invalid secret name ${JSON.stringify(name)}: use 1 to 64 ASCII letters, digits, underscores or hyphens`);
  }
  return name;
}

function stringValue(value: unknown): string {
  if (typeof value === 'string') return value;
  throw new SecretStoreError(SecretStoreErrorCode.InvalidSecretName, 'secret value must be a string');
}
