/**
 * The flexible-sync sessions of this process and what they share: each app's synced types (schema,
 * collections, collection rules), a SubscriptionIndex per app so that a changed document is matched only
 * against the queries that can hold it, who holds which object (so a document leaving every query still
 * reaches the sessions that have it), the server version counter, and the writes of uploads to the
 * collections. It must not decide what a session sees: sessions do (FlexibleConnection with flexible-view).
 *
 * Sync's own writes are marked with their origin (as the partition translator marks its transactions), so
 * the change feed drops them; the hub fans them out to the app's other sessions itself. Replicas: the change
 * feed reaches one replica per change, and an upload one replica; that replica announces the document on
 * `sync.flexible-document.changed`, and every other replica reads it and tells its own sessions.
 */
import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { type AppConfig, type AppService } from '@tessera/app-config';
import { type ChangeOrigin, type DocumentChanged, type SyncFlexibleDocumentChanged, Subjects, SYNC_TRANSLATION_WRITER, WriteOriginsNamespace } from '@tessera/contracts';
import { type BulkWriteOperation, type DataSourceClient } from '@tessera/datastore';
import { decodeEjson, encodeEjson, MessageBus, parseEjson } from '@tessera/messaging';
import { DataSources, DeployedApps } from '@tessera/platform';
import { SubscriptionIndex, type TranslatedQuery } from '@tessera/rql';
import { compileRules, type CompiledRules, type RuleSetConfig } from '@tessera/rules';
import { canonicalBson, checkSchemaChanges, type Instruction, type SyncSchema } from '@tessera/sync-protocol';
import { type FlexibleSyncMode, syncModeOf } from '../sessions/sync-config';
import { appSyncLayout, type CollectionRef } from '../translation/app-schema';
import { ChangeDelivery, changeInstant, type ChangeTiming } from './change-delivery';
import { declaredTypes } from './development-types';
import { HeldSnapshots, recordIntegrated } from './flexible-client-files';

type Document = Record<string, unknown>;

/** An app's flexible sync as sessions need it, read from its live deployment. */
export interface FlexibleApp {
  appId: string;
  mode: FlexibleSyncMode;
  client: DataSourceClient;
  schema: SyncSchema;
  collectionOf(table: string): CollectionRef | undefined;
  tableOf(db: string, coll: string): string | undefined;
  /** The collection rules of a type's collection (roles chosen per session with openSyncSession). */
  rules(table: string): CompiledRules;
  /**
   * What sessions fixed when they started (sync configuration, rules, values), as text: a deploy that leaves
   * it alone (functions, hosting, schemas development mode added) does not restart them.
   */
  fingerprint: string;
}

/** A session as the hub reaches it. */
export interface FlexibleListener {
  readonly id: string;
  readonly appId: string;
  /**
   * A document of `table` changed elsewhere; the session reads it as it is when it gets to it, and decides.
   * `delivery`, when the change's commit time is known, is told once the session has handled it.
   */
  documentChanged(table: string, id: unknown, delivery?: ChangeDelivery): void;
}

/** A document write of an upload, after the session's checks. */
export interface FlexibleWrite {
  table: string;
  id: unknown;
  /** The document after the upload, or null when the upload deleted it. */
  after: Document | null;
}

/** The history whose client file registry issues flexible-sync client file idents (it holds no changesets). */
export const FLEXIBLE_FILES = '__flexible_sync_files';

/** The key naming one object of an app across sessions. */
export function heldKey(table: string, id: unknown): string {
  return `${table}\u0000${canonicalBson(id)}`;
}

/** The key of an object's shared read (FlexibleHub.current). */
function readKey(appId: string, table: string, id: unknown): string {
  return `${appId}\u0000${heldKey(table, id)}`;
}

/** One read of a document for the sessions that ask for it before it starts (FlexibleHub.current). */
interface SharedRead {
  key: string;
  id: unknown;
  /** Sessions told of the change; the read starts once as many asked. */
  expected: number;
  asked: number;
  /** Where the first session that asked reads it. */
  source?: { app: FlexibleApp; ref: CollectionRef };
  result: Promise<Document | null>;
  resolve: (doc: Document | null) => void;
  reject: (error: unknown) => void;
}

