// What a push keeps of the deployed app's cluster links. Stitch template exports (`stitch-cli export
// --as-template`) drop the cluster name of each cluster service, and were imported into an app that already
// linked one (`stitch-cli import --strategy=replace`), which kept its link: a pushed cluster service that
// names no cluster keeps the cluster the deployed service of the same name links. A Stitch app named its
// cluster service as it liked (`thepages-atlas`, `MasterAtlas`) where `tessera apps create --cluster` links
// `mongodb-atlas`: when no deployed service has its name, the one cluster the deployed app links of that
// type is kept (realm-cli's `--cluster-service-name` did the naming at creation). Pure: changes the incoming
// model, returns warnings; a service with no deployed cluster to keep is left for the validator.

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
    const linked = (deployed.services.find((s) => s.config.name === name && s.config.type === type) ?? onlyLinkedCluster(incoming, deployed, type))?.config.config?.clusterName;
    if (typeof linked !== 'string' || linked === '') continue;
    service.config.config = { clusterName: linked, ...config };
    const where = fileOf?.(service.config, 'config.clusterName') ?? { file: `${at.serviceDir(service)}/config.json`, path: 'config.clusterName' };
    warnings.push({ ...where, rule: 'datasource.link.kept', message: `${String(name)} names no cluster: it keeps the cluster the app links, ${linked}` });
  }
  return warnings;
}

/**
 * The deployed app's one service of `type` that links a cluster, when the pushed app has exactly one service
 * of that type naming none and no service of the deployed one's name (which would keep its own link).
 */
function onlyLinkedCluster(incoming: AppConfig, deployed: AppConfig, type: string): AppConfig['services'][number] | undefined {
  const linked = deployed.services.filter((s) => s.config.type === type && typeof s.config.config?.clusterName === 'string' && s.config.config.clusterName !== '');
  if (linked.length !== 1) return undefined;
  const [only] = linked;
  if (incoming.services.some((s) => s.config.name === only.config.name)) return undefined;
  const unlinked = incoming.services.filter((s) => s.config.type === type && !(isPlainObject(s.config.config) && (s.config.config.clusterName !== undefined || s.config.config.dataLakeName !== undefined)));
  return unlinked.length === 1 ? only : undefined;
}
