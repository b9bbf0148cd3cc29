import { Controller } from '@nestjs/common';
import { type EventPayload, Subjects } from '@tessera/contracts';
import { EventHandler } from '@tessera/messaging';
import { PartitionHub } from '../sessions/partition-hub';

/** Another sync-service replica appended to a partition's history: the sessions here on it catch up. */
@Controller()
export class HistoryAppendedHandler {
  constructor(private readonly hub: PartitionHub) {}

  // Broadcast: every replica holds its own sessions, so every replica must hear of every append.
  @EventHandler(Subjects.SyncHistoryAppended, { broadcast: true })
  historyAppended(event: EventPayload<typeof Subjects.SyncHistoryAppended>): void {
    this.hub.historyAppendedElsewhere(event);
  }
}
