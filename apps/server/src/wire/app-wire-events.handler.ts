import { Controller, Logger } from '@nestjs/common';
import { type EventPayload, Subjects } from '@tessera/contracts';
import { EventHandler } from '@tessera/messaging';
import { AppWireService } from './app-wire.service';

/** Every gateway replica closes the wire connections it holds of a user who lost access (broadcast). */
@Controller()
export class AppWireEventsHandler {
  private readonly logger = new Logger('app-wire');

  constructor(private readonly wire: AppWireService) {}

  @EventHandler(Subjects.AppsUserChanged, { broadcast: true })
  userChanged(event: EventPayload<typeof Subjects.AppsUserChanged>): void {
    const closed = this.wire.closeUser(event.appId, event.userId);
    if (closed > 0) this.logger.log({ appId: event.appId, userId: event.userId, connections: closed }, `closed the wire connections of a user (${event.change})`);
  }
}
