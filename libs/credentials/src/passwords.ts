import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { LoginThrottledError } from './login-throttle';

// scrypt is memory-hard and ships with Node: N=2^15, r=8 costs 32 MiB and about 50 ms per hash here.
const cost = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } satisfies ScryptOptions;
const keyLength = 32;

/**
 * scrypt runs on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), the pool file
 * I/O also uses: the embedded datastore's log appends and fsyncs wait behind every hash running there. So
 * at most `running` hashes run at once, process-wide (client logins, admin logins, registrations, API
 * keys), leaving the rest of the pool to storage. Up to `waiting` more queue, each for at most `maxWaitMs`;
 * beyond that a hash is refused with 429 rather than queued behind a flood.
 */
class HashingSlots {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(
    private readonly running: number,
    private readonly waiting: number,
    private readonly maxWaitMs: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.running) await this.wait();
    else this.active += 1;
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      // The slot passes straight to the next in line, so `active` still counts it.
      if (next) next();
      else this.active -= 1;
    }
  }

  private wait(): Promise<void> {
    if (this.queue.length >= this.waiting) return Promise.reject(busy());
    return new Promise<void>((resume, refuse) => {
      const entry = (): void => {
        clearTimeout(timer);
        resume();
      };
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(entry), 1);
        refuse(busy());
      }, this.maxWaitMs);
      this.queue.push(entry);
    });
  }
}

function busy(): LoginThrottledError {
  return new LoginThrottledError('too many logins at once; try again later');
}

const slots = new HashingSlots(2, 16, 10_000);

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return slots.run(
    () =>
      new Promise((resolve, reject) => {
        scrypt(password.normalize('NFKC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key)));
      }),
  );
}

/** `scrypt$N$r$p$<salt b64>$<hash b64>`: self-describing, so the cost can rise without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

/** Throws LoginThrottledError (429) when too many hashes are already running and waiting. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = encoded.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p), maxmem: cost.maxmem });
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A random password for generated credentials: 24 characters from a URL-safe alphabet. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
