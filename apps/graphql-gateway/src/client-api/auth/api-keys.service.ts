import { Injectable } from '@nestjs/common';
import { ClientApiError, ClientApiErrorCode } from '../client-api.error';
import { enabledProvider } from '../client-apps.service';
import type { ClientSession } from './auth.service';
import { type ApiKey, digest, randomSecret } from '@tessera/platform';

/** An API key as the SDKs read it: `_id` a 24-hex string (realm-core needs a string), `key` only on create. */
export interface ApiKeyView {
  _id: string;
  name: string;
  disabled: boolean;
  key?: string;
}

const keyName = /^[A-Za-z0-9_-]{1,256}$/;

/** User API keys (`C/auth/api_keys`, with the refresh token): each logs in as its owner. */
@Injectable()
export class ApiKeysService {
  async create(session: ClientSession, name: unknown): Promise<ApiKeyView> {
    enabledProvider(session.app, 'api-key');
    if (typeof name !== 'string' || !keyName.test(name)) throw new ClientApiError(ClientApiErrorCode.InvalidParameter, "API key 'name' must be 1 to 256 ASCII letters, digits, underscores or hyphens");
    const secret = randomSecret();
    const created = await session.app.users.createApiKey({ name, keyHash: digest(secret), userId: session.user._id, server: false });
    if (!created) throw new ClientApiError(ClientApiErrorCode.APIKeyAlreadyExists, 'API key already exists');
    return { ...view(created), key: secret };
  }

  async list(session: ClientSession): Promise<ApiKeyView[]> {
    return (await session.app.users.apiKeysOf(session.user._id)).map(view);
  }

  async get(session: ClientSession, id: string): Promise<ApiKeyView> {
    const key = await session.app.users.apiKey(session.user._id, id);
    if (!key || key.server) throw notFound();
    return view(key);
  }

  async setDisabled(session: ClientSession, id: string, disabled: boolean): Promise<void> {
    if (!(await session.app.users.setApiKeyDisabled(session.user._id, id, disabled))) throw notFound();
  }

  async remove(session: ClientSession, id: string): Promise<void> {
    if (!(await session.app.users.deleteApiKey(session.user._id, id))) throw notFound();
  }
}

function view(key: ApiKey): ApiKeyView {
  return { _id: key._id, name: key.name, disabled: key.disabled };
}

function notFound(): ClientApiError {
  return new ClientApiError(ClientApiErrorCode.APIKeyNotFound, 'API key not found');
}