interface AppSessions {
  index: SubscriptionIndex;
  sessions: Map<string, FlexibleListener>;
  holders: Map<string, Set<string>>;
}

/** Milliseconds between the Unix epoch and realm's (2015-01-01), where server versions start counting. */
const REALM_EPOCH_MS = Date.UTC(2015, 0, 1);

@Injectable()
export class FlexibleHub {
  private readonly logger = new Logger('FlexibleSync');
  private readonly apps = new Map<string, AppSessions>();
  private readonly layouts = new WeakMap<AppConfig, Omit<FlexibleApp, 'appId' | 'mode' | 'client'> & { service: string; database: string; developmentMode: boolean }>();
  /** Types created by development-mode clients, per app. */
  private readonly devSchemas = new Map<string, SyncSchema>();
  private lastVersion = 0;
  /** This process, as its announcements name it. */
  readonly replica = randomUUID();
  private heldSnapshots?: HeldSnapshots;
  /** Sessions whose snapshot is due when the timer fires, with what takes it. */
  private readonly snapshotsDue = new Map<FlexibleListener, () => void>();
  private snapshotTimer?: NodeJS.Timeout;
  /** Reads of documents that sessions asked for (or were told of) and that have not started yet, by app and object. */
  private readonly reads = new Map<string, SharedRead>();

  constructor(
    private readonly deployed: DeployedApps,
    private readonly dataSources: DataSources,
    private readonly bus: MessageBus,
  ) {}

  /**
   * The next server version. Versions only grow, across restarts too (they start from the clock), because a
   * client that reconnects sends the last one it integrated and must never see an older one.
   */
  nextVersion(): number {
    this.lastVersion = Math.max(this.lastVersion + 1, Date.now() - REALM_EPOCH_MS);
    return this.lastVersion;
  }

  /** The app's flexible sync, or undefined when the app does not use it (or has nowhere to store data). */
  async app(appId: string): Promise<FlexibleApp | undefined> {
    const config = (await this.deployed.byId(appId)).config;
    const mode = syncModeOf(config);
    if (mode.kind !== 'flexible') return undefined;
    let layout = this.layouts.get(config);
    if (!layout) {
      const read = appSyncLayout(config);
      if (!read) return undefined;
      const service = config.services.find((s) => s.config.name === read.service) as AppService;
      const compiled = new Map<string, CompiledRules>();
      const database = read.database ?? 'sync';
      const collectionOf = (table: string): CollectionRef | undefined => read.collections.get(table) ?? (read.developmentMode ? { db: database, coll: table } : undefined);
      const fingerprint = JSON.stringify(
        {
          sync: config.sync,
          values: config.values,
          // A collection rule without roles or filters leaves its collection to the default rule, as no rule does.
          rules: config.services.map((s) => ({ name: s.config.name, rules: s.collectionRules.filter((rule) => (rule.roles?.length ?? 0) > 0 || (rule.filters?.length ?? 0) > 0), default: s.defaultRule })),
        },
        (key, value: unknown) => (key === 'schema' ? undefined : value),
      );
      layout = {
        fingerprint,
        service: read.service,
        database,
        developmentMode: read.developmentMode,
        schema: withAsymmetricTables(read.schema, mode.asymmetricTables),
        collectionOf,
        tableOf: () => undefined,
        rules: (table) => {
          let rules = compiled.get(table);
          if (!rules) {
            const ref = collectionOf(table);
            const rule = service.collectionRules.find((candidate) => candidate.database === ref?.db && candidate.collection === ref.coll);
            rules = compileRules(rule as RuleSetConfig | undefined, service.defaultRule as RuleSetConfig | undefined, { namespace: `${ref?.db}.${ref?.coll}` });
            compiled.set(table, rules);
          }
          return rules;
        },
      };
      this.layouts.set(config, layout);
    }
    let schema = layout.schema;
    const dev = layout.developmentMode ? this.devSchemas.get(appId) : undefined;
    if (dev) {
      // What clients declared here: a superset of the deployed table (development mode only adds).
      schema = new Map(schema);
      for (const [name, table] of dev) if ((schema.get(name)?.columns.size ?? -1) < table.columns.size) schema.set(name, table);
    }
    const { collectionOf } = layout;
    return {
      appId,
      mode,
      client: this.dataSources.forService(config, layout.service).client,
      schema,
      collectionOf,
      fingerprint: layout.fingerprint,
      tableOf: (db, coll) => [...schema.keys()].find((table) => schema.get(table)?.spec.kind === 'TopLevel' && collectionOf(table)?.db === db && collectionOf(table)?.coll === coll),
      rules: layout.rules,
    };
  }

