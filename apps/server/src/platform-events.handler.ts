import { Controller } from '@nestjs/common';
import { type EventPayload, Subjects } from '@tessera/contracts';
import { EventHandler } from '@tessera/messaging';
import { DeployedApps } from '@tessera/platform';

/** Keeps this process's view of the platform current: a deployment anywhere reloads the app here. */
@Controller()
export class PlatformEventsHandler {
  constructor(private readonly apps: DeployedApps) {}

  @EventHandler(Subjects.AppsDeploymentChanged, { broadcast: true })
  deploymentChanged(event: EventPayload<typeof Subjects.AppsDeploymentChanged>): void {
    this.apps.invalidate(event.appId);
  }
}
