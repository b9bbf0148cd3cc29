import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { type DynamicModule, Logger as NestLogger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureEmbeddedDatastore } from '@tessera/datastore';
import { AppServicesExceptionFilter, appServicesClientErrorHandler, installAppServicesContentType, recordRoutes } from '@tessera/http-edge';
import { createMessagingServer, TransportReadiness } from '@tessera/messaging';
import { AdminUserStore, AppRegistry, DataSources, DeploymentReconciler, DeploymentStore, PlatformDatabase, SecretsAtRest } from '@tessera/platform';
import type { Settings } from '@tessera/settings';
import { type HttpServerSpan, runInContext, startHttpServerSpan } from '@tessera/telemetry';
import { Logger } from 'nestjs-pino';
import { type Observable } from 'rxjs';
import { bootstrapPlatform, type BootstrapResult, loadExampleApp } from './bootstrap/platform-bootstrap';
import { prepareDataDirectory } from './bootstrap/data-directory';
import { DatastoreWireService } from './datastore-service';
import { AppWireService } from './wire/app-wire.service';
import { HostModule, messagingOptions, runsDatastoreWire, type ServiceReplacements } from './host.module';
import { HostLogger } from './logging/host-logger';
import { bindRequestLogger } from './request-logger';
import { createLogOutput } from './logging/log-output';

export interface RunningHost {
  /** Base URL of the HTTP edge, e.g. `http://localhost:8080`. */
  url: string;
  bootstrap: BootstrapResult;
  /** Port of the datastore MongoDB wire server, when this process runs it (the datastore service, or standalone mode). */
  datastorePort: number | undefined;
  /** Standalone mode: why the datastore wire server is not running although configured (its port was taken). */
  datastoreUnavailable: string | undefined;
  /** Port of the apps' MongoDB wire endpoint, when this process serves it. */
  wirePort: number | undefined;
  /** Writes plain text to the process's output after every log line written so far (the start banner). */
  print(text: string): void;
  /** The Nest application (tests reach providers through it). */
  nest: NestFastifyApplication;
  close(): Promise<void>;
}

/** After the message handlers drained, how long closing waits for HTTP connections before cutting them. */
const httpCloseGraceMs = 2_000;

/** Largest request body the edge accepts (App Services' documented request limit is 18 MB). */
const bodyLimit = 18 * 1024 * 1024;

export const version: string = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

export interface HostOptions {
  /** Service modules to run in place of the real ones (tests only: a fake function runtime, say). */
  replace?: ServiceReplacements;
}

/** Starts a Tessera process: the services the settings name, behind one HTTP edge. */
export async function startHost(settings: Settings, options: HostOptions = {}): Promise<RunningHost> {
  // The admin API owns first-start work; other processes of a distributed deployment only read the state.
  configureDatastore(settings);
  const firstStart = settings.services.includes('admin-api');
  const example = firstStart ? await loadExampleApp(settings) : undefined;
  const output = createLogOutput({ pretty: process.stdout.isTTY === true });
  const app = await createHttpEdge(HostModule.forRoot(settings, version, output.stream, options.replace), settings);
  // No enableShutdownHooks(): the entry point owns the signals and closes the app exactly once.
  // Message handlers of every service this process runs join one queue group per service set, so
  // replicas of the same service share commands while each event reaches every kind of service.
  const handlers = createMessagingServer({ ...messagingOptions(settings), queue: settings.services.join('+') });
  app.connectMicroservice({ strategy: handlers }, { inheritAppConfig: true });
  app.get(TransportReadiness).watch('message handlers', handlers);
  reconcileOnReconnect(handlers, app.get(DeploymentReconciler));
  await app.startAllMicroservices();

  const bootstrap = firstStart
    ? await bootstrapPlatform(
        settings,
        { db: app.get(PlatformDatabase), admins: app.get(AdminUserStore), apps: app.get(AppRegistry), deployments: app.get(DeploymentStore), secretsAtRest: app.get(SecretsAtRest), dataSources: app.get(DataSources) },
        example,
      )
    : // The banner lists the apps a service serves; the datastore service serves the platform database
      // itself (possibly mapped to its own URI, not listening yet), so it reads nothing at boot.
      { groupId: '', adminUsername: settings.admin.username, apps: settings.services.every((service) => service === 'datastore') ? [] : await app.get(AppRegistry).list() };
  try {
    await app.listen(settings.port, settings.host);
  } catch (error) {
    // A port already taken: release what started (the data directory's lock, the transports) before failing,
    // so the same process can start a host over that directory again.
    await Promise.allSettled(app.getMicroservices().map((microservice) => microservice.close()));
    await app.close().catch(() => undefined);
    throw error;
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  return {
    url: settings.publicUrl ?? `http://localhost:${port}`,
    bootstrap,
    datastorePort: runsDatastoreWire(settings) ? app.get(DatastoreWireService).port : undefined,
    datastoreUnavailable: runsDatastoreWire(settings) ? app.get(DatastoreWireService).unavailable : undefined,
    wirePort: settings.wire.port !== undefined ? wirePortOf(app) : undefined,
    print: (text) => output.print(text),
    nest: app,
    // Message handlers first: they stop taking work and finish what they hold while the stores, sandboxes
    // and connections they use are still open (Nest's own close runs module destroy hooks before that).
    close: async () => {
      await Promise.all(app.getMicroservices().map((microservice) => microservice.close()));
      // The drain is over: a connection the HTTP server still holds after a short grace (a client that
      // left a connection half-open) must not keep the process from stopping.
      const server: Server = app.getHttpServer();
      const cut = setTimeout(() => server.closeAllConnections(), httpCloseGraceMs);
      try {
        await app.close();
      } finally {
        clearTimeout(cut);
      }
    },
  };
}

/**
 * The HTTP edge of a Tessera process around `module`: Fastify with App Services' body limit, the client
 * address taken from a proxy's forwarding headers, error bodies for requests Fastify rejects before routing
 * and for exceptions, JSON content types, the route table (for 405 answers), a span per request when
 * tracing is on, and a request logger (a `reqId` on every line logged for the request) when request ids are
 * logged (`settings.logRequestIds`). The one place the edge is configured, so what tests start is what users run.
 */
export async function createHttpEdge(module: DynamicModule, settings: Settings): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit, trustProxy: true, clientErrorHandler: appServicesClientErrorHandler });
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, { bufferLogs: true });
  app.useLogger(new HostLogger(app.get(Logger)));
  app.useGlobalFilters(new AppServicesExceptionFilter());
  installAppServicesContentType(app.getHttpAdapter().getInstance());
  recordRoutes(app.getHttpAdapter().getInstance());
  if (settings.telemetry.otlpEndpoint) traceHttpEdge(app);
  if (settings.logRequestIds) bindRequestLoggers(app);
  return app;
}

