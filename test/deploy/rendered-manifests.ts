/**
 * The Kustomize manifests under deploy/kustomize, rendered offline with `kubectl kustomize` and parsed into
 * plain objects, with the few Kubernetes types the deploy tests read. Test-only code.
 */
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ServiceName } from '@tessera/settings';
import { repositoryRoot } from '@tessera/testing';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from './kubernetes-schemas';

const run = promisify(execFile);

export const kubectlInstalled = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
export const kubectlSkipReason = 'kubectl is not installed (it renders the Kustomize manifests offline)';

export type Rendering = 'base' | 'dev' | 'production';
export const directories: Record<Rendering, string> = {
  base: 'deploy/kustomize/base',
  dev: 'deploy/kustomize/overlays/dev',
  production: 'deploy/kustomize/overlays/production',
};

export interface Probe {
  httpGet?: { path: string; port: string | number };
}
export interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; runAsNonRoot?: boolean };
  volumeMounts?: { name: string; mountPath: string }[];
}
export interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: Container[]; securityContext?: { runAsNonRoot?: boolean; runAsUser?: number }; terminationGracePeriodSeconds?: number };
}
export interface Workload extends KubernetesObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: PodTemplate;
    serviceName?: string;
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
}
export interface Service extends KubernetesObject {
  spec: { clusterIP?: string; selector: Record<string, string>; ports: { name: string; port: number; targetPort: string | number }[] };
}
export interface Autoscaler extends KubernetesObject {
  spec: { scaleTargetRef: { apiVersion: string; kind: string; name: string }; minReplicas: number; maxReplicas: number };
}
export interface Ingress extends KubernetesObject {
  spec: { rules: { host: string; http: { paths: { path: string; pathType: string; backend: { service: { name: string; port: { name: string } } } }[] } }[] };
}
export interface DisruptionBudget extends KubernetesObject {
  spec: { selector: { matchLabels: Record<string, string> }; minAvailable?: number | string; maxUnavailable?: number | string };
}
export interface ConfigMap extends KubernetesObject {
  data: Record<string, string>;
}
export interface Secret extends KubernetesObject {
  data: Record<string, string>;
}

/** Renders a Kustomize directory (relative to the repository root) into its objects. */
export async function render(directory: string): Promise<KubernetesObject[]> {
  const { stdout } = await run('kubectl', ['kustomize', join(repositoryRoot, directory)], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((document) => {
    if (document.errors.length > 0) throw new Error(`${directory}: ${document.errors.map((error) => error.message).join('; ')}`);
    return document.toJS() as KubernetesObject;
  });
}

export function all<T extends KubernetesObject>(objects: readonly KubernetesObject[], kind: string): T[] {
  return objects.filter((object) => object.kind === kind) as T[];
}

export function one<T extends KubernetesObject>(objects: readonly KubernetesObject[], kind: string, name: string): T {
  const found = all<T>(objects, kind).filter((object) => object.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind} named ${name}, found ${found.length}`);
  return found[0];
}

export const deploymentName = (service: ServiceName): string => `tessera-${service}`;

/** The one container of a Tessera Deployment. */
export function serverContainer(deployment: Workload): Container {
  const [container, ...others] = deployment.spec.template.spec.containers;
  if (others.length > 0) throw new Error(`${deployment.metadata.name} runs ${others.length + 1} containers, expected one`);
  return container;
}

export function envValue(container: Container, name: string): string | undefined {
  return container.env?.find((variable) => variable.name === name)?.value;
}

/**
 * The environment a container sees: its ConfigMap and Secret (envFrom, in order), then its own `env`,
 * which wins. A Secret the rendering does not contain (production creates it out of band) adds nothing.
 */
export function containerEnvironment(objects: readonly KubernetesObject[], container: Container): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(environment, one<ConfigMap>(objects, 'ConfigMap', source.configMapRef.name).data);
    const secret = source.secretRef && all<Secret>(objects, 'Secret').find((candidate) => candidate.metadata.name === source.secretRef?.name);
    if (secret) for (const [key, value] of Object.entries(secret.data)) environment[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  for (const variable of container.env ?? []) if (variable.value !== undefined) environment[variable.name] = variable.value;
  return environment;
}
