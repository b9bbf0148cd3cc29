import { Injectable } from '@nestjs/common';
import type { AuthProvider } from '@tessera/app-config';
import { LoginRateLimiter, verifyPassword } from '@tessera/credentials';
import { FunctionCallError, FunctionCalls } from '@tessera/messaging';
import { SecretStore, newObjectIdHex } from '@tessera/platform';
import { createRemoteJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import type { ClientApp } from '../client-apps.service';
import { OAuthLogins } from './oauth-logins';
import { UserpassService } from './userpass.service';

/** Who a provider says is logging in. */
export interface ProviderIdentity {
  /** Id of the identity within its provider. */
  id: string;
  /** User metadata the provider contributes (email, metadata_fields, ...). */
  data?: Record<string, unknown>;
  /** Set when the credential names its user directly (API keys). */
  userId?: string;
  /** Runs once the identity's user exists (the email/password account remembers its user). */
  onUserCreated?: (userId: string) => Promise<void>;
}

/** Checks the credentials of each provider type and answers with the identity they prove. */
@Injectable()
export class ProviderLogins {
  private readonly jwks = new Map<string, JWTVerifyGetKey>();

  constructor(
    private readonly secrets: SecretStore,
    private readonly functions: FunctionCalls,
    private readonly limiter: LoginRateLimiter,
    private readonly oauth: OAuthLogins,
    private readonly userpassFlows: UserpassService,
  ) {}

  /**
   * Failed logins count per app, provider and identity: the username for email/password, the client's
   * address for API keys and custom tokens (each guess there is a different secret, not one identity).
   */
  async identify(app: ClientApp, provider: AuthProvider, payload: Record<string, unknown>, clientAddress = 'unknown'): Promise<ProviderIdentity> {
    switch (provider.type) {
      case 'anon-user':
        return { id: newObjectIdHex() };
      case 'local-userpass':
        return this.limited(app, provider, stringField(payload, 'username'), () => this.userpass(app, provider, payload));
      case 'api-key':
        return this.limited(app, provider, clientAddress, () => this.apiKey(app, payload));
      case 'custom-token':
        return this.limited(app, provider, clientAddress, () => this.customToken(app, provider, payload));
      case 'custom-function':
        return this.customFunction(app, provider, payload);
      case 'oauth2-google':
      case 'oauth2-apple':
      case 'oauth2-facebook':
        return this.limited(app, provider, clientAddress, () => this.oauth.identify(app, provider, payload));
      default:
        throw new ClientApiError(ClientApiErrorCode.AuthProviderNotFound, `authentication via '${provider.name}' is unsupported`);
    }
  }

  private limited(app: ClientApp, provider: AuthProvider, identity: string, check: () => Promise<ProviderIdentity>): Promise<ProviderIdentity> {
    const key = `client\u0000${app.appId}\u0000${provider.type}\u0000${identity}`;
    return this.limiter.attempt(key, check, (error) => error instanceof ClientApiError && error.httpStatus === 401);
  }

  private async userpass(app: ClientApp, provider: AuthProvider, payload: Record<string, unknown>): Promise<ProviderIdentity> {
    const username = stringField(payload, 'username');
    const password = stringField(payload, 'password');
    let account = await app.users.findAccount(username);
    // An account imported from App Services has no password yet: its first login starts the reset flow.
    if (account?.resetRequired) {
      await this.userpassFlows.requireReset(app, provider, username, password);
      account = await app.users.findAccount(username);
    }
    if (!account || !(await verifyPassword(password, account.passwordHash))) {
      throw new ClientApiError(ClientApiErrorCode.InvalidPassword, 'invalid username/password');
    }
    if (!account.confirmed) throw new ClientApiError(ClientApiErrorCode.AuthError, 'confirmation required');
    if (account.userId) return { id: username, data: { email: username }, userId: account.userId };
    return { id: username, data: { email: username }, onUserCreated: (userId) => app.users.setAccountUser(username, userId) };
  }

  private async apiKey(app: ClientApp, payload: Record<string, unknown>): Promise<ProviderIdentity> {
    const key = await app.users.apiKeyBySecret(stringField(payload, 'key'));
    if (!key || key.disabled) throw new ClientApiError(ClientApiErrorCode.AuthError, 'invalid API key');
    return { id: key._id, userId: key.userId };
  }

  private async customToken(app: ClientApp, provider: AuthProvider, payload: Record<string, unknown>): Promise<ProviderIdentity> {
    const token = stringField(payload, 'token');
    const config = provider.config ?? {};
    const audience = config['audience'];
    const audiences = Array.isArray(audience) ? audience.filter((item): item is string => typeof item === 'string') : typeof audience === 'string' && audience ? [audience] : [];
    let claims: JWTPayload;
    try {
      const options = audiences.length > 0 ? { audience: audiences } : {};
      if (config['useJWKURI'] === true || typeof config['jwkURI'] === 'string') {
        claims = (await jwtVerify(token, this.jwksFor(String(config['jwkURI'])), options)).payload;
      } else {
        claims = await this.verifyWithSigningKeys(app, provider, token, options);
      }
    } catch (error) {
      if (error instanceof ClientApiError) throw error;
      throw new ClientApiError(ClientApiErrorCode.AuthError, `invalid custom auth token: ${error instanceof Error ? error.message : 'verification failed'}`);
    }
    if (typeof claims.sub !== 'string' || claims.sub === '') throw new ClientApiError(ClientApiErrorCode.AuthError, "invalid custom auth token: the 'sub' claim is required");
    return { id: claims.sub, data: metadataFrom(provider, claims) };
  }

  private async verifyWithSigningKeys(app: ClientApp, provider: AuthProvider, token: string, options: { audience?: string[] }): Promise<JWTPayload> {
    const names = provider.secret_config?.['signingKeys'] ?? provider.secret_config?.['signingKey'] ?? [];
    const values = await this.secrets.values(app.appId);
    const keys = (Array.isArray(names) ? names : [names]).map((name) => values[name]).filter((value): value is string => typeof value === 'string' && value !== '');
    if (keys.length === 0) throw new ClientApiError(ClientApiErrorCode.AuthError, 'the custom-token provider has no signing key configured');
    const algorithm = typeof provider.config?.['signingAlgorithm'] === 'string' ? provider.config['signingAlgorithm'] : 'HS256';
    const header = decodeProtectedHeader(token);
    if (header.alg !== algorithm) throw new ClientApiError(ClientApiErrorCode.AuthError, `invalid custom auth token: expected a token signed with ${algorithm}`);
    let lastError: unknown;
    for (const key of keys) {
      try {
        return (await jwtVerify(token, new TextEncoder().encode(key), { ...options, algorithms: [algorithm] })).payload;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError instanceof Error ? lastError : new Error('signature verification failed');
  }

  private jwksFor(uri: string): JWTVerifyGetKey {
    let set = this.jwks.get(uri);
    if (!set) {
      set = createRemoteJWKSet(new URL(uri));
      this.jwks.set(uri, set);
    }
    return set;
  }

  private async customFunction(app: ClientApp, provider: AuthProvider, payload: Record<string, unknown>): Promise<ProviderIdentity> {
    const functionName = provider.config?.['authFunctionName'];
    if (typeof functionName !== 'string' || functionName === '') throw new ClientApiError(ClientApiErrorCode.AuthError, 'the custom-function provider names no authentication function');
    const { options: _device, provider: _provider, ...credentials } = payload;
    let result: unknown;
    try {
      result = await this.functions.call({ appId: app.appId, functionName, args: [credentials], caller: { type: 'system' }, metadata: { origin: 'function', service: 'custom-function' } });
    } catch (error) {
      if (error instanceof FunctionCallError && error.errorCode === 'ServiceUnavailable') throw error;
      throw new ClientApiError(ClientApiErrorCode.AuthError, `authentication function failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    const id = externalIdOf(result);
    if (!id) throw new ClientApiError(ClientApiErrorCode.AuthError, 'authentication function must return a non-empty string id or an object with one');
    const name = typeof result === 'object' && result !== null && typeof (result as { name?: unknown }).name === 'string' ? (result as { name: string }).name : undefined;
    return { id, ...(name ? { data: { name } } : {}) };
  }
}

function stringField(payload: Record<string, unknown>, name: string): string {
  const value = payload[name];
  if (typeof value !== 'string' || value === '') throw new ClientApiError(ClientApiErrorCode.InvalidParameter, `'${name}' must be a non-empty string`);
  return value;
}

function externalIdOf(result: unknown): string | undefined {
  if (typeof result === 'string') return result || undefined;
  if (typeof result === 'object' && result !== null) {
    const id = (result as { id?: unknown }).id;
    if (typeof id === 'string' && id) return id;
    if (typeof id === 'object' && id !== null && 'toHexString' in id && typeof id.toHexString === 'function') return String((id as { toHexString(): string }).toHexString());
  }
  return undefined;
}

/** metadata_fields: `name` is a path into the token, `field_name` (default: the last segment) the user data key. */
function metadataFrom(provider: AuthProvider, claims: JWTPayload): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const field of provider.metadata_fields ?? []) {
    const value = field.name.split('.').reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined), claims);
    if (value === undefined) {
      if (field.required) throw new ClientApiError(ClientApiErrorCode.AuthError, `required metadata field '${field.name}' is missing from the custom auth token`);
      continue;
    }
    const target = (field as { field_name?: unknown }).field_name;
    data[typeof target === 'string' && target ? target : (field.name.split('.').pop() ?? field.name)] = value;
  }
  return data;
}