/** The data directory made private, and the embedded datastore's recovery steps and failures sent to this process's log, before any store opens. */
function configureDatastore(settings: Settings): void {
  const logger = new NestLogger('datastore');
  prepareDataDirectory(settings.dataDir, (message) => logger.warn(message));
  configureEmbeddedDatastore({
    log: (level, message) => (level === 'info' ? logger.log(message) : logger[level](message)),
    truncateLogAt: settings.datastoreTruncateLog,
  });
}

/**
 * A deployment announced while this process's handler connection was down never reaches it: when the
 * connection comes back, compare every cached app with its live deployment (decision 0023).
 */
function reconcileOnReconnect(handlers: { readonly status: Observable<string> }, reconciler: DeploymentReconciler): void {
  let lost = false;
  handlers.status.subscribe((status) => {
    if (status !== 'connected') lost = true;
    else if (lost) {
      lost = false;
      void reconciler.reconcile('message transport reconnected');
    }
  });
}

/**
 * One SERVER span per HTTP request, continuing the caller's `traceparent`. The span starts when the request
 * arrives and its context is entered just before the handler runs (after the body is read, whose stream
 * events would lose it), so messages the handler sends and lines it logs carry the trace.
 */
function traceHttpEdge(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const spans = new WeakMap<object, HttpServerSpan>();
  fastify.addHook('onRequest', (request, _reply, done) => {
    const span = startHttpServerSpan(request.method, request.url, request.headers);
    spans.set(request, span);
    runInContext(span.context, done);
  });
  fastify.addHook('preHandler', (request, _reply, done) => {
    const span = spans.get(request);
    if (span) runInContext(span.context, done);
    else done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    spans.get(request)?.end(reply.statusCode, request.routeOptions.url);
    done();
  });
}

/**
 * A request logger bound to every request (request-logger.ts), from a Fastify hook rather than a Nest
 * middleware: a middleware runs through @fastify/middie, which for each request first copies the client
 * address chain (the proxy headers parsed again), the parsed query and more onto the Node request and
 * matches the URL against the middleware's path, a few percent of a short request's CPU for nothing here.
 * Added after the tracing hooks, where middie's hook ran.
 */
function bindRequestLoggers(app: NestFastifyApplication): void {
  app.getHttpAdapter().getInstance().addHook('onRequest', (request, reply, done) => bindRequestLogger(request.raw, reply.raw, done));
}

/** The apps' wire endpoint's port, when the host mounted it (it does beside a real gateway). */
function wirePortOf(app: NestFastifyApplication): number | undefined {
  try {
    return app.get(AppWireService, { strict: false }).port;
  } catch {
    return undefined;
  }
}
