import { Controller } from '@nestjs/common';
import { type CommandRequest, type CommandResponseInput, Subjects } from '@tessera/contracts';
import { CommandHandler } from '@tessera/messaging';
import { historyKeyParts } from '../sessions/partition-hub';
import { HistoryHousekeeping } from '../storage/history-housekeeping';
import { ClientReset } from './client-reset';
import { SyncPresence } from './sync-presence';

/**
 * The admin API's questions to the sync service. `sync.status.read`: any one replica answers for all, from
 * what every replica publishes to the sync database. `sync.client.reset`: any one replica marks the file.
 */
@Controller()
export class SyncAdminHandler {
  constructor(
    private readonly presence: SyncPresence,
    private readonly housekeeping: HistoryHousekeeping,
    private readonly clientReset: ClientReset,
  ) {}

  @CommandHandler(Subjects.SyncClientReset)
  reset(request: CommandRequest<typeof Subjects.SyncClientReset>): Promise<CommandResponseInput<typeof Subjects.SyncClientReset>> {
    return this.clientReset.reset(request);
  }

  @CommandHandler(Subjects.SyncStatusRead)
  async read(request: CommandRequest<typeof Subjects.SyncStatusRead>): Promise<CommandResponseInput<typeof Subjects.SyncStatusRead>> {
    const listing = await this.presence.list(request.appId);
    const sizes = await this.housekeeping.partitionSizes(request.appId);
    return {
      replicas: listing.replicas,
      clients: listing.clients,
      partitions: sizes.partitions.map((size) => {
        const { epoch, partition } = historyKeyParts(size.key);
        return { partition, epoch, versions: size.versions, bytes: size.bytes, compacted_until: size.compactedUntil, client_files: size.clientFiles };
      }),
      truncated: listing.truncated || sizes.truncated,
    };
  }
}
