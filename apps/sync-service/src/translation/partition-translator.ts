/**
 * The translation between a partition's changesets and the documents of the synced collections (spec 2.6),
 * both directions: uploads checked (schema, partition) and applied to the collections; the partition
 * seeded from the collections on first open, in batches; changes made anywhere else (functions, GraphQL,
 * remote data access, admin, a cluster's change stream) turned into server changesets for the partitions
 * they touch. The mapping itself is the pure code in @tessera/sync-protocol's translate; this class loads,
 * writes and logs. A document that does not fit is skipped and logged; it must never fail a session.
 *
 * Sync's own writes must not come back to the clients as server changesets (an old state replayed over a
 * newer one). Each application of integrated changesets is a transaction of the data source whose first
 * write is an origin marker (`WriteOriginsNamespace`, naming this app, the partition and the history
 * version); the change publisher puts that origin on every change event of the transaction, and
 * `handleChange` drops those events without a lookup. On MongoDB the transaction also makes the read of
 * the documents and their rewrite one step against writes made meanwhile elsewhere (the conflict runs it
 * again); the embedded engine makes outside writers wait only on collections the transaction already
 * wrote, so there a write between the read and the rewrite can still be overwritten.
 *
 * Fingerprints of written documents (what this replaced) are gone: they cost a database write per document
 * and a lookup per change event, and took an outside write that restored what sync had written earlier for
 * sync's own. What is kept per document, only on MongoDB, is its partition (TranslationStore), because a
 * change event there may come without the document before it and nothing else names the old partition.
 */
import { Injectable, Logger } from '@nestjs/common';
import { type ChangeOrigin, type DocumentChanged, Subjects, SYNC_TRANSLATION_WRITER, WriteOriginsNamespace } from '@tessera/contracts';
import { type BulkWriteOperation, type CollectionHandle, type DataSession, type DataSourceClient } from '@tessera/datastore';
import { decodeEjson, MessageBus } from '@tessera/messaging';
import { DataSources, DeployedApps } from '@tessera/platform';
import {
  applyToDocuments,
  canonicalBson,
  checkSchemaChanges,
  type DocumentSet,
  documentPartition,
  type Instruction,
  objectInstructions,
  objectKey,
  parseChangeset,
  parsePartitionValue,
  partitionKeyTypeOf,
  type PartitionBinding,
  partitionValueToBson,
  partitionViolation,
  type Partitioning,
  formatPrimaryKey,
  primaryKeyToBson,
  schemaInstructions,
  type SendableErrorCode,
  SyncProtocolError,
  type SyncSchema,
  touchedObjects,
  translateDocumentChange,
} from '@tessera/sync-protocol';
import { declaredTypes } from '../flexible/development-types';
import { SyncApps } from '../lifecycle/sync-apps.service';
import { historyKey, type PartitionHub } from '../sessions/partition-hub';
import { syncModeOf } from '../sessions/sync-config';
import { type AppConfig } from '@tessera/app-config';
import { appSyncLayout, type AppSyncLayout, type CollectionRef } from './app-schema';
import { originTimestampNow } from './origin-timestamp';
import { TranslationStore } from './translation-store';

/** A partition as the hub knows it: its key, its app and its partition text (`formatPartitionValue`). */
export interface PartitionRef {
  key: string;
  appId: string;
  partition: string;
}

/** Documents read and changesets appended at a time while seeding a partition. */
export const SEED_BATCH = 500;

/**
 * Documents written per transaction when integrated changesets are applied: a transaction stays far below
 * MongoDB's 16 MB and 60 s limits, and the embedded engine's write lock is never held long.
 */
export const APPLY_BATCH = 1_000;

/** Runs of a transaction that met a write conflict (another writer changed a document it read). */
const TRANSACTION_ATTEMPTS = 5;

interface AppContext {
  client: DataSourceClient;
  developmentMode: boolean;
  /** Where development mode puts a collection per type. */
  database: string;
  schema: SyncSchema;
  partitioning: Partitioning;
  collectionOf(table: string): CollectionRef | undefined;
  tableOf(db: string, coll: string): string | undefined;
}

type BsonDocument = Record<string, unknown>;

/** The BSON types a valid key value of each partition key type has (`$type` aliases). */
const keyBsonTypes: Record<Partitioning['type'], string[]> = { string: ['string'], long: ['int', 'long'], objectId: ['objectId'], uuid: ['binData'] };

