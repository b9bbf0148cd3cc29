/**
 * The server side of SCRAM-SHA-256 (RFC 5802/7677) as MongoDB runs it over `saslStart`/`saslContinue`:
 * one configured user whose password is never kept, only its salted keys. Written from the RFCs. The
 * password is taken as given (the driver applies SASLprep, which leaves ASCII passwords unchanged).
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

export const SCRAM_SHA_256 = 'SCRAM-SHA-256';
/** The driver refuses fewer than 4096 iterations. */
const iterations = 15_000;

export interface ScramCredential {
  user: string;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

const hmac = (key: Buffer, data: string | Buffer): Buffer => createHmac('sha256', key).update(data).digest();
const sha256 = (data: Buffer): Buffer => createHash('sha256').update(data).digest();

/** The keys a server keeps for `user` with `password` (the password itself is not kept). */
export function scramCredential(user: string, password: string): ScramCredential {
  const salt = randomBytes(28);
  const salted = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, 32, 'sha256');
  return { user, salt, storedKey: sha256(hmac(salted, 'Client Key')), serverKey: hmac(salted, 'Server Key') };
}

/** `a=b,c=d` attributes of a SCRAM message. */
function attributes(message: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(',')) {
    const at = part.indexOf('=');
    if (at > 0) out.set(part.slice(0, at), part.slice(at + 1));
  }
  return out;
}

/** SCRAM's saslname decoding: `=2C` is a comma and `=3D` an equals sign. */
function decodeName(name: string): string {
  return name.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

export class ScramError extends Error {}

/** One conversation: `start` answers the client-first message, `finish` checks the proof and signs. */
export class ScramConversation {
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';

  /** The user name the client sent (decoded), once the conversation started. */
  userName = '';

  /** `acceptsUser`: which user names the credential authenticates (the configured one by default). */
  constructor(
    private readonly credential: ScramCredential,
    private readonly acceptsUser: (name: string) => boolean = (name) => name === credential.user,
  ) {}

  start(clientFirst: string): string {
    // gs2 header: no channel binding (`n,,`), or `y,,` (the client could but believes the server cannot).
    const match = /^[ny],(?:a=[^,]*)?,(.*)$/.exec(clientFirst);
    if (!match) throw new ScramError('malformed SCRAM client-first message');
    this.clientFirstBare = match[1];
    const attrs = attributes(this.clientFirstBare);
    const user = attrs.get('n');
    const clientNonce = attrs.get('r');
    if (user === undefined || !clientNonce) throw new ScramError('malformed SCRAM client-first message');
    // An unknown user goes through the same exchange and fails at the proof, so names cannot be probed.
    this.userName = decodeName(user);
    this.unknownUser = !this.acceptsUser(this.userName);
    this.nonce = clientNonce + randomBytes(24).toString('base64');
    this.serverFirst = `r=${this.nonce},s=${this.credential.salt.toString('base64')},i=${iterations}`;
    return this.serverFirst;
  }

  private unknownUser = true;

  /** Checks the client's proof; answers the server signature (`v=...`). */
  finish(clientFinal: string): string {
    if (!this.serverFirst) throw new ScramError('SCRAM conversation not started');
    const proofAt = clientFinal.lastIndexOf(',p=');
    if (proofAt < 0) throw new ScramError('malformed SCRAM client-final message');
    const withoutProof = clientFinal.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    if (attrs.get('r') !== this.nonce) throw new ScramError('SCRAM nonce mismatch');
    const proof = Buffer.from(clientFinal.slice(proofAt + 3), 'base64');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const signature = hmac(this.credential.storedKey, authMessage);
    if (proof.length !== signature.length) throw new ScramError('Authentication failed.');
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i] ^ signature[i];
    if (!timingSafeEqual(sha256(clientKey), this.credential.storedKey) || this.unknownUser) throw new ScramError('Authentication failed.');
    return `v=${hmac(this.credential.serverKey, authMessage).toString('base64')}`;
  }
}
