import { Inject, Injectable } from '@nestjs/common';
import type { AuthProvider } from '@tessera/app-config';
import { type SendConfirmationRequest, type SendConfirmationResponse } from '@tessera/contracts';
import { hashPassword } from '@tessera/credentials';
import { FunctionCalls } from '@tessera/messaging';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import { type ClientApp, ClientApps, enabledProvider } from '../client-apps.service';
import { Mailer } from './mailer';
import type { UserpassTokenPurpose } from '@tessera/platform';

const tokenLifetimeSeconds = 30 * 60;
/** How the admin API's `send_confirm` names a refusal of the client API. */
const OUTCOME_OF_ERROR = new Map<string, SendConfirmationResponse['outcome']>([
  [ClientApiErrorCode.UserNotFound, 'not_found'],
  [ClientApiErrorCode.AppNotFound, 'not_found'],
  [ClientApiErrorCode.UserAlreadyConfirmed, 'already_confirmed'],
  [ClientApiErrorCode.AuthProviderNotFound, 'not_enabled'],
]);
const PROVIDER = 'local-userpass';

/**
 * The email/password provider's account flows: registration, confirmation (automatic, by email token or
 * by the app's confirmation function) and password reset (by email token or by the reset function).
 */
@Injectable()
export class UserpassService {
  constructor(
    private readonly apps: ClientApps,
    private readonly functions: FunctionCalls,
    @Inject(Mailer) private readonly mailer: Mailer,
  ) {}

  async register(clientAppId: string, body: Record<string, unknown>): Promise<void> {
    const { app, provider } = await this.provider(clientAppId);
    const email = checkEmail(field(body, 'email'));
    const password = checkPassword(field(body, 'password'));
    if (!(await app.users.createAccount(email, await hashPassword(password)))) throw new ClientApiError(ClientApiErrorCode.AccountNameInUse, 'name already in use');
    const config = provider.config ?? {};
    if (config['autoConfirm'] === true) {
      await app.users.confirmAccount(email);
      return;
    }
    try {
      if (config['runConfirmationFunction'] === true) await this.runConfirmation(app, provider, email);
      else await this.sendToken(app, provider, email, 'confirm');
    } catch (error) {
      await app.users.deleteAccount(email);
      throw error;
    }
  }

  async confirm(clientAppId: string, body: Record<string, unknown>): Promise<void> {
    const { app } = await this.provider(clientAppId);
    const email = await app.users.consumeToken(field(body, 'tokenId'), field(body, 'token'), 'confirm');
    if (!email) throw new ClientApiError(ClientApiErrorCode.UserpassTokenInvalid, 'invalid token data');
    if (!(await app.users.confirmAccount(email))) throw new ClientApiError(ClientApiErrorCode.UserAlreadyConfirmed, 'already confirmed');
  }

  /** `confirm/send`: the provider's confirmation flow again, as at registration. */
  async resendConfirmation(clientAppId: string, body: Record<string, unknown>): Promise<void> {
    const { app, provider } = await this.provider(clientAppId);
    const email = await this.pendingAccount(app, field(body, 'email'));
    await this.startConfirmation(app, provider, email);
  }

  /**
   * The admin API's `send_confirm` (over the bus): the same flow for a pending user of the app, with the
   * outcome named rather than thrown (the admin API answers in its own errors).
   */
  async sendConfirmation(request: SendConfirmationRequest, headers?: Readonly<Record<string, string>>): Promise<SendConfirmationResponse> {
    try {
      const app = await this.apps.byAppId(request.appId);
      const provider = enabledProvider(app, PROVIDER);
      const email = await this.pendingAccount(app, request.email);
      return { outcome: await this.startConfirmation(app, provider, email, headers) };
    } catch (error) {
      if (!(error instanceof ClientApiError)) throw error;
      return { outcome: OUTCOME_OF_ERROR.get(error.errorCode) ?? 'failed', message: error.message };
    }
  }

  /** The provider's confirmation flow: its confirmation function decides, or a confirmation email goes out. */
  private async startConfirmation(app: ClientApp, provider: AuthProvider, email: string, headers?: Readonly<Record<string, string>>): Promise<'sent' | 'confirmed' | 'pending'> {
    if (provider.config?.['runConfirmationFunction'] === true) return (await this.runConfirmation(app, provider, email, headers)) === 'success' ? 'confirmed' : 'pending';
    await this.sendToken(app, provider, email, 'confirm');
    return 'sent';
  }

