import type { AppConfig, AppService } from '@tessera/app-config';
import { compileRules, type CompiledRules, type RuleSetConfig } from '@tessera/rules';

/**
 * Compiled rules per app deployment and namespace. Rules are compiled on first use and kept until the
 * deployment changes: a new deployment key starts a fresh cache, so edited rules apply at once.
 */
export class NamespaceRulesCache {
  private readonly byDeployment = new Map<string, Map<string, CompiledRules>>();

  rulesFor(deploymentKey: string, service: AppService, database: string, collection: string): CompiledRules {
    let namespaces = this.byDeployment.get(deploymentKey);
    if (!namespaces) {
      namespaces = new Map();
      this.byDeployment.set(deploymentKey, namespaces);
      // Deployments only move forward; a handful of live keys covers replicas that lag one behind.
      if (this.byDeployment.size > 64) this.byDeployment.delete(this.byDeployment.keys().next().value as string);
    }
    const key = `${service.config.name}\u0000${database}\u0000${collection}`;
    let compiled = namespaces.get(key);
    if (!compiled) {
      const rule = service.collectionRules.find((candidate) => candidate.database === database && candidate.collection === collection);
      compiled = compileRules(rule as RuleSetConfig | undefined, service.defaultRule as RuleSetConfig | undefined, { namespace: `${database}.${collection}` });
      namespaces.set(key, compiled);
    }
    return compiled;
  }
}

/** A stable key of an app's live configuration: the deployment id when deployed. */
export function deploymentKey(appId: string, deploymentId: string | undefined, config: AppConfig): string {
  return deploymentId ? `${appId}:${deploymentId}` : `${appId}:undeployed:${config.services.length}`;
}