  /**
   * Checks an upload's schema instructions; in development mode, keeps the types and fields a client adds and
   * has the admin API deploy them as collection schemas (spec 2.6), so that they outlive this process and show
   * in the app's rules. Returns the refusal message (error 225) or undefined.
   */
  async acceptSchema(app: FlexibleApp, instructions: readonly Instruction[]): Promise<string | undefined> {
    const check = checkSchemaChanges(app.schema, instructions, app.mode.developmentMode);
    if (!check.ok) return check.message;
    if (!check.changed) return undefined;
    const types = declaredTypes(app.schema, check.schema);
    const dev = new Map(this.devSchemas.get(app.appId) ?? []);
    for (const [name, table] of check.schema) dev.set(name, table);
    this.devSchemas.set(app.appId, dev);
    app.schema = check.schema;
    if (types.length > 0) {
      try {
        await this.bus.request(Subjects.AppsDevelopmentSchemaApply, { appId: app.appId, types }, { timeoutMs: 15_000 });
      } catch (error) {
        // The types still sync in this process; the next client that declares them asks again.
        this.logger.warn({ err: error, appId: app.appId, types: types.map((type) => type.name) }, 'development mode: could not deploy the schemas a sync client declared');
      }
    }
    return undefined;
  }

  private sessionsOf(appId: string): AppSessions {
    let entry = this.apps.get(appId);
    if (!entry) this.apps.set(appId, (entry = { index: new SubscriptionIndex(), sessions: new Map(), holders: new Map() }));
    return entry;
  }

  register(listener: FlexibleListener): void {
    this.sessionsOf(listener.appId).sessions.set(listener.id, listener);
  }

  /** Files a session's subscriptions (one query per type), replacing those it had. */
  subscribe(listener: FlexibleListener, queries: ReadonlyMap<string, TranslatedQuery>, previous: Iterable<string>): void {
    const entry = this.apps.get(listener.appId);
    if (!entry || entry.sessions.get(listener.id) !== listener) return;
    const { index } = entry;
    for (const table of previous) if (!queries.has(table)) index.remove(listener.id, table);
    for (const [table, query] of queries) index.add(listener.id, table, query);
  }

  /** Records that a session's client holds (or no longer holds) an object. */
  hold(listener: FlexibleListener, key: string, held: boolean): void {
    const entry = this.apps.get(listener.appId);
    // A session that ended (its socket closed while it was handling a message) holds nothing here any more.
    if (!entry || entry.sessions.get(listener.id) !== listener) return;
    const { holders } = entry;
    let set = holders.get(key);
    if (held) {
      if (!set) holders.set(key, (set = new Set()));
      set.add(listener.id);
    } else if (set) {
      set.delete(listener.id);
      if (set.size === 0) holders.delete(key);
    }
  }

  /** What clients hold (FlexibleClientFiles), in the platform cluster, written for many sessions at once. */
  get snapshots(): HeldSnapshots {
    return (this.heldSnapshots ??= new HeldSnapshots(this.dataSources.platform()));
  }

