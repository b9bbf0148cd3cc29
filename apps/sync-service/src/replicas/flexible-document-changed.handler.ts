import { Controller } from '@nestjs/common';
import { type EventPayload, Subjects } from '@tessera/contracts';
import { EventHandler } from '@tessera/messaging';
import { FlexibleHub } from '../flexible/flexible-hub';

/** Another sync-service replica announced a changed document of a flexible-sync type: sessions here hear of it. */
@Controller()
export class FlexibleDocumentChangedHandler {
  constructor(private readonly hub: FlexibleHub) {}

  // Broadcast: the sessions whose views the document concerns may be on any replica.
  @EventHandler(Subjects.SyncFlexibleDocumentChanged, { broadcast: true })
  async documentChanged(event: EventPayload<typeof Subjects.SyncFlexibleDocumentChanged>): Promise<void> {
    await this.hub.changedElsewhere(event);
  }
}