  async retryConfirmationFunction(clientAppId: string, body: Record<string, unknown>): Promise<void> {
    const { app, provider } = await this.provider(clientAppId);
    const email = await this.pendingAccount(app, field(body, 'email'));
    if (provider.config?.['runConfirmationFunction'] !== true) throw new ClientApiError(ClientApiErrorCode.BadRequest, 'the provider does not use a confirmation function');
    await this.runConfirmation(app, provider, email);
  }

  async sendReset(clientAppId: string, body: Record<string, unknown>): Promise<void> {
    const { app, provider } = await this.provider(clientAppId);
    const email = field(body, 'email');
    if (!(await app.users.findAccount(email))) throw new ClientApiError(ClientApiErrorCode.UserNotFound, 'user not found');
    await this.sendToken(app, provider, email, 'reset');
  }

  async reset(clientAppId: string, body: Record<string, unknown>): Promise<void> {
    const { app } = await this.provider(clientAppId);
    const password = checkPassword(field(body, 'password'));
    const email = await app.users.consumeToken(field(body, 'tokenId'), field(body, 'token'), 'reset');
    if (!email) throw new ClientApiError(ClientApiErrorCode.UserpassTokenInvalid, 'invalid token data');
    await app.users.setPassword(email, await hashPassword(password));
  }

  /** `reset/call`: the app's reset function decides: success sets the password now, pending leaves it to a later `reset`. */
  async callReset(clientAppId: string, body: Record<string, unknown>): Promise<void> {
    const { app, provider } = await this.provider(clientAppId);
    const config = provider.config ?? {};
    const functionName = config['resetFunctionName'];
    if (config['runResetFunction'] !== true || typeof functionName !== 'string' || !functionName) throw new ClientApiError(ClientApiErrorCode.BadRequest, 'the provider does not use a reset function');
    const email = field(body, 'email');
    const password = checkPassword(field(body, 'password'));
    if (!(await app.users.findAccount(email))) throw new ClientApiError(ClientApiErrorCode.UserNotFound, 'user not found');
    const extra = Array.isArray(body['arguments']) ? (body['arguments'] as unknown[]) : [];
    const { token, tokenId } = await app.users.issueToken(email, 'reset', tokenLifetimeSeconds);
    const status = await this.decision(app, functionName, [{ token, tokenId, username: email, password }, ...extra]);
    if (status === 'success') {
      await app.users.consumeToken(tokenId, token, 'reset');
      await app.users.setPassword(email, await hashPassword(password));
    } else if (status === 'fail') {
      await app.users.consumeToken(tokenId, token, 'reset');
      throw new ClientApiError(ClientApiErrorCode.BadRequest, 'password reset failed: the reset function returned status fail');
    }
  }

  /**
   * The login of an account that must reset its password (imported from App Services, which never exported
   * password hashes) starts the provider's reset flow: the reset function, given the attempted password as
   * `reset/call` would give it (its `success` sets it and the login goes on), or a reset email. Otherwise the
   * login is refused with 401 AuthError, as App Services refused a login that needed another step first.
   */
  async requireReset(app: ClientApp, provider: AuthProvider, email: string, attemptedPassword: string): Promise<void> {
    const config = provider.config ?? {};
    const functionName = config['resetFunctionName'];
    if (config['runResetFunction'] === true && typeof functionName === 'string' && functionName) {
      const { token, tokenId } = await app.users.issueToken(email, 'reset', tokenLifetimeSeconds);
      const status = await this.decision(app, functionName, [{ token, tokenId, username: email, password: attemptedPassword }]);
      if (status === 'success' && attemptedPassword.length >= 6 && attemptedPassword.length <= 128) {
        await app.users.consumeToken(tokenId, token, 'reset');
        await app.users.setPassword(email, await hashPassword(attemptedPassword));
        return;
      }
      if (status !== 'pending') await app.users.consumeToken(tokenId, token, 'reset');
      throw new ClientApiError(ClientApiErrorCode.AuthError, `password reset required: the app's reset function answered ${status}`);
    }
    await this.sendToken(app, provider, email, 'reset');
    throw new ClientApiError(ClientApiErrorCode.AuthError, 'password reset required: a password reset email was sent');
  }

