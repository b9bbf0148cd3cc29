import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { allServiceNames, loadSettings, type ServiceName } from '@tessera/settings';
import { findNatsServer, makeTempDir, natsSkipReason } from '@tessera/testing';
import { modelFor, schemaErrors, type KubernetesObject } from './kubernetes-schemas';
import {
  all,
  containerEnvironment,
  deploymentName,
  directories,
  envValue,
  kubectlInstalled,
  kubectlSkipReason,
  one,
  render,
  serverContainer,
  type Autoscaler,
  type ConfigMap,
  type DisruptionBudget,
  type Ingress,
  type Rendering,
  type Secret,
  type Service,
  type Workload,
} from './rendered-manifests';

// Renders deploy/kustomize (base and both overlays) with `kubectl kustomize`, which works offline, checks
// every object against the Kubernetes schemas (kubernetes-models), then checks the structure the
// distributed mode depends on. No cluster is needed.

/** Kubernetes quantities ("250m", "1", "1.5Gi", "512Mi") as plain numbers, for comparisons. */
function quantity(value: string | number | undefined): number {
  if (value === undefined) return Number.NaN;
  const match = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(value));
  if (!match) throw new Error(`not a quantity: ${value}`);
  const scale: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
  const factor = scale[match[2]];
  if (factor === undefined) throw new Error(`unknown quantity suffix in ${value}`);
  return Number(match[1]) * factor;
}

/**
 * The Secret data as the API server decodes it. kustomize wraps long base64 values over several lines,
 * which the API server's decoder accepts (it skips newlines) but the schema's base64 pattern does not.
 */
function asApiServerReadsIt(object: KubernetesObject): KubernetesObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  const data = Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([key, value]) => [key, value.replace(/\s+/g, '')]));
  return { ...object, data };
}

/** Replica count of a service: its Deployment's, or its autoscaler's minimum when one owns the count. */
function replicaCount(objects: readonly KubernetesObject[], service: ServiceName): number {
  const deployment = one<Workload>(objects, 'Deployment', deploymentName(service));
  const autoscaler = all<Autoscaler>(objects, 'HorizontalPodAutoscaler').find((hpa) => hpa.spec.scaleTargetRef.name === deployment.metadata.name);
  return autoscaler ? autoscaler.spec.minReplicas : (deployment.spec.replicas ?? 1);
}