@Injectable()
export class PartitionTranslator {
  private readonly logger = new Logger('SyncTranslation');
  private readonly store: TranslationStore;
  /** Development-mode schemas created by clients, per app (the stored copy is the truth across replicas). */
  private readonly devSchemas = new Map<string, SyncSchema>();
  private hub?: PartitionHub;
  private readonly layouts = new WeakMap<AppConfig, AppSyncLayout | undefined>();

  constructor(
    private readonly deployed: DeployedApps,
    private readonly dataSources: DataSources,
    private readonly apps: SyncApps,
    private readonly bus: MessageBus,
  ) {
    this.store = new TranslationStore(dataSources.platform());
  }

  /** The hub whose partitions external changes are appended to. */
  attach(hub: PartitionHub): void {
    this.hub = hub;
  }

  private async context(appId: string): Promise<AppContext | undefined> {
    const config = (await this.deployed.byId(appId)).config;
    const mode = syncModeOf(config);
    if (mode.kind !== 'partition') return undefined;
    if (!this.layouts.has(config)) this.layouts.set(config, appSyncLayout(config));
    const layout = this.layouts.get(config);
    const keyType = partitionKeyTypeOf(mode.type);
    if (!layout || !keyType) return undefined;
    let schema = layout.schema;
    const devTables = new Set<string>();
    if (layout.developmentMode) {
      let dev = this.devSchemas.get(appId);
      if (!dev) {
        dev = await this.store.schema(appId);
        this.devSchemas.set(appId, dev);
      }
      schema = new Map(schema);
      for (const [name, table] of dev) {
        if (schema.has(name)) continue;
        schema.set(name, table);
        devTables.add(name);
      }
    }
    const database = layout.database ?? 'sync';
    const collectionOf = (table: string): CollectionRef | undefined => layout.collections.get(table) ?? (devTables.has(table) && schema.get(table)?.spec.kind === 'TopLevel' ? { db: database, coll: table } : undefined);
    return {
      client: this.dataSources.forService(config, layout.service).client,
      developmentMode: layout.developmentMode,
      database,
      schema,
      partitioning: { key: mode.key, type: keyType, required: mode.required },
      collectionOf,
      tableOf: (db, coll) => [...schema.keys()].find((table) => {
        const ref = collectionOf(table);
        return ref?.db === db && ref.coll === coll;
      }),
    };
  }

  private binding(context: AppContext, partition: string): PartitionBinding {
    const value = parsePartitionValue(partition);
    return { key: context.partitioning.key, value, bson: partitionValueToBson(value) };
  }

  private collection(context: AppContext, ref: CollectionRef): CollectionHandle {
    return context.client.db(ref.db).collection(ref.coll);
  }

  private documentKey(appId: string, ref: CollectionRef, id: unknown): string {
    // Canonical: the _id of a change event (an int as the store returns it) names the document sync recorded with a long.
    return `${appId}/${ref.db}/${ref.coll}/${canonicalBson(id)}`;
  }

  /**
   * Refuses an upload the way App Services did: a schema change it does not allow (225) or an object
   * written with another partition value (212). Undefined when the upload may be integrated.
   */
  async checkUpload(ref: PartitionRef, changesets: readonly Uint8Array[]): Promise<{ code: SendableErrorCode; message: string } | undefined> {
    const context = await this.context(ref.appId);
    if (!context) return undefined;
    let instructions: Instruction[];
    try {
      instructions = changesets.flatMap((bytes) => (bytes.length === 0 ? [] : parseChangeset(bytes).instructions));
    } catch (error) {
      // The history refuses what does not parse, with its own bad-changeset error.
      if (error instanceof SyncProtocolError) return undefined;
      throw error;
    }
    const schemaCheck = checkSchemaChanges(context.schema, instructions, context.developmentMode);
    if (!schemaCheck.ok) {
      this.logger.warn({ msg: 'sync upload refused: schema change', appId: ref.appId, partition: ref.partition, reason: schemaCheck.message });
      return { code: 225, message: schemaCheck.message };
    }
    if (schemaCheck.changed) await this.saveDevelopmentSchema(ref.appId, instructions);
    const violation = partitionViolation(instructions, this.binding(context, ref.partition));
    if (violation) {
      this.logger.warn({ msg: 'sync upload refused: partition value', appId: ref.appId, partition: ref.partition, reason: violation });
      return { code: 212, message: violation };
    }
    return undefined;
  }

