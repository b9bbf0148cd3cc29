import { Injectable, Logger, type OnApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig, AppFiles } from '@tessera/app-config';
import { FunctionCalls } from '@tessera/messaging';
import { AppRegistry, DataSources, type LogEntry, LogStore, PLATFORM_DATABASE } from '@tessera/platform';
import { AppStateService } from '../deploy/app-state.service';
import { forwardersIn, forwards, type LogForwarder } from './log-forwarder';

/** How often the log is read for new entries. */
const POLL_MS = 1000;
/** Entries read per forwarder per round. */
const PAGE = 100;
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Follows each app's log and hands the entries its enabled forwarders select to their action: a function
 * (`logs` as its argument), a collection of a linked data source, or an HTTP POST (Tessera's `http` action).
 * Each forwarder keeps a cursor (the `_id` of the last entry it passed) in the platform database and moves it
 * with a compare-and-set before delivering, so replicas of the admin API never deliver an entry twice; a
 * delivery that fails is logged and not retried (at most once, as a log forwarder's reader expects no
 * duplicates). A new forwarder starts with the entries written from its first round on; a disabled one
 * skips what is written while it is disabled.
 */
@Injectable()
export class LogForwardingWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('LogForwarding');
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;

  constructor(
    private readonly apps: AppRegistry,
    private readonly state: AppStateService,
    private readonly logs: LogStore,
    private readonly dataSources: DataSources,
    private readonly functions: FunctionCalls,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.round ??= this.forwardAll()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'log forwarding round failed'))
        .finally(() => (this.round = undefined));
    }, POLL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.round;
  }

  private get cursors() {
    return this.dataSources.platform().db(PLATFORM_DATABASE).collection('log_forwarder_cursors');
  }

  async forwardAll(): Promise<void> {
    for (const record of await this.apps.list()) {
      // Only the deployment's forwarder files are read each round; the whole app is parsed when a collection action needs its data sources.
      let files: AppFiles;
      try {
        files = await this.state.liveFiles(record);
      } catch (error) {
        this.logger.warn({ err: error, appId: record._id }, 'could not read the app to forward its logs');
        continue;
      }
      let app: Promise<AppConfig> | undefined;
      const config = (): Promise<AppConfig> => (app ??= this.state.liveApp(record));
      for (const forwarder of forwardersIn(files)) {
        try {
          await this.forward(record._id, config, forwarder);
        } catch (error) {
          this.logger.warn({ err: error, appId: record._id, forwarder: forwarder.name }, 'log forwarder could not deliver: these entries are not forwarded');
        }
      }
    }
  }

  private async forward(appId: string, app: () => Promise<AppConfig>, forwarder: LogForwarder): Promise<void> {
    const key = `${appId}/${forwarder._id}`;
    const cursor = await this.cursors.findOne({ _id: key });
    if (!cursor) {
      // From now on: an ObjectId of a moment ago (entries are ordered by their ObjectId `_id`).
      const start = `${Math.floor((Date.now() - 2 * POLL_MS) / 1000).toString(16).padStart(8, '0')}${'0'.repeat(16)}`;
      await this.cursors.updateOne({ _id: key }, { $setOnInsert: { after: start } }, { upsert: true });
      return;
    }
    const after = String(cursor['after']);
    const entries = await this.logs.list(appId, { afterId: after, limit: PAGE });
    if (entries.length === 0) return;
    // Claimed before delivery: a replica that loses the race delivers nothing.
    const claimed = await this.cursors.updateOne({ _id: key, after }, { $set: { after: entries[entries.length - 1]._id } });
    // A disabled forwarder passes entries by: enabling it again does not deliver what was logged meanwhile.
    if (claimed.modifiedCount === 0 || forwarder.disabled) return;
    const selected = entries.filter((entry) => forwards(forwarder, entry));
    if (selected.length === 0) return;
    const batches = forwarder.policy.type === 'batch' ? [selected] : selected.map((entry) => [entry]);
    for (const batch of batches) await this.deliver(appId, app, forwarder, batch);
  }

  private async deliver(appId: string, app: () => Promise<AppConfig>, forwarder: LogForwarder, entries: LogEntry[]): Promise<void> {
    const { action } = forwarder;
    switch (action.type) {
      case 'function':
        await this.functions.call({ appId, functionName: action.name, args: [entries], caller: { type: 'system' }, metadata: { origin: 'function', service: 'log_forwarder' } });
        return;
      case 'collection': {
        const target = this.dataSources.forService(await app(), action.data_source).client.db(action.database).collection(action.collection);
        await target.insertMany(entries.map((entry) => ({ ...entry })), { ordered: false });
        return;
      }
      case 'http': {
        const response = await fetch(action.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(forwarder.policy.type === 'batch' ? entries : entries[0]),
          signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
          redirect: 'error',
        });
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`${action.url} answered ${response.status}`);
        return;
      }
    }
  }
}
