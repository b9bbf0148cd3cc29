/**
 * The sync service's OpenTelemetry instruments, created from the global meter provider when the service
 * starts (a process without one records nothing; main.ts registers one when an OTLP endpoint is set).
 * Counters stay low-cardinality (no partition or user); the history gauges are per partition by design,
 * for the partitions with sessions on this replica only, and at most `gaugedPartitionLimit` of them.
 */
import { type Counter, metrics, type UpDownCounter } from '@opentelemetry/api';
import { type HistoryHead } from '@tessera/sync-protocol';
import { historyKeyParts } from './partition-hub';

export interface SyncMetrics {
  connections: UpDownCounter;
  sessions: UpDownCounter;
  /** Server versions integrated from client uploads. */
  uploads: Counter;
  /** DOWNLOAD messages sent. */
  downloads: Counter;
  /** Refusals, resets and protocol errors, by `kind` and `code`. */
  errors: Counter;
}

const meterName = '@tessera/sync-service';

export function createSyncMetrics(): SyncMetrics {
  const meter = metrics.getMeter(meterName);
  return {
    connections: meter.createUpDownCounter('tessera.sync.connections', { description: 'Open realm-sync WebSocket connections' }),
    sessions: meter.createUpDownCounter('tessera.sync.sessions', { description: 'Bound sync sessions (one per synced realm file)' }),
    uploads: meter.createCounter('tessera.sync.uploads', { description: 'Changesets integrated from client uploads' }),
    downloads: meter.createCounter('tessera.sync.downloads', { description: 'DOWNLOAD messages sent to clients' }),
    errors: meter.createCounter('tessera.sync.errors', { description: 'Sync refusals, client resets and protocol errors' }),
  };
}

/** Partitions measured at one collection, at most (a replica serving more reports the first ones). */
export const gaugedPartitionLimit = 1_000;

/** Where the history gauges read: the partitions served here and the head of a partition's history. */
export interface HistorySource {
  servedPartitions(): string[];
  head(key: string): Promise<HistoryHead>;
}

/**
 * Registers `tessera.sync.history.versions` and `tessera.sync.history.bytes`, observed at each collection
 * from the shared history (one head read per partition), with the app, reset epoch and partition value.
 */
export function registerHistoryGauges(source: HistorySource): void {
  const meter = metrics.getMeter(meterName);
  const versions = meter.createObservableGauge('tessera.sync.history.versions', { description: "Versions in a partition's sync history" });
  const bytes = meter.createObservableGauge('tessera.sync.history.bytes', { description: "Changeset bytes in a partition's sync history", unit: 'By' });
  meter.addBatchObservableCallback(
    async (observer) => {
      for (const key of source.servedPartitions().slice(0, gaugedPartitionLimit)) {
        const head = await source.head(key);
        const { appId, epoch, partition } = historyKeyParts(key);
        const attributes = { 'tessera.app_id': appId, 'tessera.sync.epoch': epoch, 'tessera.sync.partition': partition };
        observer.observe(versions, head.version, attributes);
        observer.observe(bytes, head.cumulativeSize, attributes);
      }
    },
    [versions, bytes],
  );
}
