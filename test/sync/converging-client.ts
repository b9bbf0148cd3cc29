/**
 * A sync client built on the protocol library, behaving as realm-core's client does where convergence
 * depends on it: it keeps its state across connections as a realm file would (client file ident and salt,
 * download cursor, latest salted server version, unsynced local changesets), commits local changes at
 * once, uploads them with the server version they were based on, transforms every downloaded changeset
 * against its local changes after that changeset's `last_integrated_client_version`, and after a reconnect
 * binds with its saved ident and uploads again everything not acknowledged. It talks to the server over
 * a real WebSocket (`SyncTestClient`).
 */
import { ClientHistory, type ClientMessage, type Instruction, type LocalChangeset, ObjectStore, type PrimaryKey, type ServerMessage } from '@tessera/sync-protocol';
import { eventually } from '@tessera/testing';
import { connect, type SyncTestClient } from './sync-test-client';

/** Milliseconds since 2015-01-01, realm's origin timestamps. */
const realmEpoch = Date.UTC(2015, 0, 1);

/** Objects of the test schema: `Item` with an int primary key, a name, a count and a list of tags. */
export const schema: Instruction[] = [
  { type: 'AddTable', table: 'Item', spec: { kind: 'TopLevel', asymmetric: false, pkField: '_id', pkType: 'Int', pkNullable: false } },
  { type: 'AddColumn', table: 'Item', field: '_partition', valueType: 'String', nullable: true, collectionType: 'Single', keyType: 'Null' },
  { type: 'AddColumn', table: 'Item', field: 'name', valueType: 'String', nullable: true, collectionType: 'Single', keyType: 'Null' },
  { type: 'AddColumn', table: 'Item', field: 'count', valueType: 'Int', nullable: true, collectionType: 'Single', keyType: 'Null' },
  { type: 'AddColumn', table: 'Item', field: 'tags', valueType: 'String', nullable: false, collectionType: 'List', keyType: 'Null' },
];

export const itemKey = (id: number): PrimaryKey => ({ type: 'Int', value: id });

export class ConvergingClient {
  readonly store = new ObjectStore();
  ident = 0;
  salt = 0n;
  private readonly history = new ClientHistory();
  latest = { version: 0, salt: 0n };
  /** The newest local version the server acknowledged (DOWNLOAD's `upload_client_version`). */
  acknowledged = 0;
  /** Protocol errors the server sent on the current connection; a healthy one has none. */
  errors: ServerMessage[] = [];
  private socket: SyncTestClient | undefined;
  /** How many of the socket's received messages were handled. */
  private handled = 0;
  private session = 0;
  private identified = false;
  private marks = 0;
  private markedBack = 0;
  private lastTimestamp = 0;

  constructor(
    readonly name: string,
    /** The BIND path: the partition as realm-js writes it (`"p1"`). */
    readonly partition: string,
  ) {}

  get online(): boolean {
    return this.socket !== undefined && !this.socket.closed;
  }

  /** The version of the newest local change. */
  get lastVersion(): number {
    return this.history.version;
  }

  get cursor(): { serverVersion: number; clientVersion: number } {
    return this.history.cursor;
  }

  /** Changes committed here and not acknowledged by the server yet. */
  get unacknowledged(): number {
    return this.history.after(this.acknowledged).length;
  }

  /** Connects, binds (with a new client file the first time) and uploads what the server has not acknowledged. */
  async connect(url: string): Promise<void> {
    this.disconnect();
    const socket = await connect(url);
    this.socket = socket;
    this.handled = 0;
    this.errors = [];
    this.session++;
    this.identified = false;
    socket.ws.on('message', () => this.pump(socket));
    const fresh = this.ident === 0;
    this.send({ type: 'bind', sessionIdent: this.session, path: this.partition, token: '', needClientFileIdent: fresh, isSubserver: false });
    if (fresh) await eventually(() => expect(this.ident).toBeGreaterThan(0));
    this.send({
      type: 'ident',
      sessionIdent: this.session,
      clientFileIdent: this.ident,
      clientFileIdentSalt: this.salt,
      downloadServerVersion: this.cursor.serverVersion,
      downloadClientVersion: this.cursor.clientVersion,
      latestServerVersion: this.latest.version,
      latestServerVersionSalt: this.latest.salt,
    });
    this.identified = true;
    this.upload(this.history.after(this.acknowledged));
  }

  /** The connection goes away without a word, as a phone losing its network does. */
  disconnect(): void {
    this.socket?.close();
    this.socket = undefined;
    this.identified = false;
  }

  /** Commits `instructions` (made against this client's state) locally and uploads them when online. */
  commit(instructions: Instruction[]): void {
    if (instructions.length === 0) return;
    const change = this.history.commit(instructions, this.clock());
    if (this.online && this.identified) this.upload([change]);
  }

  /** Builds instructions against the current state with `make`, applying each as it is made, then commits them. */
  write(make: (emit: (instruction: Instruction) => void, store: ObjectStore) => void): void {
    const out: Instruction[] = [];
    make((instruction) => {
      this.store.apply(instruction);
      out.push(instruction);
    }, this.store);
    this.commit(out);
  }

  /** Waits until the server acknowledged every local change and sent everything it had (a MARK round trip). */
  async synced(timeoutMs = 15_000): Promise<void> {
    await eventually(() => expect(this.unacknowledged).toBe(0), { timeoutMs });
    const request = ++this.marks;
    this.send({ type: 'mark', sessionIdent: this.session, requestIdent: request });
    await eventually(() => expect(this.markedBack).toBeGreaterThanOrEqual(request), { timeoutMs });
    expect(this.errors).toEqual([]);
  }

  private clock(): number {
    this.lastTimestamp = Math.max(this.lastTimestamp + 1, Date.now() - realmEpoch);
    return this.lastTimestamp;
  }

