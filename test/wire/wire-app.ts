import { type AppConfig } from '@tessera/app-config';
import { ownedItemsAndCatalog } from '../data-api/data-api-support';

/** An app for the wire endpoint: email/password users (auto-confirmed) and a wire-enabled linked cluster with owned items and a catalog. */
export function withWireUsers(config: AppConfig): void {
  config.authProviders.push({ name: 'local-userpass', type: 'local-userpass', config: { autoConfirm: true, resetPasswordUrl: 'http://localhost/reset' } });
  config.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0', wireProtocolEnabled: true } },
    defaultRule: { roles: [] },
    collectionRules: ownedItemsAndCatalog(),
    rules: [],
    webhooks: [],
  });
}
