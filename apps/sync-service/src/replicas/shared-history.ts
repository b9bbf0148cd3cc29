/**
 * How the replicas of the sync service share partitions: one PartitionHub per process over the history in
 * the platform cluster (`DatastoreHistoryStorage`, database `sync`), whose appends are announced on
 * `sync.history.appended` and, as a safety net for an announcement lost while the broker was away, found
 * by comparing the heads of the partitions with sessions here every few seconds. On shutdown the appends
 * in progress finish before the datastore clients close, so an upload the server received is not lost.
 */
import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap, type Provider } from '@nestjs/common';
import { Subjects } from '@tessera/contracts';
import { MessageBus } from '@tessera/messaging';
import { DataSources } from '@tessera/platform';
import { PartitionHub } from '../sessions/partition-hub';
import { registerHistoryGauges } from '../sessions/sync-metrics';
import { DatastoreHistoryStorage } from '../storage/datastore-history-storage';
import { HistoryHousekeeping } from '../storage/history-housekeeping';
import { PartitionTranslator } from '../translation/partition-translator';
import { TranslatingHistory } from '../translation/translating-history';

/** How often the heads of partitions with sessions here are compared with the shared history. */
export const HEAD_CHECK_INTERVAL_MS = 3_000;

export const partitionHubProvider: Provider = {
  provide: PartitionHub,
  inject: [DataSources, MessageBus, PartitionTranslator],
  useFactory: (dataSources: DataSources, bus: MessageBus, translator: PartitionTranslator): PartitionHub => {
    const logger = new Logger('SyncService');
    // Every partition's history keeps the synced collections in step with it (translation/).
    const hub = new PartitionHub(new DatastoreHistoryStorage(dataSources.platform()), (storage, key) => new TranslatingHistory(storage, key, translator));
    translator.attach(hub);
    hub.announceWith((announcement) => {
      // Losing one only delays other replicas until their next head check: log, never fail the upload.
      bus.emit(Subjects.SyncHistoryAppended, announcement).catch((error: unknown) => logger.warn({ err: error, partition: announcement.partition }, 'could not announce a sync history append to the other replicas'));
    });
    return hub;
  },
};

/** Compaction leases, client activity, partition sizes and app deletion, in the same database as the history. */
export const historyHousekeepingProvider: Provider = {
  provide: HistoryHousekeeping,
  inject: [DataSources],
  useFactory: (dataSources: DataSources): HistoryHousekeeping => new HistoryHousekeeping(dataSources.platform()),
};

@Injectable()
export class SharedHistoryLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('SyncService');
  private timer?: NodeJS.Timeout;
  private checking = false;

  constructor(private readonly hub: PartitionHub) {}

  onApplicationBootstrap(): void {
    // The meter provider is registered by now (main.ts registers it before the application).
    registerHistoryGauges({ servedPartitions: () => this.hub.servedPartitions(), head: (key) => this.hub.storage.head(key) });
    this.timer = setInterval(() => void this.checkHeads(), HEAD_CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.hub.drain();
  }

  private async checkHeads(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      await this.hub.checkHeads();
    } catch (error) {
      this.logger.warn({ err: error }, 'could not compare sync partition heads with the shared history');
    } finally {
      this.checking = false;
    }
  }
}