  /**
   * Calls `take` (which takes the session's snapshot) within `delayMs`, together with every other session's
   * due by then: the snapshots of a burst of changes across sessions are written together, at one time.
   */
  snapshotSoon(listener: FlexibleListener, take: () => void, delayMs: number): void {
    this.snapshotsDue.set(listener, take);
    if (this.snapshotTimer) return;
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = undefined;
      const due = [...this.snapshotsDue.values()];
      this.snapshotsDue.clear();
      for (const takeOne of due) takeOne();
    }, delayMs);
    this.snapshotTimer.unref();
  }

  /** The session's snapshot is being taken now (or never will be): it is no longer due. */
  snapshotTaken(listener: FlexibleListener): void {
    this.snapshotsDue.delete(listener);
  }

  /**
   * A document as its collection holds it now, for a session whose turn came to handle a change of it. The
   * sessions a change was fanned out to share one read, which starts once all of them asked (or once the
   * promise jobs queued meanwhile have run, for those whose turn has not come): each gets what the collection
   * held when its turn came, its own earlier writes included, for one read per change instead of one each.
   * A session that asks once the read started gets a read of its own.
   */
  current(app: FlexibleApp, ref: CollectionRef, table: string, id: unknown): Promise<Document | null> {
    const read = this.expectRead(readKey(app.appId, table, id), id, 0);
    read.source ??= { app, ref };
    // A deploy moved the type to another collection meanwhile: this session reads where it now lives.
    if (read.source.ref.db !== ref.db || read.source.ref.coll !== ref.coll) return app.client.db(ref.db).collection(ref.coll).findOne({ _id: id });
    if (++read.asked >= read.expected) this.startRead(read);
    return read.result;
  }

  /** `sessions` more sessions were told of a change of an object and will ask for it (or end first). */
  private expectRead(key: string, id: unknown, sessions: number): SharedRead {
    const read = this.reads.get(key);
    if (read) {
      read.expected += sessions;
      return read;
    }
    let resolve: (doc: Document | null) => void = () => undefined;
    let reject: (error: unknown) => void = () => undefined;
    const result = new Promise<Document | null>((done, fail) => ((resolve = done), (reject = fail)));
    const created: SharedRead = { key, id, expected: sessions, asked: 0, result, resolve, reject };
    this.reads.set(key, created);
    // Sessions whose queue is busy ask later: those who asked by then read now, the others get a read of their own.
    process.nextTick(() => {
      if (created.asked > 0) this.startRead(created);
      else if (this.reads.get(key) === created) this.reads.delete(key);
    });
    return created;
  }

  private startRead(read: SharedRead): void {
    if (this.reads.get(read.key) !== read || !read.source) return;
    this.reads.delete(read.key);
    const { app, ref } = read.source;
    app.client.db(ref.db).collection(ref.coll).findOne({ _id: read.id }).then(read.resolve, read.reject);
  }

  /** The session ended: its queries and holdings are dropped. */
  unregister(listener: FlexibleListener, held: Iterable<string>): void {
    const entry = this.apps.get(listener.appId);
    if (!entry || entry.sessions.get(listener.id) !== listener) return;
    entry.sessions.delete(listener.id);
    entry.index.removeSession(listener.id);
    for (const key of held) this.hold(listener, key, false);
    if (entry.sessions.size === 0) this.apps.delete(listener.appId);
  }

  /**
   * A document changed (`after`: its state after the change, null when deleted): every session whose
   * subscriptions it now matches (found through the index) and every session holding it hears of it; no other
   * session is looked at.
   */
  fanOut(appId: string, table: string, id: unknown, after: Document | null, except?: FlexibleListener, timing?: ChangeTiming): void {
    const entry = this.apps.get(appId);
    if (!entry) return;
    const targets = new Set(entry.holders.get(heldKey(table, id)) ?? []);
    if (after) for (const match of entry.index.match(table, undefined, after)) targets.add(match.sessionId);
    const told: FlexibleListener[] = [];
    for (const sessionId of targets) {
      const listener = entry.sessions.get(sessionId);
      if (listener && listener !== except) told.push(listener);
    }
    // They read the document as they get to it: one read for all of them (current).
    if (told.length > 0) this.expectRead(readKey(appId, table, id), id, told.length);
    const delivery = timing && told.length > 0 ? new ChangeDelivery(appId, timing, told.length) : undefined;
    for (const listener of told) listener.documentChanged(table, id, delivery);
  }

  /** A change made outside sync (the datastore's change feed), for the app's flexible sessions in this process. */
  async handleChange(change: DocumentChanged): Promise<void> {
    if (!this.apps.has(change.appId)) return;
    const arrived = changeInstant();
    // Sync's own write: fanned out when it was made.
    if (change.origin?.writer === SYNC_TRANSLATION_WRITER && change.origin.appId === change.appId) return;
    const app = await this.app(change.appId);
    const table = app?.tableOf(change.db, change.coll);
    if (!app || !table) return;
    const key = decodeEjson(change.documentKey) as Document;
    const after = change.operationType === 'delete' || !change.fullDocument ? null : (decodeEjson(change.fullDocument) as Document);
    if (change.operationType !== 'delete' && !after) {
      this.logger.warn({ msg: 'flexible sync change without its document skipped', appId: change.appId, db: change.db, coll: change.coll });
      return;
    }
    const committedAt = change.wallTime === undefined ? undefined : decodeEjson(change.wallTime);
    this.changed(change.appId, table, key['_id'], after, undefined, committedAt instanceof Date ? { committedAtMs: committedAt.getTime(), ...(change.readAt !== undefined ? { readAtMs: change.readAt } : {}), arrived } : undefined);
  }

  /**
   * A document of a synced type changed, here (an upload of `except`'s, or the change feed): the sessions of
   * this process hear of it now, those of the other replicas through the announcement.
   */
  changed(appId: string, table: string, id: unknown, after: Document | null, except?: FlexibleListener, timing?: ChangeTiming): void {
    this.fanOut(appId, table, id, after, except, timing);
    // One process (the in-process transport) has no other replicas to tell.
    if (this.bus.local) return;
    const event: SyncFlexibleDocumentChanged = { appId, table, documentKey: JSON.stringify(encodeEjson(id)), replica: this.replica };
    // Losing one leaves the other replicas' clients behind on this document until it changes again: log it.
    this.bus.emit(Subjects.SyncFlexibleDocumentChanged, event).catch((error: unknown) => this.logger.warn({ err: error, appId, table }, 'could not announce a flexible sync change to the other replicas'));
  }

  /** Another replica announced a changed document: the sessions here whose views it concerns read it. */
  async changedElsewhere(event: SyncFlexibleDocumentChanged): Promise<void> {
    if (event.replica === this.replica || !this.apps.has(event.appId)) return;
    const app = await this.app(event.appId);
    const ref = app?.collectionOf(event.table);
    if (!app || !ref) return;
    const id = parseEjson(event.documentKey);
    const after = await app.client.db(ref.db).collection(ref.coll).findOne({ _id: id });
    this.fanOut(event.appId, event.table, id, after);
  }

  /**
   * Writes an upload's accepted documents in one transaction headed by the origin marker, so that the change
   * feed does not send them back, and moves the client file's upload cursor in it; the caller fans them out.
   */
  async write(app: FlexibleApp, writes: readonly FlexibleWrite[], sessionId: string, version: number, file: { key: string; clientVersion: number }): Promise<void> {
    if (writes.length === 0) return recordIntegrated(app.client, file.key, file.clientVersion);
    const origin: ChangeOrigin = { writer: SYNC_TRANSLATION_WRITER, appId: app.appId, partition: `flexible/${sessionId}`, version };
    const session = app.client.startSession();
    try {
      await session.withTransaction(async (tx) => {
        await app.client.db(WriteOriginsNamespace.db).collection(WriteOriginsNamespace.coll).replaceOne({ _id: `${origin.writer}/${app.appId}/flexible` }, { origin, at: new Date() }, { upsert: true, session: tx });
        const byCollection = new Map<string, { ref: CollectionRef; operations: BulkWriteOperation[] }>();
        for (const write of writes) {
          const ref = app.collectionOf(write.table);
          if (!ref) continue;
          const name = `${ref.db}.${ref.coll}`;
          let group = byCollection.get(name);
          if (!group) byCollection.set(name, (group = { ref, operations: [] }));
          group.operations.push(write.after === null ? { deleteOne: { filter: { _id: write.id } } } : { replaceOne: { filter: { _id: write.id }, replacement: write.after, upsert: true } });
        }
        for (const { ref, operations } of byCollection.values()) await app.client.db(ref.db).collection(ref.coll).bulkWrite(operations, { ordered: true, session: tx });
        await recordIntegrated(app.client, file.key, file.clientVersion, tx);
      });
    } finally {
      await session.endSession();
    }
  }
}

/**
 * The schema with the app's asymmetric tables marked as such: clients declare them asymmetric, and realm-core
 * refuses an AddTable whose table type differs from the one it holds.
 */
function withAsymmetricTables(schema: SyncSchema, asymmetric: readonly string[]): SyncSchema {
  if (asymmetric.length === 0) return schema;
  const marked: SyncSchema = new Map(schema);
  for (const name of asymmetric) {
    const table = schema.get(name);
    if (table?.spec.kind === 'TopLevel') marked.set(name, { ...table, spec: { ...table.spec, asymmetric: true } });
  }
  return marked;
}
