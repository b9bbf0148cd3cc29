/**
 * The apps' MongoDB wire endpoint (spec 2.5 `wireProtocolEnabled`): drivers, shells and BI tools connect
 * with the connection string App Services gave out,
 * `mongodb://<user>:<password>@<host>:<port>/?authMechanism=PLAIN&authSource=%24external&tls=true&appName=<client app id>:<service>:<provider>`,
 * and authenticate as an app user: `local-userpass` (email and password), `api-key` (the key as password)
 * or `custom-token` (the JWT as password), checked as a login checks them (throttled). Every command then
 * runs as that user through remote data access (RemoteDataAccess, the client API's path), so the app's
 * rules decide. Commands before authentication other than the handshake are Unauthorized (13).
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { AppService } from '@tessera/app-config';
import type { CallerUser } from '@tessera/contracts';
import { authenticationFailed, commandName, type Document, errorReply, isDatastoreError, isOpenCommand, saslPayload, unauthorized, WireCommandError, type WireConnectionInfo, WireListener } from '@tessera/datastore';
import { isTesseraError } from '@tessera/domain';
import { AuthService, type ClientApp, ClientApps, RemoteDataAccess } from '@tessera/graphql-gateway';
import { SETTINGS, type Settings } from '@tessera/settings';
import { ObjectId } from 'bson';
import { ConnectionCursors, runAppCommand } from './app-wire-commands';
import { readTlsFiles } from './tls-files';

/** What `appName` names: `<client app id>:<service>:<auth provider>`. */
interface AppNameParts {
  clientAppId: string;
  service: string;
  provider: string;
}

interface WireUser {
  appId: string;
  serviceName: string;
  user: CallerUser;
  name: string;
}

interface ConnectionState {
  appName?: string;
  user?: WireUser;
  cursors: ConnectionCursors;
}

const providers: Record<string, (user: string, password: string) => Record<string, unknown>> = {
  'local-userpass': (user, password) => ({ username: user, password }),
  'api-key': (_user, password) => ({ key: password }),
  'custom-token': (_user, password) => ({ token: password }),
};

export function parseAppName(appName: string | undefined): AppNameParts | undefined {
  const parts = appName?.split(':');
  if (!parts || parts.length !== 3 || parts.some((part) => part.length === 0)) return undefined;
  return { clientAppId: parts[0], service: parts[1], provider: parts[2] };
}

/** The app's linked cluster service of that name, when its `config.wireProtocolEnabled` is true. */
function wireService(app: ClientApp, name: string): AppService | undefined {
  const service = app.config.services.find((candidate) => candidate.config.name === name);
  return service?.config.config?.wireProtocolEnabled === true ? service : undefined;
}

const wireLimits = { maxBsonObjectSize: 16 * 1024 * 1024, maxMessageSizeBytes: 48_000_000, maxWriteBatchSize: 100_000 };

