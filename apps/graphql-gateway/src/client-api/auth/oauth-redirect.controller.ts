import { Controller, Get, Inject, Ip, Param, Query, Req, Res } from '@nestjs/common';
import { SETTINGS, type Settings } from '@tessera/settings';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import { ClientApps, enabledProvider } from '../client-apps.service';
import { AuthService } from './auth.service';
import { clientIdOf, OAuthLogins } from './oauth-logins';

/** How long the user may take at the provider's sign-in page. */
const STATE_LIFETIME_SECONDS = 10 * 60;
const STATE_ISSUER = 'tessera-oauth-redirect';
const CALLBACK_PATH = '/api/client/v2.0/auth/callback';

interface RedirectState {
  app: string;
  provider: string;
  redirect: string;
  state: string;
  deviceId?: string;
}

/**
 * The OAuth 2.0 redirect flow realm-web runs for `Credentials.google({ redirectUrl })` and
 * `Credentials.facebook(redirectUrl)`: the login URL sends the browser to the provider's sign-in page with
 * Tessera's callback as the redirect URI and a state signed with the app's key; the callback exchanges the
 * code, logs the user in as the id-token or access-token login would, and sends the browser to the client's
 * redirect URL with App Services' hash (`_baas_client_app_id`, `_baas_ua` = access$refresh$user$device,
 * `_baas_state`, or `_baas_error`). The client's redirect URL must be one of the provider's `redirect_uris`.
 * Not yet: linking through a redirect (`link=true`) and Apple's form-post callback.
 */
@Controller('api/client/v2.0')
export class OAuthRedirectController {
  constructor(
    private readonly apps: ClientApps,
    private readonly auth: AuthService,
    private readonly oauth: OAuthLogins,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Get('app/:appId/auth/providers/:provider/login')
  async start(@Param('appId') clientAppId: string, @Param('provider') providerName: string, @Query() query: Record<string, unknown>, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const app = await this.apps.byClientAppId(clientAppId);
    const provider = enabledProvider(app, providerName);
    if (provider.type !== 'oauth2-google' && provider.type !== 'oauth2-facebook') throw new ClientApiError(ClientApiErrorCode.BadRequest, `the ${provider.type} provider has no redirect login`);
    if (query['link'] === 'true') throw new ClientApiError(ClientApiErrorCode.NotImplemented, 'linking through the OAuth redirect flow is not available yet: link with an id token or access token');
    const redirect = typeof query['redirect'] === 'string' ? query['redirect'] : '';
    const state = typeof query['state'] === 'string' ? query['state'] : '';
    const allowed = Array.isArray(provider['redirect_uris']) ? (provider['redirect_uris'] as unknown[]) : [];
    if (!redirect || !allowed.includes(redirect)) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "'redirect' must be one of the provider's redirect_uris");
    if (!state || state.length > 256) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "'state' is required");
    const deviceId = deviceIdOf(query['device']);
    const claims: RedirectState = { app: app.appId, provider: provider.name, redirect, state, ...(deviceId ? { deviceId } : {}) };
    const signed = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256' }).setIssuer(STATE_ISSUER).setIssuedAt().setExpirationTime(`${STATE_LIFETIME_SECONDS}s`).sign(app.signingKey);
    const clientId = clientIdOf(provider);
    const target = new URL(provider.type === 'oauth2-google' ? this.settings.oauth.googleAuthorizeUrl : this.settings.oauth.facebookAuthorizeUrl);
    target.searchParams.set('client_id', clientId);
    target.searchParams.set('redirect_uri', this.callbackUrl(request));
    target.searchParams.set('response_type', 'code');
    target.searchParams.set('scope', provider.type === 'oauth2-google' ? 'openid email profile' : 'email,public_profile');
    target.searchParams.set('state', signed);
    await reply.status(302).header('location', target.toString()).send();
  }

  @Get('auth/callback')
  async callback(@Query() query: Record<string, unknown>, @Ip() clientAddress: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const claims = await this.verifiedState(query['state']);
    const app = await this.apps.byAppId(claims.app);
    const back = async (fields: Record<string, string>): Promise<void> => {
      await reply.status(302).header('location', `${claims.redirect}#${hashOf({ ...fields, _baas_state: claims.state })}`).send();
    };
    try {
      if (typeof query['error'] === 'string') throw new ClientApiError(ClientApiErrorCode.AuthError, `the provider refused the sign-in: ${query['error']}`);
      const code = typeof query['code'] === 'string' ? query['code'] : '';
      if (!code) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "'code' is required");
      const provider = enabledProvider(app, claims.provider);
      const credential = await this.oauth.credentialForCode(app, provider, code, this.callbackUrl(request));
      const body = { ...credential, ...(claims.deviceId ? { options: { device: { deviceId: claims.deviceId } } } : {}) };
      const login = await this.auth.login(app.clientAppId, claims.provider, body, { link: false, authorization: undefined, clientAddress });
      await back({ _baas_client_app_id: app.clientAppId, _baas_ua: [login.access_token, login.refresh_token ?? '', login.user_id, login.device_id].join('$') });
    } catch (error) {
      await back({ _baas_error: error instanceof Error ? error.message : 'sign-in failed' });
    }
  }

  private callbackUrl(request: FastifyRequest): string {
    return `${this.settings.publicUrl ?? `${request.protocol}://${request.headers.host ?? `localhost:${this.settings.port}`}`}${CALLBACK_PATH}`;
  }

  /** The state the login URL signed; anything else is refused before a redirect is made. */
  private async verifiedState(raw: unknown): Promise<RedirectState> {
    const refused = new ClientApiError(ClientApiErrorCode.BadRequest, 'invalid OAuth state: start the sign-in again');
    if (typeof raw !== 'string' || raw.length > 8192) throw refused;
    try {
      const appId = decodeJwt(raw)['app'];
      if (typeof appId !== 'string') throw refused;
      const app = await this.apps.byAppId(appId);
      const { payload } = await jwtVerify(raw, app.signingKey, { issuer: STATE_ISSUER, algorithms: ['HS256'] });
      const { app: verifiedApp, provider, redirect, state, deviceId } = payload as unknown as RedirectState;
      if (verifiedApp !== appId || typeof provider !== 'string' || typeof redirect !== 'string' || typeof state !== 'string') throw refused;
      return { app: verifiedApp, provider, redirect, state, ...(typeof deviceId === 'string' ? { deviceId } : {}) };
    } catch {
      throw refused;
    }
  }
}

/** The redirect's hash as realm-web reads it (`decodeURIComponent` of each value: no `+` for spaces). */
function hashOf(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([key, value]) => `${key}=${encodeURIComponent(value)}`)
    .join('&');
}

/** realm-web's `device` query parameter: base64 of its device information JSON, with `deviceId` once it has one. */
function deviceIdOf(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 4096) return undefined;
  try {
    const info = JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as { deviceId?: unknown };
    return typeof info.deviceId === 'string' && /^[0-9a-f]{24}$/i.test(info.deviceId) ? info.deviceId : undefined;
  } catch {
    return undefined;
  }
}