  /**
   * Adds what a development-mode client created to the stored schema (merged with what other replicas stored),
   * and has the admin API deploy the new types and fields as collection schemas (spec 2.6), as flexible sync
   * does: they show in the app's rules, its GraphQL schema and its generated data models.
   */
  private async saveDevelopmentSchema(appId: string, instructions: readonly Instruction[]): Promise<void> {
    const stored = await this.store.schema(appId);
    const merged = checkSchemaChanges(stored, instructions, true);
    if (!merged.ok) return;
    if (merged.changed) await this.store.saveSchema(appId, merged.schema);
    this.devSchemas.set(appId, merged.schema);
    const types = merged.changed ? declaredTypes(stored, merged.schema) : [];
    if (types.length === 0) return;
    try {
      await this.bus.request(Subjects.AppsDevelopmentSchemaApply, { appId, types }, { timeoutMs: 15_000 });
    } catch (error) {
      // The types still sync from the stored schema; the admin API's refusal is the app's to see in the log.
      this.logger.warn({ err: error, appId, types: types.map((type) => type.name) }, 'development mode: could not deploy the schemas a sync client declared');
    }
  }

  /**
   * Applies integrated instructions (history versions up to `version`) to the partition's documents, in
   * transactions of at most APPLY_BATCH documents, each marked with its origin (never throws for what does
   * not fit; a store failure is the caller's to log).
   */
  async applyIntegrated(ref: PartitionRef, instructions: readonly Instruction[], version: number): Promise<void> {
    const context = await this.context(ref.appId);
    if (!context) return;
    const binding = this.binding(context, ref.partition);
    const objects = touchedObjects(instructions).filter((touched) => context.collectionOf(touched.table) !== undefined);
    if (objects.length === 0) return;
    // Each object's instructions go with its batch, in their order.
    const batchOf = new Map(objects.map((object, i) => [object.key, Math.floor(i / APPLY_BATCH)]));
    const batches = Array.from({ length: Math.ceil(objects.length / APPLY_BATCH) }, (_, i) => ({ objects: objects.slice(i * APPLY_BATCH, (i + 1) * APPLY_BATCH), instructions: [] as Instruction[] }));
    for (const instruction of instructions) {
      if (!('object' in instruction)) continue;
      const batch = batchOf.get(objectKey(instruction.table, instruction.object));
      if (batch !== undefined) batches[batch]?.instructions.push(instruction);
    }
    const origin: ChangeOrigin = { writer: SYNC_TRANSLATION_WRITER, appId: ref.appId, partition: ref.key, version };
    for (const batch of batches) await this.applyBatch(context, ref, binding, origin, batch.objects, batch.instructions);
  }

  private async applyBatch(context: AppContext, ref: PartitionRef, binding: PartitionBinding, origin: ChangeOrigin, objects: ReturnType<typeof touchedObjects>, instructions: readonly Instruction[]): Promise<void> {
    if (context.client.engine === 'mongodb') {
      // Before the documents: a later change event without a pre-image must find where they are.
      await this.store.notePartitions(objects.map((object) => ({ documentKey: this.documentKey(ref.appId, context.collectionOf(object.table) as CollectionRef, primaryKeyToBson(object.object)), partition: ref.partition })));
    }
    await this.inTransaction(context.client, async (session) => {
      // The origin marker first: it heads the transaction's change events (the publisher puts its origin on
      // the ones that follow). One marker per partition, replaced each time, so the collection stays small.
      await context.client
        .db(WriteOriginsNamespace.db)
        .collection(WriteOriginsNamespace.coll)
        .replaceOne({ _id: `${origin.writer}/${ref.key}` }, { origin, at: new Date() }, { upsert: true, session });
      const docs: DocumentSet = new Map();
      const locations = new Map<string, CollectionRef>();
      const byTable = new Map<string, ReturnType<typeof touchedObjects>>();
      for (const object of objects) byTable.set(object.table, [...(byTable.get(object.table) ?? []), object]);
      for (const [table, tableObjects] of byTable) {
        const location = context.collectionOf(table) as CollectionRef;
        const found = await this.collection(context, location)
          .find({ _id: { $in: tableObjects.map((o) => primaryKeyToBson(o.object)) } }, undefined, { session })
          .toArray();
        const byId = new Map(found.map((doc) => [canonicalBson(doc['_id']), doc]));
        for (const object of tableObjects) {
          const doc = byId.get(canonicalBson(primaryKeyToBson(object.object))) ?? null;
          if (doc && documentPartition(doc, context.partitioning) !== ref.partition) {
            // The same _id in another partition's document: never overwrite or delete another partition's data.
            this.logger.warn({ msg: 'sync object not written: its _id belongs to another partition', appId: ref.appId, partition: ref.partition, table, id: formatPrimaryKey(object.object) });
            continue;
          }
          docs.set(object.key, { table, object: object.object, doc });
          locations.set(object.key, location);
        }
      }
      const existed = new Set([...docs].filter(([, entry]) => entry.doc !== null).map(([key]) => key));
      const { skipped } = applyToDocuments(instructions, docs, binding);
      if (skipped > 0) this.logger.debug({ msg: 'sync instructions without a place in the documents', appId: ref.appId, partition: ref.partition, skipped });
      const writes = new Map<CollectionRef, BulkWriteOperation[]>();
      for (const [key, entry] of docs) {
        if (entry.doc === null && !existed.has(key)) continue;
        const location = locations.get(key) as CollectionRef;
        const id = primaryKeyToBson(entry.object);
        const operations = writes.get(location) ?? [];
        writes.set(location, operations);
        operations.push(entry.doc === null ? { deleteOne: { filter: { _id: id } } } : { replaceOne: { filter: { _id: id }, replacement: entry.doc, upsert: true } });
      }
      for (const [location, operations] of writes) await this.collection(context, location).bulkWrite(operations, { ordered: true, session });
    });
  }

