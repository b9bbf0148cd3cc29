import { type Document, isDuplicateKeyError } from '@tessera/datastore';
import { randomBytes } from 'node:crypto';
import { deriveSigningKey } from '@tessera/credentials';
import { bytesOf, type PlatformDatabase } from './platform-database';
import { type SecretsCipher } from './secrets-cipher';

/**
 * HMAC signing keys, one per purpose (`admin`, or `app-<id>` for an app's user tokens), so a key can be
 * rotated or revoked without touching the others.
 *
 * With a master key (TESSERA_SIGNING_KEY, shared by every replica of a distributed deployment) nothing is
 * stored: each purpose's key is derived from the master key with HKDF-SHA256, the purpose as `info`.
 * Without one, a random key is created on first use and kept in the platform database (`signing_keys`),
 * sealed with the secrets key (`sealed`, never in clear; a key stored in clear by an earlier release is
 * read as it is until `sealStored` rewrites it at boot); replicas creating the same key at once agree on
 * the first one written.
 */
export class SigningKeyStore {
  private readonly cache = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly db: PlatformDatabase,
    private readonly cipher: SecretsCipher,
    private readonly masterKey?: Buffer,
  ) {}

  get(name: string): Promise<Buffer> {
    let key = this.cache.get(name);
    if (!key) {
      key = this.load(name);
      this.cache.set(name, key);
      key.catch(() => this.cache.delete(name));
    }
    return key;
  }

  private async load(name: string): Promise<Buffer> {
    if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`invalid key name '${name}'`);
    if (this.masterKey) return deriveSigningKey(this.masterKey, name);
    const keys = await this.db.collection('signing_keys');
    const stored = await keys.findOne({ _id: name });
    if (stored) return this.keyOf(stored);
    try {
      await keys.insertOne({ _id: name, sealed: { ...this.cipher.seal(randomBytes(32), keyContext(name)) }, created: new Date() });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    const created = await keys.findOne({ _id: name });
    if (!created) throw new Error(`signing key '${name}' vanished while it was created`);
    return this.keyOf(created);
  }

  /** Seals keys still in clear and reseals those of an older secrets key; returns how many it rewrote. */
  async sealStored(): Promise<number> {
    const keys = await this.db.collection('signing_keys');
    let rewritten = 0;
    for (const stored of await keys.find({}).toArray()) {
      if (stored['sealed'] !== undefined && !this.cipher.isStale(stored['sealed'])) continue;
      const name = String(stored['_id']);
      const sealed = { ...this.cipher.seal(this.keyOf(stored), keyContext(name)) };
      const filter = stored['sealed'] !== undefined ? { _id: name, 'sealed.kid': (stored['sealed'] as { kid: string }).kid } : { _id: name, key: { $exists: true } };
      rewritten += (await keys.updateOne(filter, { $set: { sealed }, $unset: { key: '' } })).modifiedCount;
    }
    return rewritten;
  }

  private keyOf(stored: Document): Buffer {
    const name = String(stored['_id']);
    if (stored['sealed'] !== undefined) return this.cipher.open(stored['sealed'], keyContext(name));
    return Buffer.from(bytesOf(stored['key']));
  }
}

function keyContext(name: string): string {
  return `signing_keys:${name}`;
}