  private async runConfirmation(app: ClientApp, provider: AuthProvider, email: string, headers?: Readonly<Record<string, string>>): Promise<'success' | 'pending'> {
    const functionName = provider.config?.['confirmationFunctionName'];
    if (typeof functionName !== 'string' || !functionName) throw new ClientApiError(ClientApiErrorCode.BadRequest, 'the provider names no confirmation function');
    const { token, tokenId } = await app.users.issueToken(email, 'confirm', tokenLifetimeSeconds);
    const status = await this.decision(app, functionName, [{ token, tokenId, username: email }], headers);
    if (status === 'success') {
      await app.users.consumeToken(tokenId, token, 'confirm');
      await app.users.confirmAccount(email);
    } else if (status === 'fail') {
      await app.users.consumeToken(tokenId, token, 'confirm');
      throw new ClientApiError(ClientApiErrorCode.BadRequest, 'user confirmation failed: the confirmation function returned status fail');
    }
    return status;
  }

  /**
   * Runs a confirmation or reset function as the system: `{ status: 'success' | 'pending' | 'fail' }`. `headers`:
   * the correlation id and trace context of the bus message being handled, when one asked (the admin API's `send_confirm`).
   */
  private async decision(app: ClientApp, functionName: string, args: unknown[], headers?: Readonly<Record<string, string>>): Promise<'success' | 'pending' | 'fail'> {
    const result = await this.functions.call({ appId: app.appId, functionName, args, caller: { type: 'system' }, metadata: { origin: 'function', service: PROVIDER } }, headers ? { headers } : {});
    const status = typeof result === 'object' && result !== null ? (result as { status?: unknown }).status : undefined;
    if (status === 'success' || status === 'pending' || status === 'fail') return status;
    throw new ClientApiError(ClientApiErrorCode.FunctionExecutionError, `function '${functionName}' must return { status: 'success' | 'pending' | 'fail' }`);
  }

  private async sendToken(app: ClientApp, provider: AuthProvider, email: string, purpose: UserpassTokenPurpose): Promise<void> {
    const { token, tokenId } = await app.users.issueToken(email, purpose, tokenLifetimeSeconds);
    const base = provider.config?.[purpose === 'confirm' ? 'emailConfirmationUrl' : 'resetPasswordUrl'];
    const link = typeof base === 'string' && base ? `${base}${base.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}&tokenId=${tokenId}` : undefined;
    await this.mailer.send({ appId: app.appId, to: email, purpose, token, tokenId, ...(link ? { link } : {}), sentAt: new Date().toISOString() });
  }

  private async pendingAccount(app: ClientApp, email: string): Promise<string> {
    const account = await app.users.findAccount(email);
    if (!account) throw new ClientApiError(ClientApiErrorCode.UserNotFound, 'user not found');
    if (account.confirmed) throw new ClientApiError(ClientApiErrorCode.UserAlreadyConfirmed, 'already confirmed');
    return email;
  }

  private async provider(clientAppId: string): Promise<{ app: ClientApp; provider: AuthProvider }> {
    const app = await this.apps.byClientAppId(clientAppId);
    return { app, provider: enabledProvider(app, PROVIDER) };
  }
}

function field(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw new ClientApiError(ClientApiErrorCode.MissingParameter, `'${name}' is required and must be a string`);
  return value;
}

/** The longest address SMTP can deliver to (RFC 5321: a 254-character path); App Services refuses longer ones. */
const MAX_EMAIL_LENGTH = 254;

/** An email address an account may be registered under: bounded, one line of printable text, with an @. */
function checkEmail(email: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  if (email.length > MAX_EMAIL_LENGTH || /[\u0000-\u001f\u007f\s]/.test(email) || !/^[^@]+@[^@]+$/.test(email)) {
    throw new ClientApiError(ClientApiErrorCode.BadRequest, 'email invalid');
  }
  return email;
}

function checkPassword(password: string): string {
  if (password.length < 6 || password.length > 128) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, 'password must be between 6 and 128 characters');
  return password;
}
