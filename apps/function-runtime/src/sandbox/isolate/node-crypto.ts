/** require('crypto'): hashes and HMACs (computed on the host), random bytes and UUIDs. */
import { Buffer, toBuffer } from './buffer';
import { type RandomSource } from './codec';

const HASH_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'];

export interface Hash {
  update(data: unknown, encoding?: string): Hash;
  digest(encoding?: string): Buffer | string;
}

export type HostHash = (algorithm: string, dataBase64: string, keyBase64: string) => string;

export function hashing(hostHash: HostHash, random: RandomSource) {
  function makeHash(algorithm: unknown, key: Buffer | null): Hash {
    const alg = String(algorithm).toLowerCase().replace(/^sha-/, 'sha');
    if (!HASH_ALGORITHMS.includes(alg)) throw new Error('Digest method not supported: ' + String(algorithm) + ' (supported: ' + HASH_ALGORITHMS.join(', ') + ')');
    const chunks: Buffer[] = [];
    let done = false;
    const hash: Hash = {
      update(data, encoding) {
        if (done) throw new Error('Digest already called');
        chunks.push(toBuffer(data, encoding));
        return hash;
      },
      digest(encoding) {
        if (done) throw new Error('Digest already called');
        done = true;
        const out = Buffer.from(hostHash(alg, Buffer.concat(chunks).toString('base64'), key === null ? '' : key.toString('base64')), 'base64');
        return encoding === undefined || encoding === 'buffer' ? out : out.toString(encoding);
      },
    };
    return hash;
  }
  const cryptoModule = {
    createHash: (algorithm: unknown) => makeHash(algorithm, null),
    createHmac: (algorithm: unknown, key: unknown) => makeHash(algorithm, toBuffer(key)),
    randomBytes: (size: unknown) => {
      const n = Number(size);
      if (!(n >= 0 && n <= 65536)) throw new RangeError('randomBytes: size must be between 0 and 65536');
      return Buffer.from(random.getRandomValues(new Uint8Array(n)));
    },
    randomUUID: () => random.randomUUID(),
    getRandomValues: <T extends ArrayBufferView>(array: T) => random.getRandomValues(array),
    getHashes: () => HASH_ALGORITHMS.slice(),
  };
  return { makeHash, cryptoModule };
}
