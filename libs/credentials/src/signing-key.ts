import { hkdfSync } from 'node:crypto';

/** The key of one purpose derived from the master key (HKDF-SHA256, the purpose as `info`). */
export function deriveSigningKey(masterKey: Buffer, name: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, 'tessera-signing-keys', name, 32));
}
