import type { AppConfig, HttpsEndpointConfig } from '@tessera/app-config';

/** An HTTPS endpoint as `http_endpoints/config.json` holds it: POST, no validation, the result as JSON, unless `extra` says otherwise. */
export function httpsEndpoint(route: string, function_name: string, extra: Partial<HttpsEndpointConfig> = {}): HttpsEndpointConfig {
  return {
    route,
    http_method: 'POST',
    function_name,
    validation_method: 'NO_VALIDATION',
    respond_result: true,
    fetch_custom_user_data: false,
    create_user_on_auth: false,
    disabled: false,
    return_type: 'JSON',
    ...extra,
  };
}

/** Links the cluster `mongodb-atlas` with a default role that lets every user read and write everything. */
export function linkOpenCluster(app: AppConfig): void {
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
    defaultRule: { roles: [{ name: 'all', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] },
    collectionRules: [],
    rules: [],
    webhooks: [],
  });
}
