/**
 * Server settings, parsed and validated once at boot into one typed object. Nothing else in the code base
 * reads process.env: the process entry point passes its environment here and hands the result down.
 * A bad setting stops the process with a message naming the setting.
 */
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';

const appServiceNames = ['admin-api', 'graphql-gateway', 'function-runtime', 'sync-service'] as const;
/** `datastore` (the MongoDB wire server over the embedded engine) runs only where a process names it. */
const serviceNames = [...appServiceNames, 'datastore'] as const;
export type ServiceName = (typeof serviceNames)[number];
/** The services standalone mode runs, and a distributed process without TESSERA_SERVICES. */
export const allServiceNames: readonly ServiceName[] = appServiceNames;

const port = z.coerce.number().int().min(0).max(65_535);

/**
 * The example app created on an empty platform: `examples/todo` of the installation this module belongs to
 * (libs/settings/dist -> the repository or image root), so that a process started from any directory finds it.
 */
export const DEFAULT_EXAMPLE_APP = resolve(__dirname, '..', '..', '..', 'examples', 'todo');

/**
 * `name=uri` pairs separated by commas, or a JSON object `{ "<clusterName>": "<uri>" }`. The name `*` maps
 * every cluster without an entry of its own (a distributed deployment's one datastore service).
 */
const clusterUris = z.string().transform((raw, ctx): Record<string, string> => {
  const text = raw.trim();
  if (!text) return {};
  let map: Record<string, string> = {};
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // reported below
    }
    const result = z.record(z.string(), z.string()).safeParse(parsed);
    if (!result.success) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'expected a JSON object of cluster name to MongoDB URI' });
      return z.NEVER;
    }
    map = result.data;
  } else {
    for (const pair of text.split(',')) {
      const at = pair.indexOf('=');
      if (at <= 0) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `expected name=uri, got "${pair}"` });
        return z.NEVER;
      }
      map[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
    }
  }
  for (const [name, uri] of Object.entries(map)) {
    if (!name || /[/\\]|^\.\.?$/.test(name)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `invalid cluster name "${name}"` });
      return z.NEVER;
    }
    if (!/^mongodb(\+srv)?:\/\/[^/?#]+/.test(uri)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `cluster "${name}": expected a mongodb:// or mongodb+srv:// URI, got "${uri}"` });
      return z.NEVER;
    }
  }
  return map;
});

/** An interface to listen on: an IPv4 or IPv6 address, or a host name. */
const listenHost = z
  .string()
  .trim()
  .refine((value) => isIP(value) !== 0 || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(value), {
    message: 'expected an IP address or a host name',
  });

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/**
 * `<base64 of 32 bytes>[,<older key>...]`: the first key encrypts, every key decrypts (rotation: put the new
 * key first, keep the old one until every record was rewritten).
 */
const secretsKeys = z.string().transform((raw, ctx): Buffer[] => {
  const keys: Buffer[] = [];
  for (const [index, text] of raw.split(',').map((part) => part.trim()).entries()) {
    const key = /^[A-Za-z0-9+/]{43}=$|^[A-Za-z0-9_-]{43}$/.test(text) ? Buffer.from(text, /[_-]/.test(text) ? 'base64url' : 'base64') : undefined;
    if (!key || key.length !== 32) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `key ${index + 1}: must be base64 of exactly 32 bytes (openssl rand -base64 32)` });
      return z.NEVER;
    }
    keys.push(key);
  }
  return keys;
});

/**
 * Where functions' `context.http` may connect besides public addresses: comma-separated CIDR blocks
 * (`10.1.0.0/16`, `::1/128`), single addresses, host names (`localhost`, `*.svc.cluster.local`), or `*` for
 * everything.
 */
