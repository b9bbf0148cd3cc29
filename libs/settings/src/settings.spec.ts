import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings, SettingsError } from './settings';

const secretsKey = Buffer.alloc(32, 4).toString('base64');

describe('loadSettings', () => {
  it('gives the documented defaults for an empty environment', () => {
    const settings = loadSettings({});
    expect(settings.port).toBe(8080);
    expect(settings.dataDir).toBe('./.tessera');
    expect(settings.mode).toBe('standalone');
    expect(settings.services).toEqual(['admin-api', 'graphql-gateway', 'function-runtime', 'sync-service']);
    expect(settings.admin).toEqual({ username: 'admin', password: undefined });
    expect(settings.clusterUris).toEqual({});
    expect(settings.allowNewPartitionSync).toBe(false);
  });

  it('reads the port, data directory and admin credentials', () => {
    const settings = loadSettings({ PORT: '9001', TESSERA_DATA_DIR: '/tmp/x', TESSERA_ADMIN_USERNAME: 'root', TESSERA_ADMIN_PASSWORD: 'correct horse' });
    expect(settings.port).toBe(9001);
    expect(settings.dataDir).toBe('/tmp/x');
    expect(settings.admin).toEqual({ username: 'root', password: 'correct horse' });
  });

  it('parses cluster URI maps in both accepted forms', () => {
    expect(loadSettings({ TESSERA_CLUSTER_URIS: 'Cluster0=mongodb://a:27017, Other=mongodb://b' }).clusterUris).toEqual({ Cluster0: 'mongodb://a:27017', Other: 'mongodb://b' });
    expect(loadSettings({ TESSERA_CLUSTER_URIS: '{"Cluster0":"mongodb://a"}' }).clusterUris).toEqual({ Cluster0: 'mongodb://a' });
  });

  it('accepts a * entry for every other cluster and refuses what is not a MongoDB URI', () => {
    expect(loadSettings({ TESSERA_CLUSTER_URIS: '*=mongodb://datastore:27017/?directConnection=true' }).clusterUris).toEqual({ '*': 'mongodb://datastore:27017/?directConnection=true' });
    expect(() => loadSettings({ TESSERA_CLUSTER_URIS: 'Cluster0=http://a' })).toThrow(/TESSERA_CLUSTER_URIS: cluster "Cluster0": expected a mongodb:\/\/ or mongodb\+srv:\/\/ URI/);
    expect(() => loadSettings({ TESSERA_CLUSTER_URIS: '{"../x":"mongodb://a"}' })).toThrow(/invalid cluster name/);
    expect(() => loadSettings({ TESSERA_CLUSTER_URIS: '{"a":1}' })).toThrow(/expected a JSON object/);
  });

  it('runs the datastore service only where a process names it, on TESSERA_DATASTORE_PORT', () => {
    expect(loadSettings({}).services).not.toContain('datastore');
    expect(loadSettings({}).datastorePort).toBe(27017);
    const settings = loadSettings({ TESSERA_MODE: 'distributed', TESSERA_SERVICES: 'datastore', TESSERA_DATASTORE_PORT: '27999' });
    expect(settings.services).toEqual(['datastore']);
    expect(settings.datastorePort).toBe(27999);
    expect(() => loadSettings({ TESSERA_DATASTORE_PORT: '70000' })).toThrow(/TESSERA_DATASTORE_PORT/);
    // Standalone mode runs the wire server unless told `off`; the datastore service cannot do without it.
    expect(loadSettings({ TESSERA_DATASTORE_PORT: 'off' }).datastorePort).toBeUndefined();
    // The cluster of connections naming none (MongoDB's tools): Atlas's and the example app's Cluster0 unless set.
    expect(loadSettings({}).datastoreDefaultCluster).toBe('Cluster0');
    expect(loadSettings({ TESSERA_DATASTORE_DEFAULT_CLUSTER: 'Shop' }).datastoreDefaultCluster).toBe('Shop');
    expect(() => loadSettings({ TESSERA_DATASTORE_DEFAULT_CLUSTER: '../x' })).toThrow(/TESSERA_DATASTORE_DEFAULT_CLUSTER/);
    expect(() => loadSettings({ TESSERA_MODE: 'distributed', TESSERA_SERVICES: 'datastore', TESSERA_DATASTORE_PORT: 'off' })).toThrow(/TESSERA_DATASTORE_PORT: the datastore service needs a port/);
  });

  it('binds the datastore wire server to loopback, and beyond it only with a password', () => {
    // HOST (the HTTP edge) does not widen it.
    expect(loadSettings({ HOST: '0.0.0.0' }).datastoreHost).toBe('127.0.0.1');
    const password = { TESSERA_DATASTORE_PASSWORD: 'a-long-enough-secret' };
    expect(loadSettings({ TESSERA_DATASTORE_HOST: '0.0.0.0', ...password }).datastoreHost).toBe('0.0.0.0');
    expect(loadSettings({ TESSERA_DATASTORE_HOST: '::', ...password }).datastoreHost).toBe('::');
    expect(loadSettings({ TESSERA_DATASTORE_HOST: 'datastore.tessera.svc', ...password }).datastoreHost).toBe('datastore.tessera.svc');
    expect(loadSettings({ TESSERA_DATASTORE_HOST: '127.0.0.2' }).datastoreHost).toBe('127.0.0.2');
    expect(loadSettings({ TESSERA_DATASTORE_HOST: '::1' }).datastoreHost).toBe('::1');
    // Without one, standalone mode and the datastore service refuse to start; a process serving none does not care.
    expect(() => loadSettings({ TESSERA_DATASTORE_HOST: '0.0.0.0' })).toThrow(/TESSERA_DATASTORE_HOST: .*only with TESSERA_DATASTORE_PASSWORD/);
    expect(() => loadSettings({ TESSERA_DATASTORE_HOST: '127.example.com' })).toThrow(/TESSERA_DATASTORE_HOST/);
    expect(() => loadSettings({ TESSERA_MODE: 'distributed', TESSERA_SERVICES: 'datastore', TESSERA_DATASTORE_HOST: '::' })).toThrow(/TESSERA_DATASTORE_HOST/);
    expect(loadSettings({ TESSERA_DATASTORE_HOST: '0.0.0.0', TESSERA_DATASTORE_PORT: 'off' }).datastorePort).toBeUndefined();
    expect(loadSettings({ TESSERA_MODE: 'distributed', TESSERA_SERVICES: 'admin-api', TESSERA_SECRETS_KEY: Buffer.alloc(32).toString('base64'), TESSERA_DATASTORE_HOST: '0.0.0.0' }).datastoreHost).toBe('0.0.0.0');
    expect(() => loadSettings({ TESSERA_DATASTORE_HOST: 'not a host' })).toThrow(/TESSERA_DATASTORE_HOST: expected an IP address or a host name/);
    expect(() => loadSettings({ TESSERA_DATASTORE_HOST: 'http://x' })).toThrow(/TESSERA_DATASTORE_HOST/);
  });

  it('reads the datastore credentials and TLS files, and refuses a short password or half a TLS pair', () => {
    expect(loadSettings({}).datastoreCredentials).toBeUndefined();
    expect(loadSettings({ TESSERA_DATASTORE_PASSWORD: 'a-long-enough-secret' }).datastoreCredentials).toEqual({ user: 'tessera', password: 'a-long-enough-secret' });
    expect(loadSettings({ TESSERA_DATASTORE_USER: 'svc', TESSERA_DATASTORE_PASSWORD: 'a-long-enough-secret' }).datastoreCredentials?.user).toBe('svc');
    expect(() => loadSettings({ TESSERA_DATASTORE_PASSWORD: 'short' })).toThrow(/TESSERA_DATASTORE_PASSWORD/);
    expect(loadSettings({ TESSERA_DATASTORE_TLS_CERT: '/tls/cert.pem', TESSERA_DATASTORE_TLS_KEY: '/tls/key.pem' }).datastoreTls).toEqual({ certFile: '/tls/cert.pem', keyFile: '/tls/key.pem' });
    expect(() => loadSettings({ TESSERA_DATASTORE_TLS_CERT: '/tls/cert.pem' })).toThrow(/TESSERA_DATASTORE_TLS_KEY/);
  });

  it('leaves the app wire endpoint off without TESSERA_WIRE_PORT, on HOST by default', () => {
    expect(loadSettings({}).wire).toEqual({ port: undefined, host: '0.0.0.0', tls: undefined });
    expect(loadSettings({ TESSERA_WIRE_PORT: '27020', HOST: '127.0.0.1' }).wire).toEqual({ port: 27020, host: '127.0.0.1', tls: undefined });
    expect(loadSettings({ TESSERA_WIRE_PORT: '27020', TESSERA_WIRE_HOST: '::1', TESSERA_WIRE_TLS_CERT: 'c.pem', TESSERA_WIRE_TLS_KEY: 'k.pem' }).wire).toEqual({ port: 27020, host: '::1', tls: { certFile: `${process.cwd()}/c.pem`, keyFile: `${process.cwd()}/k.pem` } });
    expect(() => loadSettings({ TESSERA_WIRE_TLS_KEY: 'k.pem' })).toThrow(/TESSERA_WIRE_TLS_CERT/);
    expect(() => loadSettings({ TESSERA_WIRE_PORT: 'x' })).toThrow(/TESSERA_WIRE_PORT/);
  });

  it('runs only the named services in distributed mode', () => {
    expect(loadSettings({ TESSERA_MODE: 'distributed', TESSERA_SERVICES: 'admin-api,function-runtime', TESSERA_SECRETS_KEY: secretsKey }).services).toEqual(['admin-api', 'function-runtime']);
  });

  it('names every bad setting in one error', () => {
    let caught: unknown;
    try {
      loadSettings({ PORT: 'eighty', TESSERA_MODE: 'cluster', TESSERA_ADMIN_PASSWORD: 'short', TESSERA_SERVICES: 'billing' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SettingsError);
    const settings = (caught as SettingsError).problems.map((problem) => problem.setting).sort();
    expect(settings).toEqual(['PORT', 'TESSERA_ADMIN_PASSWORD', 'TESSERA_MODE', 'TESSERA_SERVICES']);
    expect((caught as SettingsError).message).toContain('TESSERA_ADMIN_PASSWORD: must be at least 8 characters');
  });
  it('reads tracing and metrics settings and leaves them off without an endpoint', () => {
    expect(loadSettings({}).telemetry).toEqual({ otlpEndpoint: undefined, sampler: 'parentbased_traceidratio', sampleRatio: 1, serviceName: undefined, metricExportIntervalMs: 15_000 });
    const traced = loadSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_TRACES_SAMPLER_ARG: '0.05', OTEL_SERVICE_NAME: 'edge', OTEL_METRIC_EXPORT_INTERVAL: '60000' });
    expect(traced.telemetry).toEqual({ otlpEndpoint: 'http://collector:4318', sampler: 'parentbased_traceidratio', sampleRatio: 0.05, serviceName: 'edge', metricExportIntervalMs: 60_000 });
    expect(() => loadSettings({ OTEL_METRIC_EXPORT_INTERVAL: '5' })).toThrow(/OTEL_METRIC_EXPORT_INTERVAL/);
  });

  it('logs request ids at debug and trace by default, and wherever TESSERA_LOG_REQUEST_IDS says so', () => {
    expect(loadSettings({}).logRequestIds).toBe(false);
    expect(loadSettings({ LOG_LEVEL: 'debug' }).logRequestIds).toBe(true);
    expect(loadSettings({ LOG_LEVEL: 'trace' }).logRequestIds).toBe(true);
    expect(loadSettings({ LOG_LEVEL: 'warn', TESSERA_LOG_REQUEST_IDS: 'true' }).logRequestIds).toBe(true);
    expect(loadSettings({ LOG_LEVEL: 'debug', TESSERA_LOG_REQUEST_IDS: 'false' }).logRequestIds).toBe(false);
    expect(() => loadSettings({ TESSERA_LOG_REQUEST_IDS: 'sometimes' })).toThrow(/TESSERA_LOG_REQUEST_IDS/);
  });

  it('refuses a sampling ratio outside 0..1 and a short signing key', () => {
    expect(() => loadSettings({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => loadSettings({ TESSERA_SIGNING_KEY: Buffer.alloc(16, 1).toString('base64') })).toThrow(/TESSERA_SIGNING_KEY: must be base64 of at least 32 bytes/);
    expect(loadSettings({ TESSERA_SIGNING_KEY: Buffer.alloc(32, 7).toString('base64') }).signingKey).toEqual(Buffer.alloc(32, 7));
  });
});

describe('token lifetimes', () => {
  it('default to App Services lifetimes and accept overrides', () => {
    expect(loadSettings({})).toMatchObject({ accessTokenTtlSeconds: 1800, refreshTokenTtlSeconds: 5_184_000 });
    expect(loadSettings({ TESSERA_ACCESS_TOKEN_TTL_SECONDS: '60', TESSERA_REFRESH_TOKEN_TTL_SECONDS: '3600' })).toMatchObject({ accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 3600 });
    expect(() => loadSettings({ TESSERA_ACCESS_TOKEN_TTL_SECONDS: '0' })).toThrow('TESSERA_ACCESS_TOKEN_TTL_SECONDS');
  });
});

describe('TESSERA_DATASTORE_TRUNCATE_LOG', () => {
  it('takes the point a corrupt-log refusal names, with the file made absolute, and refuses anything else', () => {
    expect(loadSettings({}).datastoreTruncateLog).toBeUndefined();
    expect(loadSettings({ TESSERA_DATASTORE_TRUNCATE_LOG: '/data/clusters/c/wal-0000000000000001.log:1234' }).datastoreTruncateLog).toBe('/data/clusters/c/wal-0000000000000001.log:1234');
    expect(loadSettings({ TESSERA_DATASTORE_TRUNCATE_LOG: 'clusters/c/wal-1.log:8' }).datastoreTruncateLog).toBe(`${process.cwd()}/clusters/c/wal-1.log:8`);
    expect(() => loadSettings({ TESSERA_DATASTORE_TRUNCATE_LOG: 'wal-1.log' })).toThrow(/TESSERA_DATASTORE_TRUNCATE_LOG: expected <log segment file>:<byte offset>/);
  });
});

describe('admin token lifetimes', () => {
  it('default to the client ones and accept overrides', () => {
    expect(loadSettings({})).toMatchObject({ adminAccessTokenTtlSeconds: 1800, adminRefreshTokenTtlSeconds: 5_184_000 });
    expect(loadSettings({ TESSERA_ADMIN_ACCESS_TOKEN_TTL_SECONDS: '60', TESSERA_ADMIN_REFRESH_TOKEN_TTL_SECONDS: '3600' })).toMatchObject({ adminAccessTokenTtlSeconds: 60, adminRefreshTokenTtlSeconds: 3600 });
    expect(() => loadSettings({ TESSERA_ADMIN_REFRESH_TOKEN_TTL_SECONDS: 'soon' })).toThrow('TESSERA_ADMIN_REFRESH_TOKEN_TTL_SECONDS');
  });
});

describe('secrets key', () => {
  it('reads the key, and older keys after it for rotation', () => {
    expect(loadSettings({ TESSERA_SECRETS_KEY: secretsKey }).secretsKeys).toEqual([Buffer.alloc(32, 4)]);
    expect(loadSettings({ TESSERA_SECRETS_KEY: `${Buffer.alloc(32, 5).toString('base64')}, ${secretsKey}` }).secretsKeys).toEqual([Buffer.alloc(32, 5), Buffer.alloc(32, 4)]);
    expect(loadSettings({}).secretsKeys).toBeUndefined();
  });

  it('refuses a key that is not base64 of exactly 32 bytes, naming the setting', () => {
    for (const bad of [Buffer.alloc(16, 1).toString('base64'), Buffer.alloc(48, 1).toString('base64'), 'not base64 at all, really not, not at all!!', Buffer.alloc(32, 1).toString('hex')]) {
      expect(() => loadSettings({ TESSERA_SECRETS_KEY: bad }), bad).toThrow(/TESSERA_SECRETS_KEY: key 1: must be base64 of exactly 32 bytes/);
    }
  });

  it('is required in distributed mode, except by a process running only the datastore service', () => {
    expect(() => loadSettings({ TESSERA_MODE: 'distributed' })).toThrow(/TESSERA_SECRETS_KEY: required in distributed mode/);
    expect(() => loadSettings({ TESSERA_MODE: 'distributed', TESSERA_SERVICES: 'graphql-gateway' })).toThrow(/TESSERA_SECRETS_KEY/);
    expect(loadSettings({ TESSERA_MODE: 'distributed', TESSERA_SERVICES: 'datastore' }).secretsKeys).toBeUndefined();
  });
});

describe('function egress allow list', () => {
  it('reads CIDR blocks, addresses, host names and *', () => {
    expect(loadSettings({}).functionHttpAllow).toEqual([]);
    expect(loadSettings({ TESSERA_FUNCTION_HTTP_ALLOW: '10.0.0.0/8, 127.0.0.1,[::1], fd00::/8, LocalHost, *.svc.cluster.local' }).functionHttpAllow).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8', 'localhost', '*.svc.cluster.local']);
    expect(loadSettings({ TESSERA_FUNCTION_HTTP_ALLOW: '*' }).functionHttpAllow).toEqual(['*']);
  });

  it('refuses entries that are none of these, naming the setting', () => {
    expect(() => loadSettings({ TESSERA_FUNCTION_HTTP_ALLOW: '10.0.0.0/33' })).toThrow(/TESSERA_FUNCTION_HTTP_ALLOW: "10.0.0.0\/33" is not a CIDR block/);
    expect(() => loadSettings({ TESSERA_FUNCTION_HTTP_ALLOW: 'http://x' })).toThrow(/TESSERA_FUNCTION_HTTP_ALLOW/);
  });
});

describe('TESSERA_EXAMPLE_APP', () => {
  it("is this installation's examples/todo when unset, whatever the working directory; a given path is made absolute; none is none", () => {
    const installed = join(__dirname, '..', '..', '..', 'examples', 'todo');
    expect(existsSync(join(installed, 'config.json'))).toBe(true);
    const cwd = process.cwd();
    try {
      process.chdir(tmpdir());
      expect(loadSettings({}).exampleAppDir).toBe(installed);
      expect(loadSettings({ TESSERA_EXAMPLE_APP: 'apps/mine' }).exampleAppDir).toBe(join(process.cwd(), 'apps/mine'));
    } finally {
      process.chdir(cwd);
    }
    expect(loadSettings({ TESSERA_EXAMPLE_APP: '/srv/app' }).exampleAppDir).toBe('/srv/app');
    expect(loadSettings({ TESSERA_EXAMPLE_APP: 'none' }).exampleAppDir).toBe('');
    // An empty variable is an unset one, as for every setting.
    expect(loadSettings({ TESSERA_EXAMPLE_APP: '' }).exampleAppDir).toBe(installed);
  });
});
