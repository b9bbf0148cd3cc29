import { OutboxFileMailer, type OutgoingMail } from '@tessera/graphql-gateway';
import { deriveSigningKey, signJwt } from '@tessera/credentials';
import * as Realm from 'realm-web';

/** The JSON payload of a JWT (no verification). */
export function claimsOf(token: string | null): Record<string, unknown> {
  if (!token) throw new Error('no token');
  const parts = token.split('.');
  expect(parts).toHaveLength(3);
  expect(parts[2]).not.toBe('');
  return JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** A master signing key for a test server (TESSERA_SIGNING_KEY), from which the test derives its keys. */
export const testSigningKey = Buffer.alloc(32, 42);

/** The per-app signing key of a server started with `testSigningKey`. */
export function appSigningKey(appId: string): Buffer {
  return deriveSigningKey(testSigningKey, `app-${appId}`);
}

/** The same access token, correctly signed, but expired a minute ago. */
export function expiredCopy(accessToken: string, key: Buffer): string {
  const claims = claimsOf(accessToken) as { sub: string; iat: number; exp: number };
  const now = Math.floor(Date.now() / 1000);
  return signJwt({ ...claims, iat: now - 3600, exp: now - 60 }, key);
}

/** The last email the server "sent" to `to` for `purpose`. */
export async function lastMail(dataDir: string, to: string, purpose: OutgoingMail['purpose']): Promise<OutgoingMail | undefined> {
  return (await OutboxFileMailer.read(dataDir)).filter((mail) => mail.to === to && mail.purpose === purpose).pop();
}

/** What a failed realm-web call carried: status and App Services error code. */
export async function failureOf(promise: Promise<unknown>): Promise<{ statusCode: number; errorCode: string; error: string }> {
  try {
    await promise;
  } catch (error) {
    const realmError = error as { statusCode?: number; errorCode?: string; error?: string; message?: string };
    return { statusCode: realmError.statusCode ?? 0, errorCode: realmError.errorCode ?? '', error: realmError.error ?? realmError.message ?? '' };
  }
  throw new Error('expected the call to fail');
}

export function realmApp(url: string, clientAppId: string): Realm.App {
  return new Realm.App({ id: clientAppId, baseUrl: url });
}

export { Realm };
