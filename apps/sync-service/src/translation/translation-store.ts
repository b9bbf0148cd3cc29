/**
 * What the translator keeps in the platform database (never in a linked cluster, whose change feed it
 * follows): the development-mode schema each app's clients created, the partitions already seeded from the
 * collections, and, where change events carry no pre-image, the partition each synced document was last
 * seen in. Sync's own writes are not recognised here: their change events carry the origin mark of their
 * transaction (PartitionTranslator.applyIntegrated).
 */
import { type DataSourceClient, isDuplicateKeyError } from '@tessera/datastore';
import { type AddColumn, type SyncSchema, schemaFromPlain, schemaToPlain, type TableSpec } from '@tessera/sync-protocol';

/** Seeded partitions remembered in memory (a partition stays seeded): bounded, oldest dropped first. */
const SEEDED_KEPT = 100_000;

export class TranslationStore {
  private readonly seeded = new Set<string>();

  constructor(private readonly platform: DataSourceClient) {}

  private collection(name: 'sync_schemas' | 'sync_seeded_partitions' | 'sync_document_partitions') {
    return this.platform.db('platform').collection(name);
  }

  async schema(appId: string): Promise<SyncSchema> {
    const stored = await this.collection('sync_schemas').findOne({ _id: appId });
    const tables = stored?.['tables'] as Array<{ name: string; spec: TableSpec; columns: AddColumn[] }> | undefined;
    return schemaFromPlain(tables ?? []);
  }

  async saveSchema(appId: string, schema: SyncSchema): Promise<void> {
    // Optional fields are left out rather than stored as undefined.
    const tables = JSON.parse(JSON.stringify(schemaToPlain(schema))) as unknown[];
    await this.collection('sync_schemas').replaceOne({ _id: appId }, { tables, savedAt: new Date() }, { upsert: true });
  }

  /** Claims the seeding of a partition; false when it was claimed before (by this or another replica). */
  async claimSeed(partitionKey: string): Promise<boolean> {
    try {
      await this.collection('sync_seeded_partitions').insertOne({ _id: partitionKey, at: new Date() });
      this.seeded.add(partitionKey);
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  /** Whether a partition was seeded (or its seeding began): read once per partition, then known here. */
  async isSeeded(partitionKey: string): Promise<boolean> {
    if (this.seeded.has(partitionKey)) return true;
    if ((await this.collection('sync_seeded_partitions').findOne({ _id: partitionKey })) === null) return false;
    this.seeded.add(partitionKey);
    if (this.seeded.size > SEEDED_KEPT) this.seeded.delete(this.seeded.values().next().value ?? partitionKey);
    return true;
  }

  /**
   * Records the partition of documents (undefined: in none, or deleted), for a later change event that
   * carries no pre-image: a MongoDB collection without `changeStreamPreAndPostImages` reports a delete, or a
   * replace that moves a document, without the document before it, and only this record then names the
   * partition whose clients must lose the object. Kept only where the store lacks pre-images (the caller
   * decides); the embedded engine always has them.
   */
  async notePartitions(entries: ReadonlyArray<{ documentKey: string; partition: string | undefined }>): Promise<void> {
    if (entries.length === 0) return;
    await this.collection('sync_document_partitions').bulkWrite(
      entries.map(({ documentKey, partition }) =>
        partition === undefined ? { deleteOne: { filter: { _id: documentKey } } } : { replaceOne: { filter: { _id: documentKey }, replacement: { partition }, upsert: true } },
      ),
      { ordered: true },
    );
  }

  /** The partition a document was last recorded in (see notePartitions). */
  async knownPartition(documentKey: string): Promise<string | undefined> {
    const stored = await this.collection('sync_document_partitions').findOne({ _id: documentKey });
    return typeof stored?.['partition'] === 'string' ? stored['partition'] : undefined;
  }
}
