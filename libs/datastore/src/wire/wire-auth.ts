/**
 * Authentication of wire connections: which commands a connection may run before it authenticated (the
 * handshake, `ping`, `buildInfo` and the SASL conversation itself, as MongoDB allows), MongoDB's
 * Unauthorized refusal of the rest, and the datastore server's SCRAM-SHA-256 conversations over
 * `saslStart`/`saslContinue` (also started speculatively inside `hello`, as the driver does).
 */
import { Binary } from 'bson';
import { type Document } from '../api/data-source';
import { WireCommandError } from './errors';
import { SCRAM_SHA_256, ScramConversation, type ScramCredential, scramCredential, ScramError } from './scram';

/** Commands MongoDB answers before authentication. */
const openCommands = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'buildInfo', 'buildinfo', 'saslStart', 'saslContinue', 'endSessions', 'getnonce']);

export function isOpenCommand(name: string): boolean {
  return openCommands.has(name);
}

/** MongoDB's refusal of a command the connection may not run (code 13). */
export function unauthorized(message: string): WireCommandError {
  return new WireCommandError(13, 'Unauthorized', message);
}

/** MongoDB's refusal of failed credentials (code 18). */
export function authenticationFailed(): WireCommandError {
  return new WireCommandError(18, 'AuthenticationFailed', 'Authentication failed.');
}

export function commandName(command: Document): string {
  return Object.keys(command)[0] ?? '';
}

/** The bytes of a SASL `payload` (a BSON Binary, or a string some clients send). */
export function saslPayload(command: Document): string {
  const payload = command.payload;
  if (payload instanceof Binary) return payload.toString('utf8');
  if (typeof payload === 'string') return payload;
  throw new WireCommandError(14, 'TypeMismatch', "SASL 'payload' must be binary data");
}

const handshakes = new Set(['hello', 'isMaster', 'ismaster']);

/**
 * SCRAM-SHA-256 for one configured user, per connection. The user may also authenticate as
 * `<user>+<cluster>`, naming the cluster its connection serves: the way for clients that cannot choose their
 * `appName` (MongoDB's database tools always send their own name) to reach a cluster other than the default.
 * The password is the same (SCRAM-SHA-256 salts the password alone, so any spelling of the name checks it).
 */
export class DatastoreAuthenticator {
  private readonly credential: ScramCredential;
  private readonly authenticated = new Set<number>();
  /** The cluster a connection's user name named (`<user>+<cluster>`). */
  private readonly userClusters = new Map<number, string>();
  private readonly conversations = new Map<number, { id: number; scram: ScramConversation }>();
  private nextConversation = 1;

  /** `isClusterName`: which names a `<user>+<cluster>` user name may give (others fail authentication). */
  constructor(
    private readonly user: string,
    password: string,
    private readonly isClusterName: (name: string) => boolean = () => true,
  ) {
    this.credential = scramCredential(user, password);
  }

  isAuthenticated(connection: number): boolean {
    return this.authenticated.has(connection);
  }

  /** The cluster the authenticated user name of a connection named, if it named one. */
  clusterOf(connection: number): string | undefined {
    return this.authenticated.has(connection) ? this.userClusters.get(connection) : undefined;
  }

  /** Drops what a closed connection left. */
  forget(connection: number): void {
    this.authenticated.delete(connection);
    this.userClusters.delete(connection);
    this.conversations.delete(connection);
  }

  /** The cluster in a `<user>+<cluster>` name; undefined for the plain user name; null for any other name. */
  private clusterInName(name: string): string | undefined | null {
    if (name === this.user) return undefined;
    const prefix = `${this.user}+`;
    if (!name.startsWith(prefix)) return null;
    const cluster = name.slice(prefix.length);
    return this.isClusterName(cluster) ? cluster : null;
  }

  /**
   * Answers the SASL commands; refuses (throws) a command the connection may not run yet; answers
   * undefined for a command that may run.
   */
  intercept(connection: number, command: Document): Document | undefined {
    const name = commandName(command);
    if (name === 'saslStart') return this.start(connection, command);
    if (name === 'saslContinue') return this.continue(connection, command);
    if (!this.authenticated.has(connection) && !isOpenCommand(name)) throw unauthorized(`Command ${name} requires authentication`);
    return undefined;
  }

  /** Adds what a handshake asked about authentication to its reply: the mechanisms, a speculative start. */
  decorateHandshake(connection: number, command: Document, reply: Document): Document {
    if (!handshakes.has(commandName(command)) || reply.ok !== 1) return reply;
    if (typeof command.saslSupportedMechs === 'string') reply.saslSupportedMechs = [SCRAM_SHA_256];
    const speculative = command.speculativeAuthenticate as Document | undefined;
    if (speculative && typeof speculative === 'object' && speculative.mechanism === SCRAM_SHA_256) {
      try {
        reply.speculativeAuthenticate = this.start(connection, speculative);
      } catch {
        // A speculative start that fails is ignored: the driver then authenticates with saslStart.
      }
    }
    return reply;
  }

  private start(connection: number, command: Document): Document {
    if (command.mechanism !== SCRAM_SHA_256) {
      throw new WireCommandError(2, 'MechanismUnavailable', `Received authentication for mechanism ${String(command.mechanism)} which is not enabled`);
    }
    this.authenticated.delete(connection);
    this.userClusters.delete(connection);
    const scram = new ScramConversation(this.credential, (name) => this.clusterInName(name) !== null);
    const conversation = { id: this.nextConversation++, scram };
    let serverFirst: string;
    try {
      serverFirst = scram.start(saslPayload(command));
    } catch (error) {
      if (error instanceof ScramError) throw authenticationFailed();
      throw error;
    }
    this.conversations.set(connection, conversation);
    return { conversationId: conversation.id, done: false, payload: new Binary(Buffer.from(serverFirst, 'utf8')), ok: 1 };
  }

  private continue(connection: number, command: Document): Document {
    const conversation = this.conversations.get(connection);
    if (!conversation || Number(command.conversationId) !== conversation.id) throw new WireCommandError(17, 'ProtocolError', 'No SASL session state found');
    this.conversations.delete(connection);
    let serverFinal: string;
    try {
      serverFinal = conversation.scram.finish(saslPayload(command));
    } catch (error) {
      if (error instanceof ScramError) throw authenticationFailed();
      throw error;
    }
    this.authenticated.add(connection);
    const cluster = this.clusterInName(conversation.scram.userName);
    if (cluster) this.userClusters.set(connection, cluster);
    // Done with the server's signature: the driver skips the empty last exchange (skipEmptyExchange).
    return { conversationId: conversation.id, done: true, payload: new Binary(Buffer.from(serverFinal, 'utf8')), ok: 1 };
  }
}
