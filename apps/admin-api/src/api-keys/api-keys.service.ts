import { Injectable } from '@nestjs/common';
import type { ApiKey, AppRecord } from '@tessera/platform';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { UsersService } from '../users/users.service';

/** A server API key as App Services' admin API shows it; `key`, the secret, only in the answer that creates it. */
export interface ApiKeyView {
  _id: string;
  name: string;
  disabled: boolean;
  key?: string;
}

/** The names the client API accepts for user keys, so one rule holds for every key of an app. */
const KEY_NAME = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * The app's server API keys (App Services' `.../api_keys`): each logs in through the api-key provider as a
 * `server` user of its own, as an imported app's backends and Data API callers did. User API keys, which a
 * user makes for itself, stay with the client API.
 */
@Injectable()
export class ApiKeysService {
  constructor(private readonly users: UsersService) {}

  async create(record: AppRecord, name: unknown): Promise<ApiKeyView> {
    if (typeof name !== 'string' || !KEY_NAME.test(name)) {
      throw new AdminApiError(AdminApiErrorCode.InvalidParameter, "API key 'name' must be 1 to 256 ASCII letters, digits, underscores or hyphens");
    }
    const created = await (await this.users.store(record)).createServerApiKey(name);
    if (!created) throw new AdminApiError(AdminApiErrorCode.APIKeyAlreadyExists, `an API key named "${name}" already exists`);
    return { ...view(created.key), key: created.secret };
  }

  async list(record: AppRecord): Promise<ApiKeyView[]> {
    return (await (await this.users.store(record)).serverApiKeys()).map(view);
  }

  async get(record: AppRecord, keyId: string): Promise<ApiKeyView> {
    return view(await this.require(record, keyId));
  }

  /** Deletes the key and its user: the user's sessions and live connections end. */
  async remove(record: AppRecord, keyId: string): Promise<void> {
    const key = await this.require(record, keyId);
    await this.users.remove(record, key.userId);
  }

  /** A disabled key no longer logs in; sessions it opened run until they end, as in App Services. */
  async setDisabled(record: AppRecord, keyId: string, disabled: boolean): Promise<void> {
    const key = await this.require(record, keyId);
    await (await this.users.store(record)).setApiKeyDisabled(key.userId, key._id, disabled);
  }

  private async require(record: AppRecord, keyId: string): Promise<ApiKey> {
    const key = await (await this.users.store(record)).serverApiKey(keyId);
    if (!key) throw new AdminApiError(AdminApiErrorCode.APIKeyNotFound, `API key not found: '${keyId}'`);
    return key;
  }
}

function view(key: ApiKey): ApiKeyView {
  return { _id: key._id, name: key.name, disabled: key.disabled };
}
