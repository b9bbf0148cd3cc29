/**
 * Where `tessera data ...` reads and writes an app's data: the cluster its data source links, reached over
 * the MongoDB wire protocol, which works the same whichever engine serves it. Standalone mode's embedded
 * clusters are served by its datastore wire server (loopback, TESSERA_DATASTORE_PORT), a distributed
 * deployment's by the `datastore` service, and a cluster mapped to MongoDB by MongoDB itself (`--uri`).
 * The wire server serves each connection the cluster its `appName` names, so the connection carries it.
 */
import { MongoClient } from 'mongodb';
import type { AdminClient } from '../admin-client';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { unzip } from '../local-files';

export const defaultDatastoreUri = 'mongodb://127.0.0.1:27017/?directConnection=true';

/** One collection rule of the app: its namespace and the indexes it declares. */
export interface AppCollection {
  database: string;
  collection: string;
  indexes: { key: Record<string, number>; name?: string; unique?: boolean; sparse?: boolean }[];
}

export interface DataTarget {
  /** The cluster name (the wire server's `appName`). */
  cluster: string;
  /** The app's collections with rules, when the target is an app's data source. */
  collections?: AppCollection[];
}

export interface TargetOptions {
  remote?: string;
  service?: string;
  cluster?: string;
  uri?: string;
}

/** The cluster an app's data source links (and its collection rules), or the cluster named by --cluster. */
export async function resolveTarget(ctx: CliContext, options: TargetOptions, localAppId: () => Promise<string | undefined>): Promise<DataTarget> {
  if (options.cluster) {
    if (options.remote) throw new CliError('pass either --remote (an app) or --cluster, not both', ExitCode.Usage);
    return { cluster: options.cluster };
  }
  const client: AdminClient = await ctx.client();
  const { app, groupId } = await ctx.resolveApp(client, options.remote ?? (await localAppId()));
  const files = unzip((await client.request('GET', `/groups/${groupId}/apps/${app._id}/pull`)).bytes);
  const json = (path: string): Record<string, unknown> | undefined => {
    const bytes = files.get(path);
    if (!bytes) return undefined;
    try {
      return JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  const services = [...files.keys()]
    .filter((path) => /^services\/[^/]+\/config\.json$/.test(path))
    .map((path) => ({ dir: path.slice(0, -'config.json'.length), config: json(path) ?? {} }))
    .filter(({ config }) => typeof config.type === 'string' && ['mongodb-atlas', 'mongodb', 'datastore-cluster'].includes(config.type));
  const wanted = options.service ?? 'mongodb-atlas';
  const service = services.find(({ config }) => config.name === wanted) ?? (options.service ? undefined : services.length === 1 ? services[0] : undefined);
  if (!service) {
    throw new CliError(`app "${app.name}" has no cluster service "${wanted}"; its cluster services: ${services.map(({ config }) => String(config.name)).join(', ') || 'none'} (pass --service)`, ExitCode.NotFound);
  }
  const settings = (service.config.config ?? {}) as Record<string, unknown>;
  const collections: AppCollection[] = [];
  for (const path of files.keys()) {
    if (!path.startsWith(`${service.dir}rules/`) || !path.endsWith('.json')) continue;
    const rule = json(path);
    if (typeof rule?.database !== 'string' || typeof rule.collection !== 'string') continue;
    collections.push({ database: rule.database, collection: rule.collection, indexes: Array.isArray(rule.indexes) ? (rule.indexes as AppCollection['indexes']) : [] });
  }
  collections.sort((a, b) => `${a.database}.${a.collection}`.localeCompare(`${b.database}.${b.collection}`));
  return { cluster: String(settings.clusterName ?? service.config.name), collections };
}

/**
 * A driver connection to the cluster: `--uri`, else TESSERA_DATASTORE_URI, else standalone mode's wire server
 * on loopback. TESSERA_DATASTORE_PASSWORD (and TESSERA_DATASTORE_USER) authenticate when the URI has no user.
 */
export async function connectDatastore(ctx: CliContext, target: DataTarget, uriOption: string | undefined): Promise<MongoClient> {
  const raw = uriOption ?? ctx.env['TESSERA_DATASTORE_URI'] ?? defaultDatastoreUri;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`--uri is not a MongoDB connection string: ${raw}`, ExitCode.Usage);
  }
  if (url.protocol !== 'mongodb:' && url.protocol !== 'mongodb+srv:') throw new CliError(`--uri must start with mongodb:// or mongodb+srv:// (got ${url.protocol})`, ExitCode.Usage);
  const password = ctx.env['TESSERA_DATASTORE_PASSWORD'];
  if (!url.username && password) {
    url.username = encodeURIComponent(ctx.env['TESSERA_DATASTORE_USER'] ?? 'tessera');
    url.password = encodeURIComponent(password);
  }
  // The wire server picks the cluster by appName; a MongoDB URI that names its own keeps it.
  if (!url.searchParams.has('appName') && !url.searchParams.has('appname')) url.searchParams.set('appName', target.cluster);
  if (!url.searchParams.has('serverSelectionTimeoutMS')) url.searchParams.set('serverSelectionTimeoutMS', '5000');
  const client = new MongoClient(url.toString());
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } catch (error) {
    await client.close().catch(() => undefined);
    const shown = new URL(url.toString());
    if (shown.password) shown.password = '****';
    throw new CliError(
      `cannot reach the cluster "${target.cluster}" at ${shown.toString()}: ${error instanceof Error ? error.message : String(error)} (standalone mode serves it on TESSERA_DATASTORE_PORT; pass --uri, and TESSERA_DATASTORE_PASSWORD when it requires one)`,
      ExitCode.Network,
    );
  }
  return client;
}
