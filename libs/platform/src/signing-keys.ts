import { hkdfSync, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readJsonFile, writeJsonFile } from './json-file';

/**
 * HMAC signing keys kept in the data directory (`platform/keys/<name>.json`, mode 0600), created on first
 * use. One key per purpose (`admin`, or `app-<id>` for an app's user tokens), so a key can be rotated or
 * revoked without touching the others.
 *
 * With a master key (TESSERA_SIGNING_KEY, shared by every replica of a distributed deployment) no file is
 * read or written: each purpose's key is derived from the master key with HKDF-SHA256, the purpose as `info`.
 */
export class SigningKeyStore {
  private readonly cache = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly dataDir: string,
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
    if (this.masterKey) return Buffer.from(hkdfSync('sha256', this.masterKey, 'tessera-signing-keys', name, 32));
    const path = join(this.dataDir, 'platform', 'keys', `${name}.json`);
    const stored = await readJsonFile<{ key: string }>(path);
    if (stored) return Buffer.from(stored.key, 'base64');
    const key = randomBytes(32);
    await writeJsonFile(path, { key: key.toString('base64'), created: new Date().toISOString() });
    return key;
  }
}
