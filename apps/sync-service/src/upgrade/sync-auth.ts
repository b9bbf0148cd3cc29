/**
 * Checks the `baas_at` access token of a sync upgrade the way the client API checks bearer tokens: the
 * app's own key, an access token of that app, a live refresh session and an enabled user. Answers with
 * the HTTP status realm-core reacts to (401: refresh the user and retry; 403: log the user out).
 */
import { verifyJwt } from '@tessera/credentials';
import { type AppUserStore, type SigningKeyStore } from '@tessera/platform';

/** The user's id only: what permissions see of the user is loaded afresh at each BIND. */
export type SyncAuthResult = { ok: true; userId: string } | { ok: false; status: 401 | 403; message: string };

interface AccessClaims {
  sub: string;
  typ?: unknown;
  baas_app_id?: unknown;
  baas_session_id?: unknown;
}

export async function authenticateSyncUser(token: string | undefined, appId: string, keys: SigningKeyStore, users: AppUserStore): Promise<SyncAuthResult> {
  if (!token) return { ok: false, status: 401, message: 'missing access token' };
  const verified = verifyJwt(token, await keys.get(`app-${appId}`));
  if (!verified.valid) return { ok: false, status: 401, message: verified.reason === 'expired' ? 'access token expired' : 'invalid session' };
  const claims = verified.claims as AccessClaims;
  if (claims.typ !== 'access' || claims.baas_app_id !== appId || typeof claims.baas_session_id !== 'string') {
    return { ok: false, status: 401, message: 'invalid session' };
  }
  // A disabled user is told so (403: the client logs out) even though disabling also ended its sessions.
  const user = await users.findUser(claims.sub);
  if (!user) return { ok: false, status: 401, message: 'user not found' };
  if (user.disabled) return { ok: false, status: 403, message: 'user disabled' };
  const session = await users.findSession(claims.baas_session_id);
  if (!session || session.userId !== claims.sub || session.expiresAt.getTime() <= Date.now()) return { ok: false, status: 401, message: 'invalid session' };
  return { ok: true, userId: user._id };
}
