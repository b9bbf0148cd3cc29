// What a push keeps of the deployed app's cluster links. Stitch template exports (`stitch-cli export
// --as-template`) drop the cluster name of each cluster service, and were imported into an app that already
// linked one (`stitch-cli import --strategy=replace`), which kept its link: a pushed cluster service that
// names no cluster keeps the cluster the deployed service of the same name links. Pure: changes the
// incoming model, returns warnings; a service with no deployed counterpart is left for the validator.

import { isPlainObject } from './json';
import { type AppConfig, isDataSourceType, isFederatedType } from './model';
import { type FileLocator } from './origins';
import { layoutPaths as at } from './paths';
import { type ConfigViolation } from './violations';

export function keepLinkedClusters(incoming: AppConfig, deployed: AppConfig, fileOf?: FileLocator): ConfigViolation[] {
  const warnings: ConfigViolation[] = [];
  for (const service of incoming.services) {
    const { type, name } = service.config;
    if (!isDataSourceType(type) || isFederatedType(type)) continue;
    const config = isPlainObject(service.config.config) ? service.config.config : undefined;
    if (config && (config.clusterName !== undefined || config.dataLakeName !== undefined)) continue;
    const linked = deployed.services.find((s) => s.config.name === name && s.config.type === type)?.config.config?.clusterName;
    if (typeof linked !== 'string' || linked === '') continue;
    service.config.config = { clusterName: linked, ...config };
    const where = fileOf?.(service.config, 'config.clusterName') ?? { file: `${at.serviceDir(service)}/config.json`, path: 'config.clusterName' };
    warnings.push({ ...where, rule: 'datasource.link.kept', message: `${String(name)} names no cluster: it keeps the cluster the app links, ${linked}` });
  }
  return warnings;
}
