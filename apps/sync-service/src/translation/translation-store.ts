/**
 * What the translator keeps in the platform database (never in a linked cluster, whose change feed it
 * follows): the development-mode schema each app's clients created, the partitions already seeded from the
 * collections, and the fingerprints of the documents sync wrote, by which their change events are known as
 * sync's own (not to be sent back to clients) and a document's last partition is known when a change event
 * carries no pre-image.
 */
import { createHash } from 'node:crypto';
import { type DataSourceClient, isDuplicateKeyError } from '@tessera/datastore';
import { type AddColumn, canonicalBson, type SyncSchema, schemaFromPlain, schemaToPlain, type TableSpec } from '@tessera/sync-protocol';

/** Own writes remembered per document: an echo arrives after at most this many later writes of the same document. */
const FINGERPRINTS_KEPT = 16;

/** Own writes also remembered in memory (this replica's echoes skip the database read); bounded. */
const LOCAL_WRITES_KEPT = 50_000;

export class TranslationStore {
  private readonly localWrites = new Map<string, Set<string>>();

  constructor(private readonly platform: DataSourceClient) {}

  private collection(name: 'sync_schemas' | 'sync_seeded_partitions' | 'sync_document_fingerprints') {
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
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async isSeeded(partitionKey: string): Promise<boolean> {
    return (await this.collection('sync_seeded_partitions').findOne({ _id: partitionKey })) !== null;
  }

  /** Remembers writes sync is about to make (before making them, so their change events always find them). */
  async rememberOwnWrites(writes: ReadonlyArray<{ documentKey: string; doc: Record<string, unknown> | null }>, partition: string): Promise<void> {
    if (writes.length === 0) return;
    for (const { documentKey, doc } of writes) {
      const hashes = this.localWrites.get(documentKey) ?? new Set<string>();
      this.localWrites.delete(documentKey);
      hashes.add(fingerprint(doc));
      this.localWrites.set(documentKey, hashes);
    }
    // Oldest first out (a Map iterates in insertion order): an echo is long handled when its entry goes.
    for (const stale of this.localWrites.keys()) {
      if (this.localWrites.size <= LOCAL_WRITES_KEPT) break;
      this.localWrites.delete(stale);
    }
    await this.collection('sync_document_fingerprints').bulkWrite(
      writes.map(({ documentKey, doc }) => ({
        updateOne: { filter: { _id: documentKey }, update: { $push: { hashes: { $each: [fingerprint(doc)], $slice: -FINGERPRINTS_KEPT } }, $set: { partition } }, upsert: true },
      })),
      { ordered: false },
    );
  }

  async notePartition(documentKey: string, partition: string | undefined): Promise<void> {
    if (partition === undefined) await this.collection('sync_document_fingerprints').updateOne({ _id: documentKey }, { $unset: { partition: '' } });
    else await this.collection('sync_document_fingerprints').updateOne({ _id: documentKey }, { $set: { partition } }, { upsert: true });
  }

  /** Whether `document` (null: deleted) is one sync wrote itself, and the partition last known for it. */
  async lookup(documentKey: string, document: Record<string, unknown> | null): Promise<{ own: boolean; partition?: string }> {
    const local = this.localWrites.get(documentKey);
    if (local?.has(fingerprint(document))) {
      local.delete(fingerprint(document));
      if (local.size === 0) this.localWrites.delete(documentKey);
      return { own: true };
    }
    const stored = await this.collection('sync_document_fingerprints').findOne({ _id: documentKey });
    if (!stored) return { own: false };
    const hashes = Array.isArray(stored['hashes']) ? (stored['hashes'] as unknown[]) : [];
    const partition = typeof stored['partition'] === 'string' ? stored['partition'] : undefined;
    return { own: hashes.includes(fingerprint(document)), ...(partition !== undefined ? { partition } : {}) };
  }
}

/**
 * A hash of a document that does not depend on field order or on how a store returns numbers (a driver
 * may hand back a long as a double): equal content, equal fingerprint.
 */
export function fingerprint(document: Record<string, unknown> | null): string {
  return createHash('sha256').update(canonicalBson(document)).digest('base64url').slice(0, 22);
}
