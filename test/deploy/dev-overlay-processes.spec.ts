import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { allServiceNames, type ServiceName } from '@tessera/settings';
import { eventually, findNatsServer, freePort, makeTempDir, natsSkipReason, repositoryRoot, startServerProcess, type ServerProcess } from '@tessera/testing';
import { envPairs, execForm, parseDockerfile } from './dockerfile';
import {
  all,
  containerEnvironment,
  deploymentName,
  directories,
  kubectlInstalled,
  kubectlSkipReason,
  one,
  render,
  serverContainer,
  type ConfigMap,
  type Workload,
} from './rendered-manifests';

// Runs what the dev overlay describes, without Kubernetes: nats-server with the rendered nats.conf and the
// StatefulSet's arguments, then each of the four services as the image would start it (the Dockerfile's
// ENV and CMD) with the environment its Deployment gives the container, and polls the probe paths the
// manifests declare. Only what a laptop cannot provide is replaced: ports, directories, and MongoDB (the
// processes fall back to the embedded datastore).
//
// Skipped without kubectl (renders the manifests), without nats-server, or before a build (`npm test`
// builds first; the image runs apps/server/dist/main.js).
const serverEntry = join(repositoryRoot, 'apps/server/dist/main.js');
const skipReason = !kubectlInstalled
  ? kubectlSkipReason
  : !findNatsServer()
    ? natsSkipReason
    : !existsSync(serverEntry)
      ? 'apps/server/dist/main.js is missing: run `npm run build` first (npm test does)'
      : undefined;

interface NatsVarz {
  server_name: string;
  jetstream?: { config?: { store_dir: string; max_storage: number } };
}

/** Replaces one `key: value` line of a NATS configuration; fails when the line is not there. */
function setNatsOption(config: string, key: string, value: string): string {
  const line = new RegExp(`^(\\s*${key}:\\s*).*$`, 'm');
  if (!line.test(config)) throw new Error(`nats.conf has no ${key} line`);
  return config.replace(line, `$1${value}`);
}

