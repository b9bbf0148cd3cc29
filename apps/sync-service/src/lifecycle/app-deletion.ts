/**
 * An app was deleted (`apps.app.deleted`): its live connections close, this process forgets its partitions,
 * and its sync history, client files, activity records, translation state and the snapshots of what its
 * flexible-sync clients hold leave the platform cluster.
 * Every replica runs it (the deletes are idempotent), so a replica that holds no connection of the app still
 * makes sure nothing is left.
 */
import { Injectable, Logger } from '@nestjs/common';
import { DataSources } from '@tessera/platform';
import { FlexibleHub } from '../flexible/flexible-hub';
import { historyKeyParts, PartitionHub } from '../sessions/partition-hub';
import { HistoryHousekeeping } from '../storage/history-housekeeping';
import { SyncApps } from './sync-apps.service';
import { SyncCompaction } from './sync-compaction';
import { SyncConnections } from './sync-connections';

/** Where the translation keeps its state (platform database; see translation/translation-store.ts). */
const TRANSLATION_DATABASE = 'platform';

@Injectable()
export class AppDeletion {
  private readonly logger = new Logger('SyncService');

  constructor(
    private readonly connections: SyncConnections,
    private readonly apps: SyncApps,
    private readonly compaction: SyncCompaction,
    private readonly hub: PartitionHub,
    private readonly housekeeping: HistoryHousekeeping,
    private readonly dataSources: DataSources,
    private readonly flexible: FlexibleHub,
  ) {}

  async appDeleted(appId: string): Promise<void> {
    const closed = this.connections.closeApp(appId);
    this.compaction.forgetApp(appId);
    this.hub.forget((key) => historyKeyParts(key).appId === appId);
    this.apps.forget(appId);
    const purged = await this.housekeeping.purgeApp(appId);
    await this.purgeTranslationState(appId);
    const flexibleSnapshots = await this.flexible.snapshots.purgeApp(appId);
    this.logger.log({ appId, connections: closed, ...purged, flexibleSnapshots }, 'dropped the sync state of a deleted app');
  }

  /** The development-mode schema, the seeded partitions (history keys) and the recorded partitions of documents sync wrote. */
  private async purgeTranslationState(appId: string): Promise<void> {
    const db = this.dataSources.platform().db(TRANSLATION_DATABASE);
    const keys = [
      { $gte: `${appId}/`, $lt: `${appId}/\uffff` },
      { $gte: `${appId}@`, $lt: `${appId}@\uffff` },
    ];
    await db.collection('sync_schemas').deleteOne({ _id: appId });
    for (const range of keys) {
      await db.collection('sync_seeded_partitions').deleteMany({ _id: range });
      await db.collection('sync_document_partitions').deleteMany({ _id: range });
    }
  }
}