  private send(message: ClientMessage): void {
    if (!this.socket) throw new Error(`${this.name} is offline`);
    this.socket.send(message);
  }

  private upload(changes: LocalChangeset[]): void {
    this.send({
      type: 'upload',
      sessionIdent: this.session,
      progressClientVersion: this.history.version,
      progressServerVersion: this.cursor.serverVersion,
      lockedServerVersion: this.cursor.serverVersion,
      changesets: ClientHistory.uploadChangesets(changes),
    });
  }

  /** Handles every message the socket received and this client has not handled yet, in order. */
  private pump(socket: SyncTestClient): void {
    while (socket === this.socket && this.handled < socket.received.length) {
      const message = socket.received[this.handled++];
      if (message) this.handle(message);
    }
  }

  private handle(message: ServerMessage): void {
    switch (message.type) {
      case 'ident':
        this.ident = message.clientFileIdent;
        this.salt = message.clientFileIdentSalt;
        return;
      case 'download':
        return this.integrate(message);
      case 'mark':
        this.markedBack = Math.max(this.markedBack, message.requestIdent);
        return;
      case 'error':
      case 'json_error':
        this.errors.push(message);
        return;
      case 'log_message':
      case 'pong':
      case 'unbound':
        return;
    }
  }

  private integrate(message: Extract<ServerMessage, { type: 'download' }>): void {
    const cursor = { serverVersion: message.downloadServerVersion, clientVersion: message.downloadClientVersion };
    for (const instructions of this.history.integrate(this.ident, message.changesets, cursor)) this.store.applyChangeset(instructions);
    this.latest = { version: message.latestServerVersion, salt: message.latestServerVersionSalt };
    this.acknowledged = Math.max(this.acknowledged, message.uploadClientVersion);
  }
}

/** A small seeded generator, so that a failing run can be repeated. */
export function seededRandom(seed: number): (n: number) => number {
  let state = seed >>> 0 || 1;
  return (n) => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state >>> 8) % n;
  };
}

/** The shared objects every client edits at once, and one journal object per client that only it appends to. */
export const contendedItems = [1, 2, 3];
export const journalItem = (client: number): number => 100 + client;

/** The first client's first change: the schema and the contended objects. */
export function seed(client: ConvergingClient, partitionValue: string): void {
  client.write((emit) => {
    for (const instruction of schema) emit(instruction);
    for (const id of contendedItems) {
      emit({ type: 'CreateObject', table: 'Item', object: itemKey(id) });
      emit({ type: 'Update', table: 'Item', object: itemKey(id), field: '_partition', path: [], value: { type: 'String', value: partitionValue }, isDefault: false, priorSize: 0 });
    }
  });
}

function tagsOf(store: ObjectStore, id: number): unknown[] {
  const tags = store.read('Item', itemKey(id), 'tags');
  return Array.isArray(tags) ? tags : [];
}

/** Appends entry `n` to client `index`'s journal: every entry a client wrote must end up there exactly once. */
export function journal(client: ConvergingClient, index: number, n: number, partitionValue: string): number {
  client.write((emit, store) => {
    const object = itemKey(journalItem(index));
    if (!store.hasObject('Item', object)) {
      emit({ type: 'CreateObject', table: 'Item', object });
      emit({ type: 'Update', table: 'Item', object, field: '_partition', path: [], value: { type: 'String', value: partitionValue }, isDefault: false, priorSize: 0 });
    }
    const length = tagsOf(store, journalItem(index)).length;
    emit({ type: 'ArrayInsert', table: 'Item', object, field: 'tags', path: [length], value: { type: 'String', value: String(n) }, priorSize: length });
  });
  return client.lastVersion;
}

/** One random edit of a contended object: renames, increments and list edits that conflict across clients. */
export function contendedEdit(client: ConvergingClient, random: (n: number) => number): void {
  client.write((emit, store) => {
    const id = contendedItems[random(contendedItems.length)] ?? 1;
    const base = { table: 'Item', object: itemKey(id) };
    if (!store.hasObject('Item', base.object)) return;
    const length = tagsOf(store, id).length;
    const word = `${client.name}-${random(1000)}`;
    switch (random(5)) {
      case 0:
        emit({ type: 'Update', ...base, field: 'name', path: [], value: { type: 'String', value: word }, isDefault: false, priorSize: 0 });
        break;
      case 1:
        emit({ type: 'AddInteger', ...base, field: 'count', path: [], value: 1 + random(5) });
        break;
      case 2:
        emit({ type: 'ArrayInsert', ...base, field: 'tags', path: [random(length + 1)], value: { type: 'String', value: word }, priorSize: length });
        break;
      case 3:
        if (length > 0) emit({ type: 'ArrayErase', ...base, field: 'tags', path: [random(length)], priorSize: length });
        break;
      default:
        if (length > 0) emit({ type: 'Update', ...base, field: 'tags', path: [random(length)], value: { type: 'String', value: word }, isDefault: false, priorSize: length });
    }
  });
}

/** A journal entry as the object store holds a string in a list (its scalar key). */
export const journalValue = (n: number): string => JSON.stringify(String(n));

/** Every client holds the same state, and every journal holds each entry its client wrote, once and in order. */
export function expectConverged(clients: readonly ConvergingClient[], journals: readonly number[]): void {
  const [first, ...rest] = clients;
  if (!first) throw new Error('no clients');
  for (const client of rest) expect(client.store.snapshot(), `${client.name} and ${first.name} differ`).toBe(first.store.snapshot());
  journals.forEach((count, index) => {
    const entries = tagsOf(first.store, journalItem(index));
    expect(entries, `journal of client ${index}`).toEqual(Array.from({ length: count }, (_, n) => journalValue(n)));
  });
}
