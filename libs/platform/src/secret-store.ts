import { type Document, isDuplicateKeyError } from '@tessera/datastore';
import { TesseraError } from '@tessera/domain';
import { newObjectIdHex } from './ids';
import { type PlatformDatabase } from './platform-database';

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
 * (`values()`), never through a listing.
 */
export class SecretStore {
  constructor(private readonly db: PlatformDatabase) {}

  async list(appId: string): Promise<SecretSummary[]> {
    const found = await (await this.db.collection('secrets')).find({ app_id: appId }, { name: 1 }).sort({ name: 1 }).toArray();
    return found.map((secret) => ({ _id: String(secret['_id']), name: String(secret['name']) }));
  }

  async create(appId: string, name: unknown, value: unknown): Promise<SecretSummary> {
    const checkedName = checkName(name);
    const secret = { _id: newObjectIdHex(), name: checkedName };
    try {
      await (await this.db.collection('secrets')).insertOne({ ...secret, app_id: appId, value: stringValue(value) });
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
    if (change.value !== undefined) set['value'] = stringValue(change.value);
    const filter = { app_id: appId, $or: [{ _id: id }, { name: id }] };
    let matched: number;
    try {
      matched = Object.keys(set).length === 0 ? await secrets.countDocuments(filter) : (await secrets.updateOne(filter, { $set: set })).matchedCount;
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
      await secrets.updateOne({ app_id: appId, name: checkName(name) }, { $set: { value }, $setOnInsert: { _id: newObjectIdHex() } }, { upsert: true });
    }
  }

  async remove(appId: string, id: string): Promise<void> {
    const removed = await (await this.db.collection('secrets')).deleteOne({ app_id: appId, $or: [{ _id: id }, { name: id }] });
    if (removed.deletedCount === 0) throw new SecretStoreError(SecretStoreErrorCode.SecretNotFound, `secret not found: '${id}'`);
  }

  /** Secret name -> value, for the services that resolve `secret_config` and `from_secret` values. */
  async values(appId: string): Promise<Record<string, string>> {
    const found = await (await this.db.collection('secrets')).find({ app_id: appId }).toArray();
    return Object.fromEntries(found.map((secret) => [String(secret['name']), String(secret['value'])]));
  }
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