describe.skipIf(skipReason !== undefined)(`the dev overlay's processes, run outside Kubernetes${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  const scratch = makeTempDir('tessera-dev-overlay-');
  const servers = new Map<ServiceName, ServerProcess>();
  let nats: ChildProcess | undefined;
  let natsClientPort = 0;
  let natsMonitorPort = 0;
  let objects: Awaited<ReturnType<typeof render>> = [];
  let natsWorkload: Workload;

  beforeAll(async () => {
    objects = await render(directories.dev);

    natsWorkload = one<Workload>(objects, 'StatefulSet', 'nats');
    const natsContainer = natsWorkload.spec.template.spec.containers[0];
    const configMount = natsContainer.volumeMounts!.find((mount) => mount.name === 'config')!;
    const natsConfig = all<ConfigMap>(objects, 'ConfigMap').find((map) => map.data['nats.conf'] !== undefined)!;
    natsClientPort = await freePort();
    natsMonitorPort = await freePort();
    let config = natsConfig.data['nats.conf'];
    config = setNatsOption(config, 'port', String(natsClientPort));
    config = setNatsOption(config, 'http_port', String(natsMonitorPort));
    config = setNatsOption(config, 'store_dir', join(scratch.path, 'nats-data'));
    config = setNatsOption(config, 'pid_file', join(scratch.path, 'nats.pid'));
    const configDirectory = join(scratch.path, 'nats-config');
    mkdirSync(configDirectory);
    writeFileSync(join(configDirectory, 'nats.conf'), config);
    const args = (natsContainer.args ?? []).map((arg) => (arg.startsWith(`${configMount.mountPath}/`) ? join(configDirectory, relative(configMount.mountPath, arg)) : arg));
    nats = spawn(findNatsServer()!, args, { env: { ...process.env, POD_NAME: `${natsWorkload.metadata.name}-0` }, stdio: 'ignore' });
    // Ready as its readiness probe says (JetStream included), polled with a deadline generous enough for a
    // busy machine: the port refuses connections until the server has started.
    const natsReadiness = natsContainer.readinessProbe?.httpGet?.path ?? '/healthz';
    await eventually(async () => (await fetch(`http://127.0.0.1:${natsMonitorPort}${natsReadiness}`)).ok, { timeoutMs: 30_000, intervalMs: 100 });

    const dockerfile = parseDockerfile(readFileSync(join(repositoryRoot, 'Dockerfile'), 'utf8'));
    const runtime = dockerfile.stages.at(-1)!.instructions;
    const imageEnvironment = Object.assign({}, ...runtime.filter((instruction) => instruction.keyword === 'ENV').map(envPairs)) as Record<string, string>;
    const [executable, ...commandArgs] = execForm(runtime.filter((instruction) => instruction.keyword === 'CMD').at(-1)!);
    expect(executable).toBe('node');

    await Promise.all(
      allServiceNames.map(async (service) => {
        const container = serverContainer(one<Workload>(objects, 'Deployment', deploymentName(service)));
        // Kubernetes puts the container's environment over the image's.
        const environment = { ...imageEnvironment, ...containerEnvironment(objects, container) };
        expect(Number(environment.PORT)).toBe(container.ports?.find((port) => port.name === 'http')?.containerPort);
        const natsUrl = new URL(environment.NATS_URL);
        expect(`${natsUrl.hostname}:${natsUrl.port}`).toBe('nats:4222');
        delete environment.PORT; // startServerProcess picks a free one
        delete environment.TESSERA_CLUSTER_URIS; // no MongoDB here: the embedded datastore stands in
        environment.NATS_URL = `nats://127.0.0.1:${natsClientPort}`;
        environment.TESSERA_DATA_DIR = join(scratch.path, service);
        servers.set(service, await startServerProcess({ command: [process.execPath, ...commandArgs], env: environment, timeoutMs: 60_000 }));
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...servers.values()].map((server) => server.stop('SIGKILL')));
    nats?.kill('SIGKILL');
    scratch.remove();
  });

  it('starts NATS from the rendered configuration, named after its pod, with JetStream on its volume', async () => {
    const container = natsWorkload.spec.template.spec.containers[0];
    for (const probe of [container.livenessProbe, container.readinessProbe]) {
      expect((await fetch(`http://127.0.0.1:${natsMonitorPort}${probe!.httpGet!.path}`)).status).toBe(200);
    }
    const varz = (await (await fetch(`http://127.0.0.1:${natsMonitorPort}/varz`)).json()) as NatsVarz;
    expect(varz.server_name).toBe('nats-0');
    expect(varz.jetstream?.config?.store_dir).toContain(join(scratch.path, 'nats-data'));
    expect(varz.jetstream?.config?.max_storage).toBe(8 * 1024 ** 3);
  });

  it.each(allServiceNames)('starts %s with its Deployment environment and the image command, and passes its probes', async (service) => {
    const server = servers.get(service)!;
    const container = serverContainer(one<Workload>(objects, 'Deployment', deploymentName(service)));
    for (const probe of [container.startupProbe, container.livenessProbe]) {
      expect((await fetch(`${server.url}${probe!.httpGet!.path}`)).status).toBe(200);
    }
    // Readiness follows the transports' connections: poll it as the kubelet does, with a deadline.
    const ready = await eventually(async () => {
      const response = await fetch(`${server.url}${container.readinessProbe!.httpGet!.path}`);
      expect(response.status).toBe(200);
      return response;
    }, { timeoutMs: 20_000, intervalMs: 100 });
    expect(await ready.json()).toMatchObject({ mode: 'distributed', services: [service] });
  });

  it('stops every service on SIGTERM well within its termination grace period', async () => {
    const timings = await Promise.all(
      allServiceNames.map(async (service) => {
        const deployment = one<Workload>(objects, 'Deployment', deploymentName(service));
        const grace = deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30;
        const started = Date.now();
        const code = await servers.get(service)!.stop('SIGTERM');
        return { service, code, seconds: (Date.now() - started) / 1000, grace };
      }),
    );
    for (const { service, code, seconds, grace } of timings) {
      // 0 from main.ts's handler, or null when Nest's shutdown hook re-raises SIGTERM after closing the app
      // (exit status 143 in Kubernetes). Either way the process ended on its own: the helper only sends
      // SIGKILL after 10 s, and the bound below is under that.
      expect([0, null], service).toContain(code);
      // The preStop hook takes 5 s of the grace period before SIGTERM arrives.
      expect(seconds, service).toBeLessThan(Math.min(grace - 5, 9.5));
    }
  });
});
