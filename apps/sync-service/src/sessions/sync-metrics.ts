/**
 * The sync service's OpenTelemetry instruments, created from the global meter provider when the service
 * starts (a process without one records nothing). Attributes stay low-cardinality: no partition or user.
 */
import { type Counter, metrics, type UpDownCounter } from '@opentelemetry/api';

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

export function createSyncMetrics(): SyncMetrics {
  const meter = metrics.getMeter('@tessera/sync-service');
  return {
    connections: meter.createUpDownCounter('tessera.sync.connections', { description: 'Open realm-sync WebSocket connections' }),
    sessions: meter.createUpDownCounter('tessera.sync.sessions', { description: 'Bound sync sessions (one per synced realm file)' }),
    uploads: meter.createCounter('tessera.sync.uploads', { description: 'Changesets integrated from client uploads' }),
    downloads: meter.createCounter('tessera.sync.downloads', { description: 'DOWNLOAD messages sent to clients' }),
    errors: meter.createCounter('tessera.sync.errors', { description: 'Sync refusals, client resets and protocol errors' }),
  };
}
