/**
 * The translation between a partition's changesets and the documents of the synced collections (spec 2.6),
 * both directions: uploads checked (schema, partition) and applied to the collections; the partition
 * seeded from the collections on first open, in batches; changes made anywhere else (functions, GraphQL,
 * remote data access, admin, a cluster's change stream) turned into server changesets for the partitions
 * they touch. The mapping itself is the pure code in @tessera/sync-protocol's translate; this class loads,
 * writes and logs. A document that does not fit is skipped and logged; it must never fail a session.
 */
import { Injectable, Logger } from '@nestjs/common';
import { type DocumentChanged } from '@tessera/contracts';
import { type BulkWriteOperation, type CollectionHandle, type DataSourceClient } from '@tessera/datastore';
import { decodeEjson } from '@tessera/messaging';
import { DataSources, DeployedApps } from '@tessera/platform';
import {
  applyToDocuments,
  canonicalBson,
  checkSchemaChanges,
  type DocumentSet,
  documentPartition,
  type Instruction,
  objectInstructions,
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
import { SyncApps } from '../lifecycle/sync-apps.service';
import { historyKey, type PartitionHub } from '../sessions/partition-hub';
import { syncModeOf } from '../sessions/sync-config';
import { type AppConfig } from '@tessera/app-config';
import { appSyncLayout, type AppSyncLayout, type CollectionRef } from './app-schema';
import { TranslationStore } from './translation-store';

/** What the hub's histories offer the translator (they are TranslatingHistory objects; naming the class here would close an import cycle). */
interface ExternalAppends {
  appendExternal(instructions: readonly Instruction[]): Promise<number>;
}

/** A partition as the hub knows it: its key, its app and its partition text (`formatPartitionValue`). */
export interface PartitionRef {
  key: string;
  appId: string;
  partition: string;
}

/** Documents read and changesets appended at a time while seeding a partition. */
export const SEED_BATCH = 500;

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
    // Canonical: the _id of a change event (an int as the store returns it) names the document sync wrote with a long.
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

  /** Adds what a development-mode client created to the stored schema (merged with what other replicas stored). */
  private async saveDevelopmentSchema(appId: string, instructions: readonly Instruction[]): Promise<void> {
    const stored = await this.store.schema(appId);
    const merged = checkSchemaChanges(stored, instructions, true);
    if (!merged.ok) return;
    if (merged.changed) await this.store.saveSchema(appId, merged.schema);
    this.devSchemas.set(appId, merged.schema);
  }

  /** Applies integrated instructions to the partition's documents (never throws for what does not fit). */
  async applyIntegrated(ref: PartitionRef, instructions: readonly Instruction[]): Promise<void> {
    const context = await this.context(ref.appId);
    if (!context) return;
    const binding = this.binding(context, ref.partition);
    const docs: DocumentSet = new Map();
    const byTable = new Map<string, ReturnType<typeof touchedObjects>>();
    for (const touched of touchedObjects(instructions)) {
      if (!context.collectionOf(touched.table)) continue;
      byTable.set(touched.table, [...(byTable.get(touched.table) ?? []), touched]);
    }
    const locations = new Map<string, CollectionRef>();
    for (const [table, objects] of byTable) {
      const location = context.collectionOf(table) as CollectionRef;
      const found = await this.collection(context, location)
        .find({ _id: { $in: objects.map((o) => primaryKeyToBson(o.object)) } })
        .toArray();
      const byId = new Map(found.map((doc) => [canonicalBson(doc['_id']), doc]));
      for (const object of objects) {
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
    // Fingerprints first (one bulk write), so every change event of the writes that follow finds its own.
    const own: Array<{ documentKey: string; doc: BsonDocument | null }> = [];
    const writes = new Map<CollectionRef, BulkWriteOperation[]>();
    for (const [key, entry] of docs) {
      if (entry.doc === null && !existed.has(key)) continue;
      const location = locations.get(key) as CollectionRef;
      const id = primaryKeyToBson(entry.object);
      own.push({ documentKey: this.documentKey(ref.appId, location, id), doc: entry.doc });
      const operations = writes.get(location) ?? [];
      writes.set(location, operations);
      operations.push(entry.doc === null ? { deleteOne: { filter: { _id: id } } } : { replaceOne: { filter: { _id: id }, replacement: entry.doc, upsert: true } });
    }
    await this.store.rememberOwnWrites(own, ref.partition);
    for (const [location, operations] of writes) await this.collection(context, location).bulkWrite(operations, { ordered: true });
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
    const documentKey = this.documentKey(change.appId, location, key['_id']);
    const known = await this.store.lookup(documentKey, change.operationType === 'delete' ? null : (after ?? null));
    if (known.own) return;
    const updatedFields = change.updateDescription
      ? [...Object.keys(change.updateDescription.updatedFields), ...change.updateDescription.removedFields].map((path) => path.split('.')[0] ?? path)
      : undefined;
    const translation = translateDocumentChange(context.schema, context.partitioning, {
      operationType: change.operationType,
      table,
      id: key['_id'],
      ...(after !== undefined ? { after } : {}),
      ...(before !== undefined ? { before } : {}),
      ...(known.partition !== undefined ? { knownPartition: known.partition } : {}),
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
      hub.appendedOutside(partitionKey, await (hub.history(partitionKey) as unknown as ExternalAppends).appendExternal(instructions));
    }
    const now = after && change.operationType !== 'delete' ? documentPartition(after, context.partitioning) : undefined;
    if (now !== known.partition) await this.store.notePartition(documentKey, now);
  }
}
