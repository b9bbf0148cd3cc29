import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig, AuthProvider } from '@tessera/app-config';
import { DataSources, DeployedApps, SigningKeyStore } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { ClientApiError, ClientApiErrorCode } from './client-api.error';
import { AppUserStore } from '@tessera/platform';

/** An app as the client API serves it: its live configuration, user store and token key. */
export interface ClientApp {
  /** The app's `_id` (what tokens and storage name). */
  appId: string;
  clientAppId: string;
  domainId: string;
  /** The live deployment's `_id` (undefined before the first deployment). */
  deploymentId: string | undefined;
  config: AppConfig;
  users: AppUserStore;
  signingKey: Buffer;
}

/**
 * Token lifetimes, from the settings TESSERA_ACCESS_TOKEN_TTL_SECONDS and TESSERA_REFRESH_TOKEN_TTL_SECONDS; an
 * app may set its own refresh token lifetime (see refreshSecondsOf).
 */
export interface TokenLifetimes {
  accessSeconds: number;
  refreshSeconds: number;
}

/** Resolves client app ids and token issuers to the app, and gives each app one user store. */
@Injectable()
export class ClientApps {
  private readonly stores = new Map<string, AppUserStore>();
  readonly lifetimes: TokenLifetimes;

  constructor(
    private readonly deployed: DeployedApps,
    private readonly dataSources: DataSources,
    private readonly keys: SigningKeyStore,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.lifetimes = { accessSeconds: settings.accessTokenTtlSeconds, refreshSeconds: settings.refreshTokenTtlSeconds };
  }

  async byClientAppId(clientAppId: string): Promise<ClientApp> {
    let deployed;
    try {
      deployed = await this.deployed.byClientAppId(clientAppId);
    } catch (error) {
      if (error instanceof Error && 'errorCode' in error && error.errorCode === 'AppNotFound') {
        throw new ClientApiError(ClientApiErrorCode.AppNotFound, `cannot find app using Client App ID '${clientAppId}'`);
      }
      throw error;
    }
    return this.toClientApp(deployed.record._id, deployed.record.client_app_id, deployed.record.domain_id, deployed.deployment?._id, deployed.config);
  }

  async byAppId(appId: string): Promise<ClientApp> {
    const deployed = await this.deployed.byId(appId);
    return this.toClientApp(deployed.record._id, deployed.record.client_app_id, deployed.record.domain_id, deployed.deployment?._id, deployed.config);
  }

  private async toClientApp(appId: string, clientAppId: string, domainId: string, deploymentId: string | undefined, config: AppConfig): Promise<ClientApp> {
    let users = this.stores.get(appId);
    if (!users) {
      users = new AppUserStore(this.dataSources.platform(), appId);
      this.stores.set(appId, users);
    }
    await users.init();
    return { appId, clientAppId, domainId, deploymentId, config, users, signingKey: await this.keys.get(`app-${appId}`) };
  }
}

/** How long a refresh token (and its session) issued now for `app` lives: the app's own lifetime, else the server's. */
export function refreshSecondsOf(app: ClientApp, lifetimes: TokenLifetimes): number {
  return app.config.settings.security?.refresh_token_expiration_seconds ?? lifetimes.refreshSeconds;
}

/** The enabled provider of a type, or AuthProviderNotFound (unknown and disabled providers alike). */
export function enabledProvider(app: ClientApp, providerName: string): AuthProvider {
  const provider = app.config.authProviders.find((candidate) => candidate.name === providerName || candidate.type === providerName);
  if (!provider || provider.disabled === true) {
    throw new ClientApiError(ClientApiErrorCode.AuthProviderNotFound, `authentication via '${providerName}' is unsupported`);
  }
  return provider;
}
