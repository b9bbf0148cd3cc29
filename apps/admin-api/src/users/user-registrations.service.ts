import { Injectable, Optional } from '@nestjs/common';
import { Subjects } from '@tessera/contracts';
import type { AuthProvider } from '@tessera/app-config';
import { FunctionCalls, MessageBus } from '@tessera/messaging';
import type { AppRecord } from '@tessera/platform';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { UsersService } from './users.service';

/** App Services' `PendingUser`: a registration waiting for its confirmation. */
export interface PendingUserView {
  _id: string;
  domain_id: string;
  login_ids: Array<{ id_type: 'email'; id: string }>;
  user_id: string;
}

/** App Services listed 50 pending users per call. */
const PAGE = 50;
const tokenLifetimeSeconds = 30 * 60;

/**
 * Email/password registrations not confirmed yet (`.../user_registrations`): listed, deleted, confirmed by an
 * administrator, or put through the provider's confirmation function again.
 */
@Injectable()
export class UserRegistrationsService {
  constructor(
    private readonly users: UsersService,
    private readonly state: AppStateService,
    private readonly functions: FunctionCalls,
    @Optional() private readonly bus?: MessageBus,
  ) {}

  async pending(record: AppRecord, after: string | undefined): Promise<PendingUserView[]> {
    if (after !== undefined && !/^[0-9a-f]{24}$/i.test(after)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, "'after' must be the _id of a pending user");
    const accounts = await (await this.users.store(record)).pendingAccounts({ limit: PAGE, ...(after ? { after: after.toLowerCase() } : {}) });
    return accounts.map((account) => ({ _id: account.registrationId ?? '', domain_id: record.domain_id, login_ids: [{ id_type: 'email', id: account._id }], user_id: '' }));
  }

  async remove(record: AppRecord, email: string): Promise<void> {
    if (!(await (await this.users.store(record)).deletePendingAccount(email))) throw pendingNotFound(email);
  }

  async confirm(record: AppRecord, email: string): Promise<void> {
    const store = await this.users.store(record);
    await this.requirePending(record, email);
    await store.confirmAccount(email);
  }

  /** `run_confirm`: the provider's confirmation function decides again, as at registration. */
  async runConfirmation(record: AppRecord, email: string): Promise<void> {
    const provider = await this.requirePending(record, email);
    const functionName = provider.config?.['confirmationFunctionName'];
    if (provider.config?.['runConfirmationFunction'] !== true || typeof functionName !== 'string' || !functionName) {
      throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the email/password provider does not confirm users with a function');
    }
    const store = await this.users.store(record);
    const { token, tokenId } = await store.issueToken(email, 'confirm', tokenLifetimeSeconds);
    let result: unknown;
    try {
      result = await this.functions.call({ appId: record._id, functionName, args: [{ token, tokenId, username: email }], caller: { type: 'system' }, metadata: { origin: 'function', service: 'local-userpass' } });
    } catch (error) {
      await store.consumeToken(tokenId, token, 'confirm');
      throw new AdminApiError(AdminApiErrorCode.BadRequest, `the confirmation function failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    const status = typeof result === 'object' && result !== null ? (result as { status?: unknown }).status : undefined;
    if (status === 'success') {
      await store.consumeToken(tokenId, token, 'confirm');
      await store.confirmAccount(email);
    } else if (status !== 'pending') {
      await store.consumeToken(tokenId, token, 'confirm');
      if (status !== 'fail') throw new AdminApiError(AdminApiErrorCode.BadRequest, `function '${functionName}' must return { status: 'success' | 'pending' | 'fail' }`);
    }
  }

  /**
   * `send_confirm`: the provider's confirmation flow again (its confirmation function, or a confirmation
   * email), run by the client API, which holds the provider's mailer.
   */
  async sendConfirmation(record: AppRecord, email: string): Promise<void> {
    await this.requirePending(record, email);
    if (!this.bus) throw new AdminApiError(AdminApiErrorCode.ServiceUnavailable, 'the client API is not reachable from this process');
    let answer;
    try {
      answer = await this.bus.request(Subjects.AppsRegistrationSendConfirmation, { appId: record._id, email }, { timeoutMs: 30_000 });
    } catch (error) {
      throw new AdminApiError(AdminApiErrorCode.ServiceUnavailable, `the client API did not answer: ${error instanceof Error ? error.message : String(error)}`);
    }
    switch (answer.outcome) {
      case 'sent':
      case 'confirmed':
      case 'pending':
        return;
      case 'not_found':
        throw pendingNotFound(email);
      case 'already_confirmed':
        throw new AdminApiError(AdminApiErrorCode.BadRequest, `user is already confirmed: '${email}'`);
      case 'not_enabled':
        throw new AdminApiError(AdminApiErrorCode.BadRequest, 'email/password authentication is not enabled');
      case 'failed':
        throw new AdminApiError(AdminApiErrorCode.BadRequest, answer.message ?? 'the confirmation could not be sent');
    }
  }

  private async requirePending(record: AppRecord, email: string): Promise<AuthProvider> {
    const provider = (await this.state.liveApp(record)).authProviders.find((candidate) => candidate.type === 'local-userpass' && candidate.disabled !== true);
    if (!provider) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'email/password authentication is not enabled');
    const account = await (await this.users.store(record)).findAccount(email);
    if (!account) throw pendingNotFound(email);
    if (account.confirmed) throw new AdminApiError(AdminApiErrorCode.BadRequest, `user is already confirmed: '${email}'`);
    return provider;
  }
}

function pendingNotFound(email: string): AdminApiError {
  return new AdminApiError(AdminApiErrorCode.UserNotFound, `pending user not found: '${email}'`);
}
