// Checks of the bodies of the security and deployment-configuration endpoints: each answers the value to
// apply or throws the App Services error the client shows.

import { isRefreshTokenLifetime, REFRESH_TOKEN_LIFETIME_SECONDS } from '@tessera/app-config';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { isObject } from './environment-values';

/** `<scheme>://<host>[:port]`: what a browser sends in `Origin`, so no path, query, fragment or user. */
const ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@\s]+$/;

export function parseAllowedOrigins(body: unknown): string[] {
  if (!Array.isArray(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be a JSON array of origins');
  const origins: string[] = [];
  for (const origin of body) {
    if (typeof origin !== 'string' || !isOrigin(origin)) {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `invalid origin ${JSON.stringify(origin)}: an origin has the form <scheme>://<host>[:port]`);
    }
    if (!origins.includes(origin)) origins.push(origin);
  }
  return origins;
}

function isOrigin(text: string): boolean {
  if (!ORIGIN.test(text)) return false;
  try {
    const url = new URL(text);
    return url.hostname !== '';
  } catch {
    return false;
  }
}

/** App Services' bounds: 30 minutes to 180 days. */
export function parseRefreshTokenExpiration(body: unknown): number {
  const seconds = isObject(body) ? body['expiration_time_seconds'] : undefined;
  if (!isRefreshTokenLifetime(seconds)) {
    const { min, max } = REFRESH_TOKEN_LIFETIME_SECONDS;
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `expiration_time_seconds must be a whole number of seconds from ${min} to ${max}`);
  }
  return seconds;
}

/**
 * A deployment configuration Tessera can honour: changes made through the admin API deploy at once (there
 * are no UI drafts to turn on) and nothing deploys from GitHub. `last_modified`, which a client that
 * read the configuration may send back, is ignored.
 */
export function parseDeploymentConfig(body: unknown): void {
  if (!isObject(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be a JSON object (ui_drafts_disabled, automatic_deployment)');
  const unknown = Object.keys(body).filter((key) => !['ui_drafts_disabled', 'automatic_deployment', 'last_modified'].includes(key));
  if (unknown.length > 0) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `unknown deployment setting ${unknown.map((key) => `"${key}"`).join(', ')}`);
  const drafts = body['ui_drafts_disabled'];
  if (drafts !== undefined && typeof drafts !== 'boolean') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'ui_drafts_disabled must be a boolean');
  if (drafts === false) throw new AdminApiError(AdminApiErrorCode.NotImplemented, 'this server deploys every change made through the admin API at once: ui_drafts_disabled cannot be false');
  const automatic = body['automatic_deployment'];
  if (automatic === undefined) return;
  if (!isObject(automatic)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'automatic_deployment must be an object (enabled, provider, installation_ids)');
  const { enabled, provider, installation_ids: installations } = automatic;
  if (enabled !== undefined && typeof enabled !== 'boolean') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'automatic_deployment.enabled must be a boolean');
  if (provider !== undefined && provider !== 'github') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'automatic_deployment.provider must be "github"');
  if (installations !== undefined && (!Array.isArray(installations) || installations.some((id) => typeof id !== 'string'))) {
    throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'automatic_deployment.installation_ids must be an array of strings');
  }
  if (enabled === true || (Array.isArray(installations) && installations.length > 0)) {
    throw new AdminApiError(AdminApiErrorCode.NotImplemented, 'this server has no automatic deployment from GitHub: deploy with the admin API or the CLI (push)');
  }
}
