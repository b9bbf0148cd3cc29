import { randomBytes } from 'node:crypto';
import { makeTempDir, type NatsServerHandle, type ServerProcess, startNatsServer, startOnFreePort, startServerProcess } from '@tessera/testing';

export type ServiceName = 'admin-api' | 'graphql-gateway' | 'function-runtime' | 'sync-service' | 'datastore';

export const adminPassword = 'distributed-admin-password';

/**
 * A distributed Tessera on this machine: a real nats-server on a random port and each service as its own
 * `node apps/server/dist/main.js` process (TESSERA_MODE=distributed, one TESSERA_SERVICES each), sharing a
 * signing key as replicas share a Secret. The `datastore` service starts first, in a data directory of its
 * own, and every other process reaches all clusters (the app's and `tessera-platform`, where the platform
 * state lives) through it by URI (`TESSERA_CLUSTER_URIS=*=mongodb://...`). Every process has a data
 * directory of its own, as pods without a shared volume: nothing is shared but NATS and the datastore.
 */
export class Cluster {
  readonly processes = new Map<ServerProcess, ServiceName>();
  /** The data directory each process was started with. */
  readonly dataDirs = new Map<ServerProcess, string>();
  /** Connection string of the datastore service. */
  datastoreUri = '';
  private readonly temporary: { remove(): void }[] = [];
  private datastorePort = '';
  private datastorePassword: Record<string, string> = {};

  private constructor(
    readonly nats: NatsServerHandle,
    readonly datastoreDir: { path: string; remove(): void },
    private env: Record<string, string>,
  ) {}

  /** `datastorePassword`: the datastore requires it (SCRAM-SHA-256) and the others' URI carries it. */
  static async start(options: { runtimes?: number; env?: Record<string, string>; serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>; datastorePassword?: string } = {}): Promise<Cluster> {
    const nats = await startNatsServer();
    const datastoreDir = makeTempDir('tessera-distributed-datastore-');
    const cluster = new Cluster(nats, datastoreDir, {
      TESSERA_MODE: 'distributed',
      NATS_URL: nats.url,
      TESSERA_SIGNING_KEY: randomBytes(32).toString('base64'),
      TESSERA_SECRETS_KEY: randomBytes(32).toString('base64'),
      TESSERA_ADMIN_PASSWORD: adminPassword,
      TESSERA_EXAMPLE_APP: '',
      ...options.env,
    });
    const names: ServiceName[] = ['admin-api', 'graphql-gateway', 'sync-service', ...Array.from({ length: options.runtimes ?? 1 }, () => 'function-runtime' as const)];
    try {
      // The datastore first: the others connect to it. Its port is drawn below the kernel's ephemeral range,
      // since restartDatastore takes the same port again: one the kernel handed out could meanwhile be the
      // local end of some outgoing connection.
      cluster.datastorePassword = options.datastorePassword ? { TESSERA_DATASTORE_PASSWORD: options.datastorePassword } : {};
      const port = await cluster.startDatastore(datastoreDir.path, options.serviceEnv?.datastore);
      cluster.datastorePort = port;
      const credentials = options.datastorePassword ? `tessera:${encodeURIComponent(options.datastorePassword)}@` : '';
      cluster.datastoreUri = `mongodb://${credentials}127.0.0.1:${port}/?directConnection=true`;
      cluster.env.TESSERA_CLUSTER_URIS = `*=${cluster.datastoreUri}`;
      // The admin API bootstraps the platform (first administrator); the others only read it.
      await cluster.startService('admin-api', options.serviceEnv?.['admin-api']);
      await Promise.all(names.slice(1).map((name) => cluster.startService(name, options.serviceEnv?.[name])));
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  async startService(name: ServiceName, env: Record<string, string> = {}): Promise<ServerProcess> {
    const dataDir = makeTempDir(`tessera-distributed-${name}-`);
    this.temporary.push(dataDir);
    const started = await startServerProcess({ env: { ...this.env, TESSERA_SERVICES: name, TESSERA_DATA_DIR: dataDir.path, ...env }, timeoutMs: 90_000 });
    this.processes.set(started, name);
    this.dataDirs.set(started, env.TESSERA_DATA_DIR ?? dataDir.path);
    return started;
  }

  /** Starts the datastore service on a free port (another one if that was taken before it listened); answers the port. */
  private startDatastore(dataDir: string, env: Record<string, string> = {}): Promise<string> {
    return startOnFreePort(async (port) => {
      await this.startService('datastore', { TESSERA_DATA_DIR: dataDir, TESSERA_DATASTORE_PORT: String(port), ...this.datastorePassword, ...env });
      return String(port);
    });
  }

  /** Stops the datastore service (SIGTERM) and starts it again on the same port and data directory; resolves with the exit code. */
  async restartDatastore(): Promise<number | null> {
    const code = await this.stopService(this.one('datastore'));
    await this.startService('datastore', { TESSERA_DATA_DIR: this.datastoreDir.path, TESSERA_DATASTORE_PORT: this.datastorePort, ...this.datastorePassword });
    return code;
  }

  /** Stops one process with `signal` and forgets it; resolves with its exit code. */
  async stopService(process: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    this.processes.delete(process);
    return process.stop(signal);
  }

  all(name: ServiceName): ServerProcess[] {
    return [...this.processes].filter(([, service]) => service === name).map(([process]) => process);
  }

  one(name: ServiceName): ServerProcess {
    const found = this.all(name)[0];
    if (!found) throw new Error(`no ${name} process is running`);
    return found;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.keys()].map((process) => process.stop()));
    this.processes.clear();
    await this.nats.stop();
    for (const dir of this.temporary) dir.remove();
    this.datastoreDir.remove();
  }
}