const egressAllowList = z.string().transform((raw, ctx): string[] => {
  const entries = raw.split(',').map((part) => part.trim().toLowerCase()).filter(Boolean);
  for (const entry of entries) {
    if (entry === '*') continue;
    const slash = entry.indexOf('/');
    if (slash >= 0) {
      const address = entry.slice(0, slash);
      const prefix = entry.slice(slash + 1);
      const family = isIP(address);
      if (family !== 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)) continue;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `"${entry}" is not a CIDR block (address/prefix length)` });
      return z.NEVER;
    }
    if (isIP(entry.replace(/^\[(.*)\]$/, '$1')) !== 0) continue;
    if (/^(\*\.)?(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?)*\.?$/.test(entry)) continue;
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: `"${entry}" is neither a CIDR block, an IP address nor a host name` });
    return z.NEVER;
  }
  return entries.map((entry) => entry.replace(/^\[(.*)\]$/, '$1'));
});

const environmentSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  TESSERA_PUBLIC_URL: z.string().url().optional(),
  TESSERA_DATA_DIR: z.string().min(1).default('./.tessera'),
  TESSERA_MODE: z.enum(['standalone', 'distributed']).default('standalone'),
  TESSERA_SERVICES: z
    .string()
    .default('')
    .transform((raw, ctx) => {
      const names = raw.split(',').map((name) => name.trim()).filter(Boolean);
      for (const name of names) {
        if (!(serviceNames as readonly string[]).includes(name)) {
          ctx.addIssue({ code: z.ZodIssueCode.custom, message: `unknown service "${name}" (expected ${serviceNames.join(', ')})` });
          return z.NEVER;
        }
      }
      return names as ServiceName[];
    }),
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  // `off`: standalone mode runs no datastore wire server (the distributed `datastore` service always does).
  TESSERA_DATASTORE_PORT: z.union([z.literal('off'), port]).default(27017),
  // Loopback unless the deployment says otherwise (a pod: 0.0.0.0), and then only with a password.
  TESSERA_DATASTORE_HOST: listenHost.default('127.0.0.1'),
  TESSERA_CLUSTER_URIS: clusterUris.default(''),
  // The datastore service's one user (SCRAM-SHA-256); the other processes put it in TESSERA_CLUSTER_URIS.
  TESSERA_DATASTORE_USER: z.string().min(1).default('tessera'),
  TESSERA_DATASTORE_PASSWORD: z.string().min(12, 'must be at least 12 characters (openssl rand -base64 24)').optional(),
  // The cluster of wire connections whose handshake names none (MongoDB's tools, which name themselves).
  TESSERA_DATASTORE_DEFAULT_CLUSTER: z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/, 'expected a cluster name (letters, digits, _ - .)').default('Cluster0'),
  TESSERA_DATASTORE_TLS_CERT: z.string().min(1).optional(),
  TESSERA_DATASTORE_TLS_KEY: z.string().min(1).optional(),
  // The apps' MongoDB wire endpoint (wireProtocolEnabled): off unless a port is given.
  TESSERA_WIRE_PORT: port.optional(),
  TESSERA_WIRE_HOST: listenHost.optional(),
  TESSERA_WIRE_TLS_CERT: z.string().min(1).optional(),
  TESSERA_WIRE_TLS_KEY: z.string().min(1).optional(),
  // Recovery from a corrupt log: the point its refusal message names (`<segment file>:<byte offset>`).
  TESSERA_DATASTORE_TRUNCATE_LOG: z
    .string()
    .regex(/^.+:\d+$/, 'expected <log segment file>:<byte offset>, as the message refusing the corrupt log prints it')
    .optional(),
  TESSERA_ADMIN_USERNAME: z.string().min(1).default('admin'),
  TESSERA_ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  // Unset: the example app of this installation (DEFAULT_EXAMPLE_APP), wherever the process starts; `none`: no app.
  TESSERA_EXAMPLE_APP: z.string().optional(),
  TESSERA_ALLOW_NEW_PARTITION_SYNC: booleanFlag.default('false'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TESSERA_LOG_REQUEST_IDS: booleanFlag.optional(),
  TESSERA_SIGNING_KEY: z
    .string()
    .transform((raw, ctx) => {
      const key = Buffer.from(raw.trim(), 'base64');
      if (key.length < 32) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be base64 of at least 32 bytes (openssl rand -base64 32)' });
        return z.NEVER;
      }
      return key;
    })
    .optional(),
  TESSERA_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).default(30 * 60),
  TESSERA_REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).default(60 * 24 * 60 * 60),
  TESSERA_ADMIN_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).default(30 * 60),
  TESSERA_ADMIN_REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).default(60 * 24 * 60 * 60),
  TESSERA_SECRETS_KEY: secretsKeys.optional(),
  TESSERA_FUNCTION_HTTP_ALLOW: egressAllowList.default(''),
  TESSERA_FUNCTION_TIME_LIMIT_SECONDS: z.coerce.number().positive().max(24 * 60 * 60).default(300),
  TESSERA_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(24 * 60 * 60).default(10),
  TESSERA_SHUTDOWN_DRAIN_SECONDS: z.coerce.number().min(0).max(60 * 60).default(10),
  TESSERA_APP_REQUESTS_PER_SECOND: z.coerce.number().min(0).max(1_000_000).default(2_000),
  TESSERA_APP_REQUEST_BURST: z.coerce.number().int().min(1).max(10_000_000).optional(),
  TESSERA_OAUTH_GOOGLE_JWKS_URL: z.string().url().default('https://www.googleapis.com/oauth2/v3/certs'),
  TESSERA_OAUTH_GOOGLE_TOKEN_URL: z.string().url().default('https://oauth2.googleapis.com/token'),
  TESSERA_OAUTH_GOOGLE_AUTHORIZE_URL: z.string().url().default('https://accounts.google.com/o/oauth2/v2/auth'),
  TESSERA_OAUTH_FACEBOOK_AUTHORIZE_URL: z.string().url().default('https://www.facebook.com/v18.0/dialog/oauth'),
  TESSERA_OAUTH_APPLE_JWKS_URL: z.string().url().default('https://appleid.apple.com/auth/keys'),
  TESSERA_OAUTH_APPLE_AUTHORIZE_URL: z.string().url().default('https://appleid.apple.com/auth/authorize'),
  TESSERA_OAUTH_APPLE_TOKEN_URL: z.string().url().default('https://appleid.apple.com/auth/token'),
  TESSERA_OAUTH_FACEBOOK_GRAPH_URL: z.string().url().default('https://graph.facebook.com'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_TRACES_SAMPLER: z.enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']).default('parentbased_traceidratio'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_METRIC_EXPORT_INTERVAL: z.coerce.number().int().min(100).max(3_600_000).default(15_000),
});

