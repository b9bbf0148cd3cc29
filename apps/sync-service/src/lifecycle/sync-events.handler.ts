import { Controller, Logger } from '@nestjs/common';
import { type EventPayload, Subjects } from '@tessera/contracts';
import { EventHandler } from '@tessera/messaging';
import { AppDeletion } from './app-deletion';
import { SyncApps } from './sync-apps.service';
import { SyncConnections } from './sync-connections';

/** Events every sync replica acts on for the connections it holds (broadcast: no queue group). */
@Controller()
export class SyncEventsHandler {
  private readonly logger = new Logger('SyncService');

  constructor(
    private readonly apps: SyncApps,
    private readonly connections: SyncConnections,
    private readonly deletion: AppDeletion,
  ) {}

  /** Every replica closes the app's connections and forgets it; the deletes in the database are idempotent. */
  @EventHandler(Subjects.AppsAppDeleted, { broadcast: true })
  async appDeleted(event: EventPayload<typeof Subjects.AppsAppDeleted>): Promise<void> {
    await this.deletion.appDeleted(event.appId);
  }

  /** A deploy may terminate or re-enable sync (spec 3): live sessions learn it now, not at their next BIND. */
  @EventHandler(Subjects.AppsDeploymentChanged, { broadcast: true })
  deploymentChanged(event: EventPayload<typeof Subjects.AppsDeploymentChanged>): void {
    this.apps.forget(event.appId);
    this.connections.syncChanged(event.appId);
  }

  @EventHandler(Subjects.AppsUserChanged, { broadcast: true })
  userChanged(event: EventPayload<typeof Subjects.AppsUserChanged>): void {
    const closed = this.connections.closeUser(event.appId, event.userId);
    if (closed > 0) this.logger.log({ appId: event.appId, userId: event.userId, connections: closed }, `closed the sync connections of a ${event.change} user`);
  }
}
