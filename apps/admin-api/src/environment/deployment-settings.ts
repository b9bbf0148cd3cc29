// The body of `PUT .../deployment_migration`: a deployment model and a provider region App Services offered.

import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { isObject } from './environment-values';
import { PROVIDER_REGIONS } from './provider-regions';

export function parseDeploymentSettings(body: unknown): { deployment_model: 'GLOBAL' | 'LOCAL'; provider_region: string } {
  if (!isObject(body)) throw new AdminApiError(AdminApiErrorCode.BadRequest, 'the body must be a JSON object (deployment_model, provider_region)');
  const model = body['deployment_model'];
  const regionId = body['provider_region'];
  if (model !== 'GLOBAL' && model !== 'LOCAL') throw new AdminApiError(AdminApiErrorCode.InvalidParameter, 'deployment_model must be GLOBAL or LOCAL');
  const region = PROVIDER_REGIONS.find((candidate) => candidate.id === regionId);
  if (!region) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `provider_region must be one of the regions App Services offered (GET .../provider_regions), not ${JSON.stringify(regionId)}`);
  if (!region.deployment_models.includes(model)) throw new AdminApiError(AdminApiErrorCode.InvalidParameter, `${region.id} serves only ${region.deployment_models.join(' and ')} apps`);
  return { deployment_model: model, provider_region: region.id };
}

/** The location code App Services gave the regions that served global apps; others keep the app's location. */
const LOCATIONS: Readonly<Record<string, string>> = { 'aws-us-east-1': 'US-VA', 'aws-us-west-2': 'US-OR', 'aws-eu-west-1': 'IE', 'aws-ap-southeast-2': 'AU' };

export function locationOf(providerRegion: string): string | undefined {
  return LOCATIONS[providerRegion];
}