@Injectable()
export class AppWireService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('app-wire');
  private listener?: WireListener;
  private readonly connections = new Map<number, ConnectionState>();

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly apps: ClientApps,
    private readonly auth: AuthService,
    private readonly data: RemoteDataAccess,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { port, host, tls } = this.settings.wire;
    if (port === undefined) return;
    this.listener = await WireListener.start(
      {
        port,
        host,
        tls: readTlsFiles(tls),
        log: (level, message) => this.logger[level === 'info' ? 'log' : level](message),
        onClose: (connection) => this.connections.delete(connection.id),
      },
      (connection, db, command) => this.execute(connection, db, command),
    );
    this.logger.log(`app MongoDB wire endpoint listening on ${host}:${this.listener.port}${tls ? ' (TLS)' : ''}`);
  }

  /**
   * Closes every connection authenticated as this user (disabled, deleted, sessions revoked): the driver's
   * next command fails and its reconnect must authenticate again, which a disabled or deleted user cannot.
   * Returns how many closed.
   */
  closeUser(appId: string, userId: string): number {
    let closed = 0;
    for (const [id, state] of this.connections) {
      if (state.user?.appId !== appId || state.user.user.id !== userId) continue;
      // Commands already queued on the connection find no user and are refused before the socket goes.
      state.user = undefined;
      state.cursors = new ConnectionCursors();
      if (this.listener?.disconnect(id)) closed++;
    }
    return closed;
  }

  /** Port the endpoint listens on (undefined when it is off). */
  get port(): number | undefined {
    return this.listener?.port;
  }

  async onApplicationShutdown(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    await listener?.close();
  }

  private async execute(connection: WireConnectionInfo, db: string, command: Document): Promise<Document> {
    let state = this.connections.get(connection.id);
    if (!state) {
      state = { cursors: new ConnectionCursors() };
      this.connections.set(connection.id, state);
    }
    const name = commandName(command);
    try {
      switch (name) {
        case 'hello':
        case 'isMaster':
        case 'ismaster':
          return this.hello(connection, state, name, command);
        case 'ping':
          return { ok: 1 };
        case 'buildInfo':
        case 'buildinfo':
          return { version: '7.0.0', versionArray: [7, 0, 0, 0], gitVersion: 'tessera-app-wire', modules: [], bits: 64, maxBsonObjectSize: wireLimits.maxBsonObjectSize, ok: 1 };
        case 'saslStart':
          return await this.saslStart(connection, state, db, command);
        case 'saslContinue':
          throw new WireCommandError(17, 'ProtocolError', 'No SASL session state found');
        default:
          break;
      }
      const user = state.user;
      if (!user) {
        if (isOpenCommand(name)) return { ok: 1 };
        throw unauthorized(`Command ${name} requires authentication`);
      }
      // The live deployment on every command: a redeploy's rules apply at once, and turning the wire
      // protocol off closes the endpoint to open connections too.
      const app = await this.apps.byAppId(user.appId);
      const service = wireService(app, user.serviceName);
      if (!service) throw unauthorized(`service '${user.serviceName}' no longer has the wire protocol enabled`);
      return await runAppCommand(
        name,
        {
          db,
          command,
          service,
          cursors: state.cursors,
          userName: user.name,
          call: (action, args) => this.data.execute({ appId: app.appId, clientAppId: app.clientAppId, deploymentId: app.deploymentId, config: app.config }, user.serviceName, action, args, user.user),
        },
        (error) => {
          const reply = this.reply(error);
          return { code: Number(reply.code), errmsg: String(reply.errmsg) };
        },
      );
    } catch (error) {
      return this.reply(error);
    }
  }

  private hello(connection: WireConnectionInfo, state: ConnectionState, name: string, command: Document): Document {
    const application = (command.client as { application?: { name?: unknown } } | undefined)?.application;
    if (state.appName === undefined && typeof application?.name === 'string') state.appName = application.name;
    return {
      helloOk: true,
      ...(name === 'hello' ? { isWritablePrimary: true } : { ismaster: true }),
      ...wireLimits,
      localTime: new Date(),
      connectionId: connection.id,
      minWireVersion: 0,
      maxWireVersion: 21,
      readOnly: false,
      ok: 1,
    };
  }

  /** SASL PLAIN with `$external`, as App Services answered it: one step, done. */
  private async saslStart(connection: WireConnectionInfo, state: ConnectionState, db: string, command: Document): Promise<Document> {
    if (command.mechanism !== 'PLAIN') throw new WireCommandError(2, 'MechanismUnavailable', `Received authentication for mechanism ${String(command.mechanism)} which is not enabled`);
    if (db !== '$external') throw new WireCommandError(2, 'BadValue', 'PLAIN authentication must use the $external database (authSource=$external)');
    // `[authzid] NUL authcid NUL password` (RFC 4616).
    const fields = saslPayload(command).split('\u0000');
    if (fields.length !== 3) throw authenticationFailed();
    const [, userName, password] = fields;
    // A new authentication starts afresh: nothing the previous user opened stays reachable.
    state.user = undefined;
    state.cursors = new ConnectionCursors();
    state.user = await this.authenticate(connection, state.appName, userName, password);
    return { conversationId: 1, done: true, payload: new Uint8Array(0), ok: 1 };
  }

  private async authenticate(connection: WireConnectionInfo, appName: string | undefined, userName: string, password: string): Promise<WireUser> {
    const named = parseAppName(appName);
    const credentials = named ? providers[named.provider] : undefined;
    if (!named || !credentials) {
      this.logger.debug(`wire connection ${connection.id}: appName '${appName ?? ''}' names no app, service and provider`);
      throw authenticationFailed();
    }
    try {
      const app = await this.appOf(named.clientAppId);
      if (!wireService(app, named.service)) throw new Error(`service '${named.service}' does not have the wire protocol enabled`);
      const user = await this.auth.userForCredentials(app, named.provider, credentials(userName, password), { createUser: true, clientAddress: connection.remoteAddress });
      return { appId: app.appId, serviceName: named.service, user: await this.auth.callerOf({ app, user }), name: userName };
    } catch (error) {
      this.logger.debug(`wire connection ${connection.id}: authentication refused: ${error instanceof Error ? error.message : String(error)}`);
      throw authenticationFailed();
    }
  }

  private appOf(id: string): Promise<ClientApp> {
    return ObjectId.isValid(id) && id.length === 24 ? this.apps.byAppId(id) : this.apps.byClientAppId(id);
  }

  /** A failure as MongoDB answers it: refusals of the rules as Unauthorized, bad input as BadValue. */
  private reply(error: unknown): Document {
    if (error instanceof WireCommandError || isDatastoreError(error)) return errorReply(error);
    if (isTesseraError(error)) {
      const refused = error.httpStatus === 401 || error.httpStatus === 403 || /not allowed|only allowed|permission|NoMatchingRule/i.test(`${error.errorCode} ${error.message}`);
      if (refused) return { ok: 0, errmsg: error.message, code: 13, codeName: 'Unauthorized' };
      return { ok: 0, errmsg: error.message, code: 2, codeName: 'BadValue' };
    }
    this.logger.error(`app wire command failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return { ok: 0, errmsg: 'internal server error', code: 1, codeName: 'InternalError' };
  }
}
