import { Body, Controller, Get, Headers, HttpCode, Inject, Ip, Param, Post, Query, Req, Res } from '@nestjs/common';
import { SETTINGS, type Settings } from '@tessera/settings';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import { ClientApps, enabledProvider } from '../client-apps.service';
import { AuthService } from './auth.service';
import { clientIdOf, OAuthLogins } from './oauth-logins';

/** How long the user may take at the provider's sign-in page. */
const STATE_LIFETIME_SECONDS = 10 * 60;
const STATE_ISSUER = 'tessera-oauth-redirect';
const CALLBACK_PATH = '/api/client/v2.0/auth/callback';
/** The cookie that ties a linking redirect to the browser that started it (its hash is in the state). */
const LINK_COOKIE = 'tessera_oauth_link';
/** realm-web reads the provider's URL from this header when it links (its request carries the user's token). */
const REDIRECT_LOCATION_HEADER = 'x-baas-location';
const REDIRECT_PROVIDERS = new Set(['oauth2-google', 'oauth2-facebook', 'oauth2-apple']);

/** Linking: the session that asked, and the hash of the cookie the browser got. */
interface LinkingState {
  user: string;
  session: string;
  device: string;
  nonce: string;
}

interface RedirectState {
  app: string;
  provider: string;
  redirect: string;
  state: string;
  deviceId?: string;
  link?: LinkingState;
}

