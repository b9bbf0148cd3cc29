import { loadSettings, SettingsError, type Settings } from '@tessera/settings';
import { type Metrics, startMetrics, startTracing, type Tracing } from '@tessera/telemetry';
import type { BootstrapResult } from './bootstrap/platform-bootstrap';
import { startHost, version } from './host';

/**
 * Where clients reach the client API: this process when it serves it, else the public URL (the gateway's,
 * in distributed mode), else a placeholder that says which service to ask.
 */
function clientApiUrl(settings: Settings, hostUrl: string): string {
  if (settings.services.includes('graphql-gateway')) return settings.publicUrl ?? hostUrl;
  return settings.publicUrl ?? '<graphql-gateway URL>';
}

/** The wire server's address as a client writes it: a wildcard bind is reached on loopback here. */
function datastoreAddress(bindHost: string): string {
  if (bindHost === '0.0.0.0' || bindHost === '::') return 'localhost';
  return bindHost.includes(':') ? `[${bindHost}]` : bindHost;
}

/**
 * The datastore wire server's connection string: the cluster is the `appName` (standalone keeps each app's
 * linked cluster under its `clusterName`), the user and password those of TESSERA_DATASTORE_PASSWORD.
 */
function datastoreLines(settings: Settings, port: number | undefined, unavailable: string | undefined): string[] {
  if (unavailable) return [`  datastore (MongoDB wire protocol): not started, ${unavailable}`];
  if (port === undefined) return [];
  const user = settings.datastoreCredentials ? `${encodeURIComponent(settings.datastoreCredentials.user)}:<password>@` : '';
  const options = `directConnection=true${settings.datastoreTls ? '&tls=true' : ''}${settings.mode === 'standalone' ? '&appName=<cluster name>' : ''}`;
  return [`  datastore (MongoDB wire protocol): mongodb://${user}${datastoreAddress(settings.datastoreHost)}:${port}/?${options}`];
}

/** What closing may take beyond the drain: terminating functions, closing stores and connections. */
const shutdownMarginMs = 15_000;

/** Entry point of `npm start` (standalone) and of each service process (distributed). */
async function main(): Promise<void> {
  let settings;
  try {
    settings = loadSettings(process.env);
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const tracing = startTracingFor(settings);
  const metrics = startMetricsFor(settings);
  const host = await startHost(settings);
  const { bootstrap } = host;
  const lines = [
    '',
    `Tessera is running (${settings.mode}) at ${host.url}`,
    `  data directory: ${settings.dataDir}`,
    ...(bootstrap.imported
      ? [`  imported the platform state of an earlier release (${bootstrap.imported.apps} app(s), ${bootstrap.imported.deployments} deployment(s), ${bootstrap.imported.logEntries} log entries); the files moved to ${bootstrap.imported.movedTo}`]
      : []),
    ...(host.wirePort !== undefined ? [`  apps' MongoDB wire endpoint: mongodb://<user>:<password>@${datastoreAddress(settings.wire.host)}:${host.wirePort}/?authMechanism=PLAIN&authSource=%24external${settings.wire.tls ? '&tls=true' : ''}&appName=<client app id>:<service>:<provider>`] : []),
    ...datastoreLines(settings, host.datastorePort, host.datastoreUnavailable),
    ...bootstrap.apps.map((app) => `  app "${app.name}": app id ${app.client_app_id}  ->  ${clientApiUrl(settings, host.url)}/api/client/v2.0/app/${app.client_app_id}/location`),
    ...(settings.services.includes('admin-api') ? adminLines(host.url, bootstrap) : []),
    '',
  ];
  // Last, after the start-up log, so that a newcomer finds the URL and the password where the output ends.
  host.print(`${lines.join('\n')}\n`);
  // SIGTERM (Kubernetes) or SIGINT: close the app once (message handlers drain for at most
  // TESSERA_SHUTDOWN_DRAIN_SECONDS, then running functions are terminated, connections close), flush the
  // spans, exit 0. A second signal while draining exits at once; so does a close that hangs past the bound.
  let stopping = false;
  const stop = (): void => {
    if (stopping) process.exit(1);
    stopping = true;
    setTimeout(() => {
      process.stderr.write(`Tessera did not stop within ${settings.shutdownDrainMs + shutdownMarginMs} ms of the signal; exiting\n`);
      process.exit(1);
    }, settings.shutdownDrainMs + shutdownMarginMs).unref();
    host
      .close()
      .then(() => Promise.all([finishTelemetry(tracing?.shutdown()), finishTelemetry(metrics?.shutdown())]))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`Tessera did not stop cleanly: ${error instanceof Error ? error.message : String(error)}\n`);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** A collector that is down or refuses the last export does not make the stop a failure: said, not fatal. */
async function finishTelemetry(shutdown: Promise<void> | undefined): Promise<void> {
  try {
    await shutdown;
  } catch (error) {
    process.stderr.write(`Tessera: the last telemetry export failed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

/** Tracing is on when an OTLP endpoint is configured; spans are named after the services this process runs. */
function startTracingFor(settings: Settings): Tracing | undefined {
  const { otlpEndpoint, sampler, sampleRatio } = settings.telemetry;
  if (!otlpEndpoint) return undefined;
  return startTracing({
    serviceName: telemetryServiceName(settings),
    serviceVersion: version,
    otlpEndpoint,
    sampler,
    sampleRatio,
  });
}

/** Metrics go to the same OTLP endpoint as spans (sync's connections, sessions, uploads, downloads, history sizes). */
function startMetricsFor(settings: Settings): Metrics | undefined {
  const { otlpEndpoint, metricExportIntervalMs } = settings.telemetry;
  if (!otlpEndpoint) return undefined;
  return startMetrics({ serviceName: telemetryServiceName(settings), serviceVersion: version, otlpEndpoint, exportIntervalMs: metricExportIntervalMs });
}

function telemetryServiceName(settings: Settings): string {
  return settings.telemetry.serviceName ?? (settings.mode === 'standalone' ? 'tessera' : `tessera-${settings.services.join('+')}`);
}

main().catch((error: unknown) => {
  // A clear message, never a stack trace: configuration errors list every violation in their message.
  process.stderr.write(`Tessera failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

function adminLines(url: string, bootstrap: BootstrapResult): string[] {
  return [
    `  admin API: ${url}/api/admin/v3.0 (group ${bootstrap.groupId})`,
    `    console: ${url}/console (sign in as the admin user below, or with an admin API key)`,
    `    log in:  curl -s -X POST ${url}/api/admin/v3.0/auth/providers/local-userpass/login -H 'Content-Type: application/json' -d '{"username":"${bootstrap.adminUsername}","password":"<password>"}'`,
    bootstrap.generatedAdminPassword
      ? `    admin user "${bootstrap.adminUsername}", generated password (shown once, set TESSERA_ADMIN_PASSWORD to choose your own): ${bootstrap.generatedAdminPassword}`
      : `    admin user "${bootstrap.adminUsername}" (password from TESSERA_ADMIN_PASSWORD or the one printed at first start)`,
  ];
}
