/**
 * The admin API's `sync/force_reset`: one client file of the app's current reset epoch is marked expired, so
 * that its next IDENT or UPLOAD (on any replica) gets 222 with a client reset, as after compaction past it.
 * File idents are per partition here (App Services issued them per app), so an ident found in several
 * partitions needs the partition named.
 */
import { Injectable, Logger } from '@nestjs/common';
import { type CommandResponseInput, type Subjects, type SyncClientResetRequest } from '@tessera/contracts';
import { formatPartitionValue, parsePartitionValue, SyncProtocolError } from '@tessera/sync-protocol';
import { historyKey, PartitionHub } from '../sessions/partition-hub';
import { HistoryHousekeeping } from '../storage/history-housekeeping';
import { SyncApps } from './sync-apps.service';

type ResetOutcome = CommandResponseInput<typeof Subjects.SyncClientReset>;

@Injectable()
export class ClientReset {
  private readonly logger = new Logger('SyncService');

  constructor(
    private readonly apps: SyncApps,
    private readonly hub: PartitionHub,
    private readonly housekeeping: HistoryHousekeeping,
  ) {}

  async reset(request: SyncClientResetRequest): Promise<ResetOutcome> {
    const { epoch } = await this.apps.view(request.appId);
    const prefix = historyKey(request.appId, epoch, '');
    let keys: string[];
    if (request.partition !== undefined) {
      let canonical: string;
      try {
        canonical = formatPartitionValue(parsePartitionValue(request.partition));
      } catch (error) {
        if (error instanceof SyncProtocolError) return { outcome: 'invalid_partition', partitions: [] };
        throw error;
      }
      keys = (await this.housekeeping.partitionsWithClientFile(prefix, request.fileIdent)).filter((key) => key === `${prefix}${canonical}`);
    } else {
      keys = await this.housekeeping.partitionsWithClientFile(prefix, request.fileIdent);
    }
    const partitions = keys.map((key) => key.slice(prefix.length));
    if (keys.length === 0) return { outcome: 'not_found', partitions };
    const [key] = keys;
    if (keys.length > 1 || key === undefined) return { outcome: 'ambiguous', partitions };
    // Under the partition's lock here: an upload of this client integrating meanwhile writes its record last.
    await this.hub.exclusive(key, async () => {
      const file = await this.hub.storage.getClientFile(key, request.fileIdent);
      if (file && !file.expired) await this.hub.storage.putClientFile(key, { ...file, expired: true });
    });
    this.logger.log({ appId: request.appId, partition: partitions[0], clientFileIdent: request.fileIdent }, 'an operator reset a sync client file');
    return { outcome: 'reset', partitions };
  }
}