/**
 * The OAuth 2.0 redirect flow realm-web runs for `Credentials.google({ redirectUrl })` and
 * `Credentials.facebook(redirectUrl)`: the login URL sends the browser to the provider's sign-in page with
 * Tessera's callback as the redirect URI and a state signed with the app's key; the callback exchanges the
 * code, logs the user in as the id-token or access-token login would, and sends the browser to the client's
 * redirect URL with App Services' hash (`_baas_client_app_id`, `_baas_ua` = access$refresh$user$device,
 * `_baas_state`, or `_baas_error`). The client's redirect URL must be one of the provider's `redirect_uris`.
 * Apple (`Credentials.apple(redirectUrl)`) asks for the user's name and email, so it posts its answer to the
 * callback as a form. Linking (`user.linkCredentials(...)` with a redirect credential, `link=true`): realm-web
 * asks with the user's access token and `providerRedirectHeader`, gets the provider's URL in `x-baas-location`
 * and a cookie whose hash the state carries; the callback links the identity to that user (only in the browser
 * holding the cookie, so a sign-in page sent to someone else links nothing) and answers an access token with no
 * refresh token (`access$$user$device`), as App Services did.
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
  async start(
    @Param('appId') clientAppId: string,
    @Param('provider') providerName: string,
    @Query() query: Record<string, unknown>,
    @Headers('authorization') authorization: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const app = await this.apps.byClientAppId(clientAppId);
    const provider = enabledProvider(app, providerName);
    if (!REDIRECT_PROVIDERS.has(provider.type)) throw new ClientApiError(ClientApiErrorCode.BadRequest, `the ${provider.type} provider has no redirect login`);
    const redirect = typeof query['redirect'] === 'string' ? query['redirect'] : '';
    const state = typeof query['state'] === 'string' ? query['state'] : '';
    const allowed = Array.isArray(provider['redirect_uris']) ? (provider['redirect_uris'] as unknown[]) : [];
    if (!redirect || !allowed.includes(redirect)) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "'redirect' must be one of the provider's redirect_uris");
    if (!state || state.length > 256) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "'state' is required");
    let link: LinkingState | undefined;
    let cookie: string | undefined;
    if (query['link'] === 'true') {
      // The user who links: the access token of the request, as the id-token link takes it.
      const session = await this.auth.authenticate(authorization, 'access', clientAppId);
      cookie = randomBytes(32).toString('base64url');
      link = { user: session.user._id, session: session.claims.baas_session_id, device: session.claims.baas_device_id, nonce: digest(cookie) };
    }
    const deviceId = link ? undefined : deviceIdOf(query['device']);
    const claims: RedirectState = { app: app.appId, provider: provider.name, redirect, state, ...(deviceId ? { deviceId } : {}), ...(link ? { link } : {}) };
    const signed = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256' }).setIssuer(STATE_ISSUER).setIssuedAt().setExpirationTime(`${STATE_LIFETIME_SECONDS}s`).sign(app.signingKey);
    const clientId = clientIdOf(provider);
    const oauth = this.settings.oauth;
    const target = new URL(provider.type === 'oauth2-google' ? oauth.googleAuthorizeUrl : provider.type === 'oauth2-apple' ? oauth.appleAuthorizeUrl : oauth.facebookAuthorizeUrl);
    target.searchParams.set('client_id', clientId);
    target.searchParams.set('redirect_uri', this.callbackUrl(request));
    target.searchParams.set('response_type', 'code');
    target.searchParams.set('scope', provider.type === 'oauth2-google' ? 'openid email profile' : provider.type === 'oauth2-apple' ? 'name email' : 'email,public_profile');
    // Apple answers a request for the name or email only by posting a form to the redirect URI.
    if (provider.type === 'oauth2-apple') target.searchParams.set('response_mode', 'form_post');
    target.searchParams.set('state', signed);
    if (cookie) {
      const secure = request.protocol === 'https';
      // Apple's form post is a cross-site POST: only a SameSite=None cookie (which must be Secure) comes with it.
      void reply.header('set-cookie', `${LINK_COOKIE}=${cookie}; Path=${CALLBACK_PATH}; Max-Age=${STATE_LIFETIME_SECONDS}; HttpOnly; ${secure ? 'Secure; SameSite=None' : 'SameSite=Lax'}`);
    }
    if (query['providerRedirectHeader'] === 'true') {
      await reply.status(200).header(REDIRECT_LOCATION_HEADER, target.toString()).header('access-control-expose-headers', REDIRECT_LOCATION_HEADER).send();
      return;
    }
    await reply.status(302).header('location', target.toString()).send();
  }

  @Get('auth/callback')
  async callback(@Query() query: Record<string, unknown>, @Ip() clientAddress: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.finish(query, clientAddress, request, reply);
  }

  /** Apple's `response_mode=form_post`: the same fields as a form. */
  @Post('auth/callback')
  @HttpCode(302)
  async formCallback(@Body() body: unknown, @Ip() clientAddress: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.finish(typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}, clientAddress, request, reply);
  }

  private async finish(fields: Record<string, unknown>, clientAddress: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const claims = await this.verifiedState(fields['state']);
    const app = await this.apps.byAppId(claims.app);
    const back = async (hash: Record<string, string>): Promise<void> => {
      if (claims.link) void reply.header('set-cookie', `${LINK_COOKIE}=; Path=${CALLBACK_PATH}; Max-Age=0; HttpOnly`);
      await reply.status(302).header('location', `${claims.redirect}#${hashOf({ ...hash, _baas_state: claims.state })}`).send();
    };
    try {
      if (typeof fields['error'] === 'string') throw new ClientApiError(ClientApiErrorCode.AuthError, `the provider refused the sign-in: ${fields['error']}`);
      const code = typeof fields['code'] === 'string' ? fields['code'] : '';
      if (!code) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "'code' is required");
      if (claims.link && !sameDigest(cookieOf(request, LINK_COOKIE), claims.link.nonce)) throw new ClientApiError(ClientApiErrorCode.AuthError, 'linking must finish in the browser that started it');
      const provider = enabledProvider(app, claims.provider);
      const credential = await this.oauth.credentialForCode(app, provider, code, this.callbackUrl(request));
      if (claims.link) {
        const { user, session, device } = claims.link;
        const linked = await this.auth.linkSession(app, claims.provider, credential, { userId: user, sessionId: session, deviceId: device }, clientAddress);
        await back({ _baas_client_app_id: app.clientAppId, _baas_ua: [linked.access_token, '', linked.user_id, linked.device_id].join('$') });
        return;
      }
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
      const { app: verifiedApp, provider, redirect, state, deviceId, link } = payload as unknown as RedirectState;
      if (verifiedApp !== appId || typeof provider !== 'string' || typeof redirect !== 'string' || typeof state !== 'string') throw refused;
      const linking = link && typeof link.user === 'string' && typeof link.session === 'string' && typeof link.device === 'string' && typeof link.nonce === 'string' ? link : undefined;
      if (link !== undefined && !linking) throw refused;
      return { app: verifiedApp, provider, redirect, state, ...(typeof deviceId === 'string' ? { deviceId } : {}), ...(linking ? { link: linking } : {}) };
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

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** True when `cookie` hashes to `expected` (compared in constant time). */
function sameDigest(cookie: string | undefined, expected: string): boolean {
  if (!cookie) return false;
  const actual = Buffer.from(digest(cookie));
  const wanted = Buffer.from(expected);
  return actual.length === wanted.length && timingSafeEqual(actual, wanted);
}

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