/** The app pushed into the cluster: functions, an owner-only collection with a schema (GraphQL), anonymous login. */
export function distributedApp(name: string, greeting = 'hello'): Map<string, string> {
  const files = new Map<string, string>();
  files.set('config.json', JSON.stringify({ name, config_version: 20210101 }));
  files.set('auth_providers/anon-user.json', JSON.stringify({ name: 'anon-user', type: 'anon-user', disabled: false }));
  files.set('functions/sum/config.json', JSON.stringify({ name: 'sum', private: false }));
  files.set('functions/sum/source.js', 'exports = function (...numbers) { return numbers.reduce((total, n) => total + n, 0); };');
  files.set('functions/greet/config.json', JSON.stringify({ name: 'greet', private: false }));
  files.set('functions/greet/source.js', `exports = function (who) { return { greeting: '${greeting}, ' + who }; };`);
  files.set('services/mongodb-atlas/config.json', JSON.stringify({ name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'DistributedCluster' } }));
  files.set(
    'services/mongodb-atlas/rules/shop.notes.json',
    JSON.stringify({
      database: 'shop',
      collection: 'notes',
      filters: [],
      roles: [{ name: 'owner', apply_when: { owner_id: '%%user.id' }, read: true, write: true, insert: true, delete: true, search: true }],
      schema: { title: 'note', bsonType: 'object', required: ['text'], properties: { _id: { bsonType: 'objectId' }, owner_id: { bsonType: 'string' }, text: { bsonType: 'string' } } },
    }),
  );
  return files;
}

export async function postJson<T = unknown>(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Anonymous login against the client API: the tokens realm-web would keep. */
export async function anonymousLogin(gatewayUrl: string, clientAppId: string): Promise<{ access_token: string; refresh_token: string; user_id: string }> {
  const login = await postJson<{ access_token: string; refresh_token: string; user_id: string }>(`${gatewayUrl}/api/client/v2.0/app/${clientAppId}/auth/providers/anon-user/login`, {});
  if (login.status !== 200) throw new Error(`anonymous login: ${login.status} ${JSON.stringify(login.body)}`);
  return login.body;
}

/** `POST .../functions/call` as realm-web sends it; answers status and the EJSON body. */
export function callFunction(gatewayUrl: string, clientAppId: string, accessToken: string, name: string, args: unknown[], headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  return postJson(`${gatewayUrl}/api/client/v2.0/app/${clientAppId}/functions/call`, { name, arguments: args }, { authorization: `Bearer ${accessToken}`, ...headers });
}
