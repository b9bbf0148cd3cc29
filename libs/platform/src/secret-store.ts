import { join } from 'node:path';
import { TesseraError } from '@tessera/domain';
import { newObjectIdHex } from './ids';
import { readJsonFile, writeJsonFile } from './json-file';

/** A secret as the admin API lists it: never with its value. */
export interface SecretSummary {
  _id: string;
  name: string;
}

interface StoredSecret extends SecretSummary {
  value: string;
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
 * Secret values of each app, kept apart from its configuration in `<dataDir>/platform/apps/<appId>/secrets.json`
 * (mode 0600). The configuration only names secrets; values leave this store only towards the services
 * that use them (`values()`), never through a listing.
 */
export class FileSecretStore {
  constructor(private readonly dataDir: string) {}

  private path(appId: string): string {
    return join(this.dataDir, 'platform', 'apps', appId, 'secrets.json');
  }

  private async read(appId: string): Promise<StoredSecret[]> {
    return (await readJsonFile<StoredSecret[]>(this.path(appId))) ?? [];
  }

  async list(appId: string): Promise<SecretSummary[]> {
    return (await this.read(appId)).map(({ _id, name }) => ({ _id, name })).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async create(appId: string, name: unknown, value: unknown): Promise<SecretSummary> {
    const checkedName = checkName(name);
    const secrets = await this.read(appId);
    if (secrets.some((secret) => secret.name === checkedName)) throw new SecretStoreError(SecretStoreErrorCode.SecretAlreadyExists, `secret already exists with name '${checkedName}'`);
    const secret: StoredSecret = { _id: newObjectIdHex(), name: checkedName, value: stringValue(value) };
    await writeJsonFile(this.path(appId), [...secrets, secret]);
    return { _id: secret._id, name: secret.name };
  }

  async update(appId: string, id: string, change: { name?: unknown; value?: unknown }): Promise<void> {
    const secrets = await this.read(appId);
    const secret = secrets.find((candidate) => candidate._id === id || candidate.name === id);
    if (!secret) throw new SecretStoreError(SecretStoreErrorCode.SecretNotFound, `secret not found: '${id}'`);
    if (change.name !== undefined) {
      const name = checkName(change.name);
      if (secrets.some((other) => other !== secret && other.name === name)) throw new SecretStoreError(SecretStoreErrorCode.SecretAlreadyExists, `secret already exists with name '${name}'`);
      secret.name = name;
    }
    if (change.value !== undefined) secret.value = stringValue(change.value);
    await writeJsonFile(this.path(appId), secrets);
  }

  /** Creates or replaces secrets by name (a push carrying secrets.json). */
  async upsert(appId: string, values: Record<string, string>): Promise<void> {
    const secrets = await this.read(appId);
    for (const [name, value] of Object.entries(values)) {
      const existing = secrets.find((secret) => secret.name === checkName(name));
      if (existing) existing.value = value;
      else secrets.push({ _id: newObjectIdHex(), name, value });
    }
    await writeJsonFile(this.path(appId), secrets);
  }

  async remove(appId: string, id: string): Promise<void> {
    const secrets = await this.read(appId);
    const remaining = secrets.filter((secret) => secret._id !== id && secret.name !== id);
    if (remaining.length === secrets.length) throw new SecretStoreError(SecretStoreErrorCode.SecretNotFound, `secret not found: '${id}'`);
    await writeJsonFile(this.path(appId), remaining);
  }

  /** Secret name -> value, for the services that resolve `secret_config` and `from_secret` values. */
  async values(appId: string): Promise<Record<string, string>> {
    return Object.fromEntries((await this.read(appId)).map((secret) => [secret.name, secret.value]));
  }
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