// Skipped where kubectl is missing: it is the renderer, and the manifests cannot be read without it.
describe.skipIf(!kubectlInstalled)(`Kubernetes manifests (${kubectlInstalled ? 'rendered with kubectl kustomize' : `skipped: ${kubectlSkipReason}`})`, () => {
  const rendered = {} as Record<Rendering, KubernetesObject[]>;

  beforeAll(async () => {
    const renderings = Object.entries(directories) as [Rendering, string][];
    const results = await Promise.all(renderings.map(([, directory]) => render(directory)));
    renderings.forEach(([name], index) => (rendered[name] = results[index]!));
  });

  it('renders base, dev and production into objects that all pass the Kubernetes schemas', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const [name, objects] of Object.entries(rendered)) {
      for (const object of objects) {
        for (const error of await schemaErrors(asApiServerReadsIt(object))) problems.push(`${name}: ${object.kind}/${object.metadata.name}: ${error}`);
        checked += 1;
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('fails objects of unknown kinds, wrong types and undeclared fields', async () => {
    await expect(modelFor({ apiVersion: 'apps/v1', kind: 'Deploymnet' })).rejects.toThrow('unknown kind "Deploymnet"');
    await expect(modelFor({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' })).rejects.toThrow('unknown apiVersion');
    const gateway = one<Workload>(rendered.base, 'Deployment', deploymentName('graphql-gateway'));
    const typo = structuredClone(gateway) as Workload & { spec: { replcas?: number } };
    typo.spec.replcas = 3;
    expect(await schemaErrors(typo)).toEqual(['unknown field /spec/replcas']);
    const wrongType = structuredClone(gateway);
    wrongType.spec.template.spec.containers[0].ports![0].containerPort = 'http' as unknown as number;
    expect((await schemaErrors(wrongType)).join()).toContain('containerPort must be integer');
  });

  describe.each(['base', 'dev', 'production'] as const)('the %s rendering', (name) => {
    const objects = (): KubernetesObject[] => rendered[name];

    it('runs each service as its own Deployment in distributed mode with its TESSERA_SERVICES', () => {
      const deployments = all<Workload>(objects(), 'Deployment');
      expect(deployments.map((deployment) => deployment.metadata.name).sort()).toEqual(allServiceNames.map(deploymentName).sort());
      const images = new Set<string>();
      for (const service of allServiceNames) {
        const container = serverContainer(one<Workload>(objects(), 'Deployment', deploymentName(service)));
        expect(envValue(container, 'TESSERA_MODE')).toBe('distributed');
        expect(envValue(container, 'TESSERA_SERVICES')).toBe(service);
        images.add(container.image);
      }
      expect(images.size, 'one image for every service').toBe(1);
    });

    it('probes /healthz for liveness and /readyz for readiness, and sets resource requests and limits', () => {
      for (const service of allServiceNames) {
        const container = serverContainer(one<Workload>(objects(), 'Deployment', deploymentName(service)));
        expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
        expect(container.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
        for (const resource of ['cpu', 'memory']) {
          const request = quantity(container.resources?.requests?.[resource]);
          const limit = quantity(container.resources?.limits?.[resource]);
          expect(request, `${service} ${resource} request`).toBeGreaterThan(0);
          expect(limit, `${service} ${resource} limit`).toBeGreaterThanOrEqual(request);
        }
      }
    });

    it('runs every container as a non-root user without privilege escalation', () => {
      const workloads = [...all<Workload>(objects(), 'Deployment'), ...all<Workload>(objects(), 'StatefulSet')];
      for (const workload of workloads) {
        const pod = workload.spec.template.spec;
        expect(pod.securityContext?.runAsNonRoot, workload.metadata.name).toBe(true);
        expect(pod.securityContext?.runAsUser, workload.metadata.name).toBeGreaterThan(0);
        for (const container of pod.containers) expect(container.securityContext?.allowPrivilegeEscalation, container.name).toBe(false);
      }
      for (const service of allServiceNames) {
        const container = serverContainer(one<Workload>(objects(), 'Deployment', deploymentName(service)));
        expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
        expect(container.volumeMounts?.map((mount) => mount.mountPath)).toContain('/var/lib/tessera');
      }
    });

    it("gives each service an environment that passes the server's own settings validation", () => {
      for (const service of allServiceNames) {
        const container = serverContainer(one<Workload>(objects(), 'Deployment', deploymentName(service)));
        const configMapName = container.envFrom?.find((source) => source.configMapRef)?.configMapRef?.name;
        const secretName = container.envFrom?.find((source) => source.secretRef)?.secretRef?.name;
        expect(configMapName, `${service} reads a ConfigMap`).toMatch(/^tessera-config/);
        expect(secretName, `${service} reads a Secret`).toMatch(/^tessera-secrets/);
        // Renderings without the Secret get it out of band (deploy/README.md); its required key stands in here.
        const environment = { TESSERA_SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'), ...containerEnvironment(objects(), container) };
        const settings = loadSettings(environment);
        expect(settings.mode).toBe('distributed');
        expect(settings.services).toEqual([service]);
        expect(settings.port).toBe(8080);
        expect(settings.dataDir).toBe('/var/lib/tessera');
        expect(settings.natsUrl).toBe('nats://nats:4222');
        for (const key of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_SAMPLER_ARG', 'LOG_LEVEL']) expect(environment).toHaveProperty(key);
      }
    });

    it('exposes each service through a Service that selects its pods on the http port', () => {
      for (const service of allServiceNames) {
        const deployment = one<Workload>(objects(), 'Deployment', deploymentName(service));
        const kubernetesService = one<Service>(objects(), 'Service', deploymentName(service));
        expect(deployment.spec.template.metadata.labels).toMatchObject(kubernetesService.spec.selector);
        expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
        expect(kubernetesService.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
        const otherServices = allServiceNames.filter((other) => other !== service).map((other) => one<Workload>(objects(), 'Deployment', deploymentName(other)));
        for (const other of otherServices) expect(other.spec.template.metadata.labels).not.toMatchObject(kubernetesService.spec.selector);
      }
    });

    it('autoscales the gateway and the function runtime, and leaves their replica count to the autoscaler', () => {
      const autoscalers = all<Autoscaler>(objects(), 'HorizontalPodAutoscaler');
      expect(autoscalers.map((hpa) => hpa.apiVersion)).toEqual(['autoscaling/v2', 'autoscaling/v2']);
      expect(autoscalers.map((hpa) => hpa.spec.scaleTargetRef.name).sort()).toEqual([deploymentName('function-runtime'), deploymentName('graphql-gateway')]);
      for (const hpa of autoscalers) {
        expect(hpa.spec.scaleTargetRef.kind).toBe('Deployment');
        const target = one<Workload>(objects(), 'Deployment', hpa.spec.scaleTargetRef.name);
        expect(target.spec.replicas, `${target.metadata.name} has no fixed replica count`).toBeUndefined();
        expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
      }
    });

    it('runs NATS with JetStream on a persistent volume behind a headless Service, where NATS_URL points', () => {
      const nats = one<Workload>(objects(), 'StatefulSet', 'nats');
      const container = nats.spec.template.spec.containers[0];
      expect(container.image).toMatch(/^nats:2\.10(\b|$)/);
      expect(container.args).toContain('-js');
      expect(nats.spec.volumeClaimTemplates?.map((claim) => claim.metadata.name)).toEqual(['data']);
      expect(container.volumeMounts).toContainEqual({ name: 'data', mountPath: '/data' });
      const headless = one<Service>(objects(), 'Service', nats.spec.serviceName!);
      expect(headless.spec.clusterIP).toBe('None');
      expect(nats.spec.template.metadata.labels).toMatchObject(headless.spec.selector);
      const client = one<Service>(objects(), 'Service', 'nats');
      expect(client.spec.ports).toContainEqual({ name: 'client', port: 4222, targetPort: 'client' });
      const config = all<ConfigMap>(objects(), 'ConfigMap').find((map) => map.data['nats.conf'] !== undefined);
      expect(config?.data['nats.conf']).toMatch(/jetstream\s*\{[^}]*store_dir:\s*\/data/);
    });

    it('routes /api/client to the gateway, /api/admin to the admin API and realm-sync to the sync service', () => {
      const routes = all<Ingress>(objects(), 'Ingress').flatMap((ingress) =>
        ingress.spec.rules.flatMap((rule) => rule.http.paths.map((path) => ({ host: rule.host, path: path.path, service: path.backend.service.name, port: path.backend.service.port.name }))),
      );
      expect(routes).toContainEqual(expect.objectContaining({ path: '/api/client', service: deploymentName('graphql-gateway') }));
      expect(routes).toContainEqual(expect.objectContaining({ path: '/api/admin', service: deploymentName('admin-api') }));
      const sync = routes.find((route) => route.service === deploymentName('sync-service'));
      expect(new RegExp(`^${sync!.path}$`).test('/api/client/v2.0/app/todo-abcde/realm-sync')).toBe(true);
      expect(new RegExp(`^${sync!.path}$`).test('/api/client/v2.0/app/todo-abcde/functions/call')).toBe(false);
      expect(new Set(routes.map((route) => route.host)).size, 'one host').toBe(1);
      for (const route of routes) expect(one<Service>(objects(), 'Service', route.service).spec.ports.map((port) => port.name)).toContain(route.port);
    });
  });

  it('runs one replica of each service in dev and more, with larger resources, in production', () => {
    for (const service of allServiceNames) {
      expect(replicaCount(rendered.dev, service), `dev ${service}`).toBe(1);
      expect(replicaCount(rendered.production, service), `production ${service}`).toBeGreaterThan(1);
      const dev = serverContainer(one<Workload>(rendered.dev, 'Deployment', deploymentName(service)));
      const production = serverContainer(one<Workload>(rendered.production, 'Deployment', deploymentName(service)));
      expect(quantity(production.resources?.limits?.memory)).toBeGreaterThan(quantity(dev.resources?.limits?.memory));
      expect(quantity(production.resources?.requests?.cpu)).toBeGreaterThan(quantity(dev.resources?.requests?.cpu));
    }
    expect(one<Workload>(rendered.dev, 'StatefulSet', 'nats').spec.replicas).toBe(1);
    expect(one<Workload>(rendered.production, 'StatefulSet', 'nats').spec.replicas).toBe(3);
    const productionNatsConfig = all<ConfigMap>(rendered.production, 'ConfigMap').find((map) => map.data['nats.conf'] !== undefined);
    for (const ordinal of [0, 1, 2]) expect(productionNatsConfig?.data['nats.conf']).toContain(`nats://nats-${ordinal}.nats-headless:6222`);
  });

  it('places every object of an overlay in the namespace the overlay creates', () => {
    for (const [name, expected] of [['dev', 'tessera-dev'], ['production', 'tessera']] as const) {
      expect(all(rendered[name], 'Namespace').map((namespace) => namespace.metadata.name)).toEqual([expected]);
      const elsewhere = rendered[name].filter((object) => object.kind !== 'Namespace' && object.metadata.namespace !== expected);
      expect(elsewhere.map((object) => `${object.kind}/${object.metadata.name}`), name).toEqual([]);
    }
  });

  it('protects every production workload with a PodDisruptionBudget that selects exactly its pods', () => {
    const budgets = all<DisruptionBudget>(rendered.production, 'PodDisruptionBudget');
    const workloads = [...all<Workload>(rendered.production, 'Deployment'), ...all<Workload>(rendered.production, 'StatefulSet')];
    expect(budgets).toHaveLength(workloads.length);
    for (const workload of workloads) {
      const covering = budgets.filter((budget) => Object.entries(budget.spec.selector.matchLabels).every(([key, value]) => workload.spec.template.metadata.labels[key] === value));
      expect(covering.map((budget) => budget.metadata.name), workload.metadata.name).toEqual([workload.metadata.name]);
    }
    expect(all(rendered.dev, 'PodDisruptionBudget')).toEqual([]);
  });

  it('generates development secrets in dev only; production references a Secret it does not contain', () => {
    const devSecret = all<Secret>(rendered.dev, 'Secret');
    expect(devSecret).toHaveLength(1);
    expect(Object.keys(devSecret[0].data).sort()).toEqual(['TESSERA_ADMIN_PASSWORD', 'TESSERA_CLUSTER_URIS', 'TESSERA_SECRETS_KEY', 'TESSERA_SIGNING_KEY']);
    const uris = Buffer.from(devSecret[0].data.TESSERA_CLUSTER_URIS, 'base64').toString('utf8');
    // Every cluster, the platform's own (tessera-platform) included, so the replicas share their state.
    expect(uris).toMatch(/^\*=mongodb:\/\/mongodb-0\.mongodb:27017\//);
    expect(all(rendered.production, 'Secret')).toEqual([]);
    for (const service of allServiceNames) {
      const container = serverContainer(one<Workload>(rendered.production, 'Deployment', deploymentName(service)));
      expect(container.envFrom).toContainEqual({ secretRef: { name: 'tessera-secrets' } });
    }
  });

  // nats-server checks the configuration files it would be given; skipped where it is not installed.
  it.skipIf(!findNatsServer())(`writes NATS configurations that nats-server accepts${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
    const directory = makeTempDir('tessera-nats-conf-');
    try {
      for (const name of ['dev', 'production'] as const) {
        const config = all<ConfigMap>(rendered[name], 'ConfigMap').find((map) => map.data['nats.conf'] !== undefined)!;
        const file = join(directory.path, `${name}.conf`);
        writeFileSync(file, config.data['nats.conf']);
        const check = spawnSync(findNatsServer()!, ['-t', '-c', file], { encoding: 'utf8', env: { ...process.env, POD_NAME: 'nats-0' } });
        expect(check.status, `${name}: ${check.stderr}${check.stdout}`).toBe(0);
      }
    } finally {
      directory.remove();
    }
  });
});

