import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Binary } from 'bson';
import type { Settings } from '@tessera/settings';
import { bytesOf } from './platform-database';

/** How a value is kept at rest: AES-256-GCM under the key `kid`, with its own random nonce. */
export interface SealedValue {
  /** Id of the key that sealed it (a hash of the key: names it without revealing it). */
  kid: string;
  iv: Binary;
  /** Ciphertext followed by the 16-byte authentication tag. */
  data: Binary;
}

/** The key file a standalone server generates on first start when TESSERA_SECRETS_KEY is not set. */
export const SECRETS_KEY_FILE = 'secrets.key';

export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsKeyError';
  }
}

/**
 * Encrypts what the platform keeps secret (secret values, generated signing keys) before it reaches the
 * platform database. The first key seals; every key opens, so a key can be rotated: set the new key first
 * and the old one after it (TESSERA_SECRETS_KEY=new,old); records are resealed with the new key at boot.
 * Each record is bound to where it belongs (`context`, as additional data): a sealed value copied to
 * another app or key name does not open.
 */
export class SecretsCipher {
  private readonly keys: ReadonlyMap<string, Buffer>;
  readonly currentKeyId: string;

  constructor(
    keys: readonly Buffer[],
    /** Where the keys come from, for messages: the setting or the key file. */
    readonly source: string,
  ) {
    const [current] = keys;
    this.keys = new Map(keys.map((key) => [keyIdOf(key), key]));
    this.currentKeyId = current ? keyIdOf(current) : '';
  }

  /** The cipher of a process that keeps no secrets (a distributed datastore service): every use throws. */
  static unavailable(reason: string): SecretsCipher {
    return new SecretsCipher([], reason);
  }

  /**
   * The cipher of a process: keys from TESSERA_SECRETS_KEY, or in standalone mode from the data directory's
   * key file, generated (0600) on first start. Distributed mode has the setting: loadSettings requires it.
   */
  static fromSettings(settings: Pick<Settings, 'secretsKeys' | 'dataDir' | 'mode'>): SecretsCipher {
    if (settings.secretsKeys && settings.secretsKeys.length > 0) return new SecretsCipher(settings.secretsKeys, 'TESSERA_SECRETS_KEY');
    if (settings.mode === 'distributed') throw new SecretsKeyError('TESSERA_SECRETS_KEY is required in distributed mode');
    const path = join(settings.dataDir, SECRETS_KEY_FILE);
    return new SecretsCipher([readOrCreateKeyFile(path)], `the key file ${path}`);
  }

  seal(plain: Uint8Array, context: string): SealedValue {
    if (!this.currentKeyId) throw new SecretsKeyError(`no secrets key: ${this.source}`);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(Buffer.from(context));
    const data = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return { kid: this.currentKeyId, iv: new Binary(iv), data: new Binary(data) };
  }

  sealText(plain: string, context: string): SealedValue {
    return this.seal(Buffer.from(plain, 'utf8'), context);
  }

  /** The plain bytes; a SecretsKeyError naming the setting when no key opens the value. */
  open(sealed: unknown, context: string): Buffer {
    const value = sealed as Partial<SealedValue> | null | undefined;
    if (!value || typeof value.kid !== 'string') throw new SecretsKeyError(`a stored secret (${context}) is not a sealed value`);
    const key = this.keys.get(value.kid);
    if (!key) {
      throw new SecretsKeyError(
        `stored secrets were encrypted with key id ${value.kid}, which ${this.source} (key id ${[...this.keys.keys()].join(', ')}) does not hold: start with the key they were written with (to rotate, set TESSERA_SECRETS_KEY=<new key>,<old key>)`,
      );
    }
    const iv = bytesOf(value.iv);
    const data = bytesOf(value.data);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]);
    } catch {
      throw new SecretsKeyError(`a stored secret (${context}) does not decrypt with key id ${value.kid} of ${this.source}: the record was altered or the key is not the one it was written with`);
    }
  }

  openText(sealed: unknown, context: string): string {
    return this.open(sealed, context).toString('utf8');
  }

  /** Whether a sealed value should be resealed: it was sealed with another (older) key. */
  isStale(sealed: unknown): boolean {
    return (sealed as Partial<SealedValue> | null | undefined)?.kid !== this.currentKeyId;
  }
}

/** The id of a key: the first 16 hex digits of a SHA-256 over it, under a label of its own. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('tessera-secrets-key-id\0').update(key).digest('hex').slice(0, 16);
}

/** Reads the standalone key file (base64 of 32 bytes), creating it 0600 if it does not exist yet. */
function readOrCreateKeyFile(path: string): Buffer {
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new SecretsKeyError(`cannot read the secrets key file ${path}: ${(error as Error).message}`);
  }
  if (text === undefined) {
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    const key = randomBytes(32);
    // Written whole under a private name, then linked into place: a crash leaves no half-written key file,
    // and of two processes starting on one data directory at once, the first link wins and both use it.
    const draft = `${path}.${process.pid}.tmp`;
    try {
      const fd = openSync(draft, 'w', 0o600);
      try {
        writeSync(fd, `${key.toString('base64')}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      linkSync(draft, path);
      return key;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new SecretsKeyError(`cannot create the secrets key file ${path}: ${(error as Error).message}`);
      text = readFileSync(path, 'utf8');
    } finally {
      rmSync(draft, { force: true });
    }
  }
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32 || !/^[A-Za-z0-9+/]{43}=$/.test(text.trim())) {
    throw new SecretsKeyError(`the secrets key file ${path} does not hold base64 of 32 bytes: restore it from a backup, or set TESSERA_SECRETS_KEY`);
  }
  return key;
}