  /** Runs `work` in a transaction of `client`, again when it met a write conflict. */
  private async inTransaction(client: DataSourceClient, work: (session: DataSession) => Promise<void>): Promise<void> {
    const session = client.startSession();
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          await session.withTransaction(work);
          return;
        } catch (error) {
          if (!isTransientTransactionError(error) || attempt >= TRANSACTION_ATTEMPTS) throw error;
        }
      }
    } finally {
      await session.endSession();
    }
  }

  /** The collections missed integrated versions (a store failure): logged, the history stays the truth. */
  applyFailed(ref: PartitionRef, versions: readonly number[], error: unknown): void {
    this.logger.error({ msg: 'sync changesets not applied to the collections', appId: ref.appId, partition: ref.partition, versions, error: error instanceof Error ? error.message : String(error) });
  }

  /**
   * Seeds a partition opened for the first time from the documents already in its collections, in batches
   * (keyset pages by `_id`), so a partition is never held in memory whole.
   */
  async seed(ref: PartitionRef, append: (instructions: readonly Instruction[]) => Promise<number>): Promise<void> {
    if (!(await this.store.claimSeed(ref.key))) return;
    const context = await this.context(ref.appId);
    if (!context) return;
    const binding = this.binding(context, ref.partition);
    let objects = 0;
    for (const [table, spec] of context.schema) {
      const location = context.collectionOf(table);
      if (!location || spec.spec.kind !== 'TopLevel') continue;
      // The null partition of an optional key also holds the documents whose key has another type.
      const filter = binding.value.type === 'null' ? { [binding.key]: { $not: { $type: keyBsonTypes[context.partitioning.type] } } } : { [binding.key]: binding.bson };
      let after: unknown;
      for (;;) {
        const page = await this.collection(context, location)
          .find(after === undefined ? filter : { $and: [filter, { _id: { $gt: after } }] })
          .sort({ _id: 1 })
          .limit(SEED_BATCH)
          .toArray();
        const instructions: Instruction[] = [];
        for (const doc of page) {
          if (documentPartition(doc, context.partitioning) !== ref.partition) continue;
          const written = objectInstructions(context.schema, table, doc, undefined, context.partitioning.key);
          if (written.ok) instructions.push(...written.instructions);
          else this.logger.warn({ msg: 'sync document skipped: it does not fit the schema', appId: ref.appId, partition: ref.partition, table, reason: written.reason });
        }
        if (instructions.length > 0) {
          await append([...schemaInstructions(context.schema, [table]), ...instructions]);
          objects += page.length;
        }
        if (page.length < SEED_BATCH) break;
        after = page[page.length - 1]?.['_id'];
      }
    }
    if (objects > 0) this.logger.log({ msg: 'sync partition seeded from the collections', appId: ref.appId, partition: ref.partition, objects });
  }

  /** Turns a change made outside sync into server changesets for the partitions it touches. */
  async handleChange(change: DocumentChanged): Promise<void> {
    const hub = this.hub;
    if (!hub) return;
    // Sync's own write (applyIntegrated marked its transaction): the history has it already. Another app's
    // sync writing to a cluster this app links too is a write from elsewhere for this one.
    if (change.origin?.writer === SYNC_TRANSLATION_WRITER && change.origin.appId === change.appId) return;
    let context: AppContext | undefined;
    try {
      context = await this.context(change.appId);
    } catch (error) {
      if (error instanceof Error && 'errorCode' in error && error.errorCode === 'AppNotFound') return;
      throw error;
    }
    if (context?.developmentMode && context.database === change.db && !context.tableOf(change.db, change.coll)) {
      // A type another replica's clients created since this one read the development schema.
      this.devSchemas.delete(change.appId);
      context = await this.context(change.appId);
    }
    const table = context?.tableOf(change.db, change.coll);
    if (!context || !table) return;
    const location = context.collectionOf(table) as CollectionRef;
    const key = decodeEjson(change.documentKey) as BsonDocument;
    const after = change.fullDocument ? (decodeEjson(change.fullDocument) as BsonDocument) : change.fullDocument;
    const before = change.fullDocumentBeforeChange ? (decodeEjson(change.fullDocumentBeforeChange) as BsonDocument) : change.fullDocumentBeforeChange;
    const updatedFields = change.updateDescription
      ? [...Object.keys(change.updateDescription.updatedFields), ...change.updateDescription.removedFields].map((path) => path.split('.')[0] ?? path)
      : undefined;
    // Only a MongoDB collection without pre-images needs the recorded partition (see TranslationStore).
    const recorded = context.client.engine === 'mongodb';
    const documentKey = this.documentKey(change.appId, location, key['_id']);
    const knownPartition = recorded && !before ? await this.partitionWithoutPreImage(change.operationType, documentKey, after, updatedFields, context.partitioning) : undefined;
    const translation = translateDocumentChange(context.schema, context.partitioning, {
      operationType: change.operationType,
      table,
      id: key['_id'],
      ...(after !== undefined ? { after } : {}),
      ...(before !== undefined ? { before } : {}),
      ...(knownPartition !== undefined ? { knownPartition } : {}),
      ...(updatedFields ? { updatedFields } : {}),
    });
    if (translation.skipped) {
      this.logger.warn({ msg: 'sync document skipped', appId: change.appId, db: change.db, coll: change.coll, reason: translation.skipped });
    }
    // The partitions of the app's current reset epoch: those of an earlier one are gone for clients.
    const { epoch } = await this.apps.view(change.appId);
    for (const [partition, instructions] of translation.changesets) {
      const partitionKey = historyKey(change.appId, epoch, partition);
      // A partition no client opened yet gets the document when it is seeded.
      if (!(await this.store.isSeeded(partitionKey))) continue;
      await hub.appendServerChangeset(partitionKey, instructions, originTimestampNow());
    }
    if (recorded) {
      const was = before ? documentPartition(before, context.partitioning) : knownPartition;
      const now = after && change.operationType !== 'delete' ? documentPartition(after, context.partitioning) : undefined;
      if (now !== was) await this.store.notePartitions([{ documentKey, partition: now }]);
    }
  }

  /**
   * The partition a document was in before a change reported without its pre-image: an update that left
   * the key alone was in the partition it is in now; anything else is looked up in what was recorded.
   */
  private async partitionWithoutPreImage(operationType: DocumentChanged['operationType'], documentKey: string, after: BsonDocument | null | undefined, updatedFields: readonly string[] | undefined, partitioning: Partitioning): Promise<string | undefined> {
    if (operationType === 'insert') return undefined;
    if (operationType === 'update' && after && updatedFields && !updatedFields.includes(partitioning.key)) return documentPartition(after, partitioning);
    return this.store.knownPartition(documentKey);
  }
}

/** A transaction that may succeed when run again: a write conflict, or one the store aborted meanwhile. */
function isTransientTransactionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { codeName, cause } = error as { codeName?: unknown; cause?: { hasErrorLabel?: (label: string) => boolean } };
  return codeName === 'WriteConflict' || codeName === 'NoSuchTransaction' || cause?.hasErrorLabel?.('TransientTransactionError') === true;
}
