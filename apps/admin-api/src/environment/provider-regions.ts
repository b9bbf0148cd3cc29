// The deployment regions App Services offered (its docs' "Cloud Deployment Regions"). Tessera runs where it
// is installed, so a region changes nothing here; clients that make an app pick one from this list
// (the App Services UI, `appservices apps create --provider-region`), and an app keeps what it was given.

export interface CloudProviderRegion {
  id: string;
  name: string;
  cloud_provider: 'aws' | 'azure' | 'gcp';
  country: string;
  deployment_models: Array<'GLOBAL' | 'LOCAL'>;
}

/** Only four AWS regions served global apps; every region served local ones. */
export const PROVIDER_REGIONS: readonly CloudProviderRegion[] = [
  { id: 'aws-us-east-1', name: 'Virginia (us-east-1)', cloud_provider: 'aws', country: 'usa', deployment_models: ['GLOBAL', 'LOCAL'] },
  { id: 'aws-us-west-2', name: 'Oregon (us-west-2)', cloud_provider: 'aws', country: 'usa', deployment_models: ['GLOBAL', 'LOCAL'] },
  { id: 'aws-us-east-2', name: 'Ohio (us-east-2)', cloud_provider: 'aws', country: 'usa', deployment_models: ['LOCAL'] },
  { id: 'aws-eu-central-1', name: 'Frankfurt (eu-central-1)', cloud_provider: 'aws', country: 'deu', deployment_models: ['LOCAL'] },
  { id: 'aws-eu-west-1', name: 'Ireland (eu-west-1)', cloud_provider: 'aws', country: 'irl', deployment_models: ['GLOBAL', 'LOCAL'] },
  { id: 'aws-eu-west-2', name: 'London (eu-west-2)', cloud_provider: 'aws', country: 'gbr', deployment_models: ['LOCAL'] },
  { id: 'aws-ap-southeast-1', name: 'Singapore (ap-southeast-1)', cloud_provider: 'aws', country: 'sgp', deployment_models: ['LOCAL'] },
  { id: 'aws-ap-southeast-2', name: 'Sydney (ap-southeast-2)', cloud_provider: 'aws', country: 'aus', deployment_models: ['GLOBAL', 'LOCAL'] },
  { id: 'aws-ap-south-1', name: 'Mumbai (ap-south-1)', cloud_provider: 'aws', country: 'ind', deployment_models: ['LOCAL'] },
  { id: 'aws-sa-east-1', name: 'São Paulo (sa-east-1)', cloud_provider: 'aws', country: 'bra', deployment_models: ['LOCAL'] },
  { id: 'azure-eastus2', name: 'Virginia (eastus2)', cloud_provider: 'azure', country: 'usa', deployment_models: ['LOCAL'] },
  { id: 'azure-westus', name: 'California (westus)', cloud_provider: 'azure', country: 'usa', deployment_models: ['LOCAL'] },
  { id: 'azure-westeurope', name: 'Netherlands (westeurope)', cloud_provider: 'azure', country: 'nld', deployment_models: ['LOCAL'] },
  { id: 'azure-eastasia', name: 'Hong Kong (eastasia)', cloud_provider: 'azure', country: 'hkg', deployment_models: ['LOCAL'] },
  { id: 'azure-southeastasia', name: 'Singapore (southeastasia)', cloud_provider: 'azure', country: 'sgp', deployment_models: ['LOCAL'] },
  { id: 'gcp-us-central1', name: 'Iowa (us-central1)', cloud_provider: 'gcp', country: 'usa', deployment_models: ['LOCAL'] },
  { id: 'gcp-us-east4', name: 'Virginia (us-east4)', cloud_provider: 'gcp', country: 'usa', deployment_models: ['LOCAL'] },
  { id: 'gcp-us-west1', name: 'Oregon (us-west1)', cloud_provider: 'gcp', country: 'usa', deployment_models: ['LOCAL'] },
  { id: 'gcp-europe-west1', name: 'Belgium (europe-west1)', cloud_provider: 'gcp', country: 'bel', deployment_models: ['LOCAL'] },
  { id: 'gcp-asia-south1', name: 'Mumbai (asia-south1)', cloud_provider: 'gcp', country: 'ind', deployment_models: ['LOCAL'] },
];