export type TraceSampler = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

export interface Settings {
  /** Port of the HTTP edge (client API, admin API). */
  port: number;
  host: string;
  /** Base URL clients are told to use (location `hostname`); derived from the request when unset. */
  publicUrl: string | undefined;
  dataDir: string;
  mode: 'standalone' | 'distributed';
  /** In distributed mode, the services this process runs. Standalone runs all of them. */
  services: readonly ServiceName[];
  natsUrl: string;
  /** `config.clusterName` -> MongoDB URI (`*`: every other name). Names without an entry get an embedded database. */
  clusterUris: Record<string, string>;
  /**
   * TCP port of the MongoDB wire server over the embedded clusters (on `datastoreHost`): the `datastore`
   * service's, and standalone mode's beside the other services. Undefined (`off`): standalone runs none.
   */
  datastorePort: number | undefined;
  /** Interface of the datastore wire server; loopback by default, anything wider only with credentials. */
  datastoreHost: string;
  /** `<absolute segment path>:<offset>`: where recovery may discard a corrupt embedded log (docs/security.md). */
  datastoreTruncateLog: string | undefined;
  /** The user the datastore wire server requires (SCRAM-SHA-256); undefined: no authentication (loopback only). */
  datastoreCredentials: { user: string; password: string } | undefined;
  /** PEM files of the datastore wire server's TLS certificate and key. */
  datastoreTls: TlsFiles | undefined;
  /** The cluster a wire connection gets when its handshake's `appName` names none (or is a MongoDB tool's). */
  datastoreDefaultCluster: string;
  /** The apps' MongoDB wire endpoint (spec 2.5 wireProtocolEnabled): off when `port` is undefined. */
  wire: { port: number | undefined; host: string; tls: TlsFiles | undefined };
  admin: { username: string; password: string | undefined };
  /** Absolute path of the app created on an empty platform; '' for none (TESSERA_EXAMPLE_APP=none). */
  exampleAppDir: string;
  allowNewPartitionSync: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Lines logged while an HTTP request is handled carry its `reqId` (TESSERA_LOG_REQUEST_IDS; default: on at
   * LOG_LEVEL debug and trace). It costs every request: on Node 20 the request's logger follows it through an
   * AsyncLocalStorage, which turns on promise hooks for the whole process (a trivial function call: 9-17% more CPU).
   */
  logRequestIds: boolean;
  /** Lifetime of client access tokens (App Services: 30 minutes). */
  accessTokenTtlSeconds: number;
  /** Lifetime of client refresh tokens (App Services: 60 days). */
  refreshTokenTtlSeconds: number;
  /** Lifetime of admin API access tokens (TESSERA_ADMIN_ACCESS_TOKEN_TTL_SECONDS, default 30 minutes). */
  adminAccessTokenTtlSeconds: number;
  /** Lifetime of admin API refresh tokens and their sessions (TESSERA_ADMIN_REFRESH_TOKEN_TTL_SECONDS, default 60 days). */
  adminRefreshTokenTtlSeconds: number;
  /** Key material shared by every replica (TESSERA_SIGNING_KEY); token keys derive from it instead of files. */
  signingKey: Buffer | undefined;
  /**
   * Keys that encrypt secrets and stored signing keys at rest (TESSERA_SECRETS_KEY): the first encrypts,
   * all decrypt. Unset in standalone mode: a key generated into `<dataDir>/secrets.key` is used.
   */
  secretsKeys: readonly Buffer[] | undefined;
  /** Destinations functions' `context.http` may reach although private (TESSERA_FUNCTION_HTTP_ALLOW). */
  functionHttpAllow: readonly string[];
  /** Wall-clock limit of one function call (App Services: 300 s); callers wait this long plus a margin. */
  functionTimeLimitMs: number;
  /** How long a message-bus request waits for its reply when its subject sets no deadline of its own. */
  requestTimeoutMs: number;
  /** On SIGTERM, how long work in flight may finish before running functions are terminated and the process exits. */
  shutdownDrainMs: number;
  /**
   * Each app's request budget on the client-facing HTTP surfaces, per gateway process (token bucket):
   * `requestsPerSecond` sustained (TESSERA_APP_REQUESTS_PER_SECOND, default 2000; 0 turns limiting off) and
   * `burst` at once (TESSERA_APP_REQUEST_BURST, default twice the rate). Requests over it get 429.
   */
  appRequestLimit: { requestsPerSecond: number; burst: number };
  /**
   * Where the OAuth 2.0 providers' keys and endpoints are (TESSERA_OAUTH_*): the providers' published URLs by
   * default; a deployment behind a proxy, or a test's stand-in provider, points them elsewhere.
   */
  oauth: {
    /** Google's JSON Web Key Set, which signs its id tokens. */
    googleJwksUrl: string;
    /** Google's token endpoint, where a server auth code is exchanged for an id token. */
    googleTokenUrl: string;
    /** Where the redirect flow sends the user's browser to sign in with Google, and with Facebook. */
    googleAuthorizeUrl: string;
    facebookAuthorizeUrl: string;
    /** Apple's JSON Web Key Set (Sign in with Apple id tokens). */
    appleJwksUrl: string;
    /** Where the redirect flow sends the browser to sign in with Apple, and where Apple's code is exchanged. */
    appleAuthorizeUrl: string;
    appleTokenUrl: string;
    /** The Graph API base URL (`/debug_token` checks an access token, `/me` reads the user). */
    facebookGraphUrl: string;
  };
  /** OpenTelemetry tracing: off unless an OTLP endpoint is set. */
  telemetry: {
    /** OTLP/HTTP base URL (spans go to `<endpoint>/v1/traces`). */
    otlpEndpoint: string | undefined;
    sampler: TraceSampler;
    /** Fraction of new traces sampled (ratio samplers). */
    sampleRatio: number;
    /** Overrides the service name (default `tessera-<services>`). */
    serviceName: string | undefined;
    /** How often metrics are exported, in milliseconds. */
    metricExportIntervalMs: number;
  };
}

export class SettingsError extends Error {
  constructor(readonly problems: readonly { setting: string; message: string }[]) {
    super(`Invalid settings:\n${problems.map((problem) => `  ${problem.setting}: ${problem.message}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

/** PEM certificate chain and private key files of a TLS listener. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** Both files or neither: a certificate without its key (or the reverse) stops the process. */
function tlsFiles(cert: string | undefined, key: string | undefined, prefix: string): TlsFiles | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) throw new SettingsError([{ setting: cert === undefined ? `${prefix}_CERT` : `${prefix}_KEY`, message: `required with ${cert === undefined ? `${prefix}_KEY` : `${prefix}_CERT`}` }]);
  return { certFile: resolve(cert), keyFile: resolve(key) };
}

/** `<file>:<offset>` with the file made absolute, as the datastore names its segments. */
function absolutePoint(point: string): string {
  const colon = point.lastIndexOf(':');
  return `${resolve(point.slice(0, colon))}${point.slice(colon)}`;
}

/** A loopback interface: `localhost`, `127.x.y.z` or `::1`. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Validates the environment; throws SettingsError naming every bad setting. */
export function loadSettings(environment: Readonly<Record<string, string | undefined>>): Settings {
  const defined = Object.fromEntries(Object.entries(environment).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = environmentSchema.safeParse(defined);
  if (!parsed.success) {
    throw new SettingsError(parsed.error.issues.map((issue) => ({ setting: issue.path.join('.'), message: issue.message })));
  }
  const env = parsed.data;
  const services = env.TESSERA_MODE === 'standalone' || env.TESSERA_SERVICES.length === 0 ? allServiceNames : env.TESSERA_SERVICES;
  // Every replica must decrypt what another wrote, so a generated per-process key cannot do: the wire
  // server alone keeps no secrets and needs none.
  if (env.TESSERA_MODE === 'distributed' && !env.TESSERA_SECRETS_KEY && services.some((name) => name !== 'datastore')) {
    throw new SettingsError([{ setting: 'TESSERA_SECRETS_KEY', message: 'required in distributed mode: base64 of 32 bytes shared by every replica (openssl rand -base64 32)' }]);
  }
  const datastorePort = env.TESSERA_DATASTORE_PORT === 'off' ? undefined : env.TESSERA_DATASTORE_PORT;
  const runsDatastoreWire = services.includes('datastore') || (env.TESSERA_MODE === 'standalone' && datastorePort !== undefined);
  // Without a password the wire server reads and writes every cluster, the platform's secrets included.
  if (runsDatastoreWire && env.TESSERA_DATASTORE_PASSWORD === undefined && !isLoopbackHost(env.TESSERA_DATASTORE_HOST)) {
    throw new SettingsError([{ setting: 'TESSERA_DATASTORE_HOST', message: `the datastore wire server listens beyond loopback (${env.TESSERA_DATASTORE_HOST}) only with TESSERA_DATASTORE_PASSWORD set` }]);
  }
  if (services.includes('datastore') && datastorePort === undefined) {
    throw new SettingsError([{ setting: 'TESSERA_DATASTORE_PORT', message: 'the datastore service needs a port (off is for standalone mode)' }]);
  }
  return {
    port: env.PORT,
    host: env.HOST,
    publicUrl: env.TESSERA_PUBLIC_URL?.replace(/\/+$/, ''),
    dataDir: env.TESSERA_DATA_DIR,
    mode: env.TESSERA_MODE,
    services,
    natsUrl: env.NATS_URL,
    clusterUris: env.TESSERA_CLUSTER_URIS,
    datastorePort,
    datastoreHost: env.TESSERA_DATASTORE_HOST,
    datastoreTruncateLog: env.TESSERA_DATASTORE_TRUNCATE_LOG === undefined ? undefined : absolutePoint(env.TESSERA_DATASTORE_TRUNCATE_LOG),
    datastoreCredentials: env.TESSERA_DATASTORE_PASSWORD === undefined ? undefined : { user: env.TESSERA_DATASTORE_USER, password: env.TESSERA_DATASTORE_PASSWORD },
    datastoreTls: tlsFiles(env.TESSERA_DATASTORE_TLS_CERT, env.TESSERA_DATASTORE_TLS_KEY, 'TESSERA_DATASTORE_TLS'),
    datastoreDefaultCluster: env.TESSERA_DATASTORE_DEFAULT_CLUSTER,
    wire: { port: env.TESSERA_WIRE_PORT, host: env.TESSERA_WIRE_HOST ?? env.HOST, tls: tlsFiles(env.TESSERA_WIRE_TLS_CERT, env.TESSERA_WIRE_TLS_KEY, 'TESSERA_WIRE_TLS') },
    admin: { username: env.TESSERA_ADMIN_USERNAME, password: env.TESSERA_ADMIN_PASSWORD },
    exampleAppDir: env.TESSERA_EXAMPLE_APP === undefined ? DEFAULT_EXAMPLE_APP : env.TESSERA_EXAMPLE_APP === 'none' ? '' : resolve(env.TESSERA_EXAMPLE_APP),
    allowNewPartitionSync: env.TESSERA_ALLOW_NEW_PARTITION_SYNC,
    logLevel: env.LOG_LEVEL,
    logRequestIds: env.TESSERA_LOG_REQUEST_IDS ?? (env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'trace'),
    accessTokenTtlSeconds: env.TESSERA_ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: env.TESSERA_REFRESH_TOKEN_TTL_SECONDS,
    adminAccessTokenTtlSeconds: env.TESSERA_ADMIN_ACCESS_TOKEN_TTL_SECONDS,
    adminRefreshTokenTtlSeconds: env.TESSERA_ADMIN_REFRESH_TOKEN_TTL_SECONDS,
    signingKey: env.TESSERA_SIGNING_KEY,
    secretsKeys: env.TESSERA_SECRETS_KEY,
    functionHttpAllow: env.TESSERA_FUNCTION_HTTP_ALLOW,
    functionTimeLimitMs: Math.round(env.TESSERA_FUNCTION_TIME_LIMIT_SECONDS * 1000),
    requestTimeoutMs: Math.round(env.TESSERA_REQUEST_TIMEOUT_SECONDS * 1000),
    shutdownDrainMs: Math.round(env.TESSERA_SHUTDOWN_DRAIN_SECONDS * 1000),
    appRequestLimit: {
      requestsPerSecond: env.TESSERA_APP_REQUESTS_PER_SECOND,
      burst: env.TESSERA_APP_REQUEST_BURST ?? Math.max(1, Math.ceil(env.TESSERA_APP_REQUESTS_PER_SECOND * 2)),
    },
    oauth: {
      googleJwksUrl: env.TESSERA_OAUTH_GOOGLE_JWKS_URL,
      googleTokenUrl: env.TESSERA_OAUTH_GOOGLE_TOKEN_URL,
      googleAuthorizeUrl: env.TESSERA_OAUTH_GOOGLE_AUTHORIZE_URL,
      facebookAuthorizeUrl: env.TESSERA_OAUTH_FACEBOOK_AUTHORIZE_URL,
      appleJwksUrl: env.TESSERA_OAUTH_APPLE_JWKS_URL,
      appleAuthorizeUrl: env.TESSERA_OAUTH_APPLE_AUTHORIZE_URL,
      appleTokenUrl: env.TESSERA_OAUTH_APPLE_TOKEN_URL,
      facebookGraphUrl: env.TESSERA_OAUTH_FACEBOOK_GRAPH_URL.replace(/\/+$/, ''),
    },
    telemetry: {
      otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, ''),
      sampler: env.OTEL_TRACES_SAMPLER,
      sampleRatio: env.OTEL_TRACES_SAMPLER_ARG,
      serviceName: env.OTEL_SERVICE_NAME,
      metricExportIntervalMs: env.OTEL_METRIC_EXPORT_INTERVAL,
    },
  };
}

/** Dependency-injection token under which the host provides the validated Settings. */
export const SETTINGS = Symbol.for('tessera.settings');
