/**
 * The change publisher: follows the change feed of every data source a deployed app links and publishes
 * each document change as `datastore.document.changed` on the durable stream, for triggers (and any other
 * durable consumer). It runs in every function-runtime replica; replicas publish the same changes with the
 * same message id (`<app>/<service>/<resume token>`), which the stream stores once. Each feed resumes after
 * the last change the stream stored (its position, kept in the platform database), so a restart misses
 * nothing and what it publishes again is dropped as a duplicate. It must not interpret changes: consumers do;
 * it only passes a writer's mark on its transaction through to the transaction's events (TransactionOrigins).
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import { isDataSourceType, isFederatedType, type AppConfig } from '@tessera/app-config';
import { type DocumentChanged, Subjects } from '@tessera/contracts';
import { type ChangeStream, type DataSourceClient, isDatastoreError, type ResumeToken } from '@tessera/datastore';
import { DurableEvents } from '@tessera/messaging';
import { AppRegistry, DataSources, DeployedApps, DeploymentFollowers, PLATFORM_CLUSTER } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';
import { changeMessageId, type ChangeSource, toDocumentChanged } from './change-event-codec';
import { ChangePositions } from './change-positions';
import { TransactionOrigins } from './transaction-origins';

/** How often a feed saves its position at most: what a crash makes it publish again (deduplicated by id). */
const SAVE_EVERY_MS = 500;
/** How often every app's feeds are checked against its deployment (a missed deploy event, a failed feed). */
const RECONCILE_EVERY_MS = 15_000;
/** How long a publish retries while the stream is unreachable before the feed starts over from its position. */
const PUBLISH_RETRY_MS = 60_000;
/**
 * Publishes a feed has under way at most. It does not wait for each (in standalone mode a publish resolves
 * once the triggers handled the change, which would make the feed hand them one change at a time): consumers
 * get what is ready in batches, and the position saved is always one whose changes were all stored.
 */
const MAX_IN_FLIGHT = 1_000;
/** How long `refresh` waits for a new feed to watch its source (its saved position is read first). */
const FEED_OPEN_WAIT_MS = 5_000;

const logger = new Logger('ChangePublisher');

/** One linked data source's feed: watch, publish in order, save the position. */
class Feed {
  private stopped = false;
  private stream?: ChangeStream;
  private published?: ResumeToken;
  private saved?: string;
  private saving?: Promise<void>;
  private lastSave = 0;
  /** Publishes under way, oldest first. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** A publish that failed: the feed starts over from its saved position. */
  private failed?: unknown;
  private readonly done: Promise<void>;
  private readonly origins = new TransactionOrigins();
  private markOpened!: () => void;
  /** Resolved once the feed watches its source (or stopped before it could): what is written after, it publishes. */
  readonly opened = new Promise<void>((resolve) => (this.markOpened = resolve));

  constructor(
    readonly key: string,
    readonly source: ChangeSource,
    private readonly client: DataSourceClient,
    private readonly events: DurableEvents,
    private readonly positions: ChangePositions,
  ) {
    this.done = this.run();
  }

  /**
   * Positions are kept per cluster too: a service relinked to another cluster (or a store made anew) starts
   * from now, never after a token of a feed it does not follow.
   */
  private get positionKey(): string {
    return `${this.key}@${this.source.cluster}`;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.markOpened();
    await this.stream?.close();
    await this.done;
    await this.finalSave();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        await this.follow();
        failures = 0;
      } catch (error) {
        if (this.stopped) return;
        if (isDatastoreError(error) && error.codeName === 'ChangeStreamHistoryLost') {
          // The feed no longer holds our position: start from now, and say what was lost.
          logger.error(`change feed of ${this.key}: the saved position is gone from the feed's history; changes since it are not published`);
          this.published = undefined;
          await this.positions.forget(this.positionKey).catch(() => undefined);
        } else {
          if (this.failed !== undefined) {
            // Changes after the saved position may be missing from the stream: publish them again (the
            // stream drops those it has by message id).
            await this.settled();
            this.failed = undefined;
            this.published = this.saved === undefined ? undefined : { _data: this.saved };
          }
          failures++;
          logger.warn(`change feed of ${this.key} failed (${error instanceof Error ? error.message : String(error)}); resuming from its position`);
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 250 * 2 ** Math.min(failures, 5))));
      }
    }
  }

  private async follow(): Promise<void> {
    const from = this.published ?? (await this.positions.get(this.positionKey));
    if (this.stopped) return;
    // A feed that resumes says where (a restart must not lose changes); a new one has nothing to report.
    if (from) logger.log(`following the changes of ${this.key} after ${from._data}`);
    else logger.debug(`following the changes of ${this.key} from now`);
    // Updates carry the document after them (looked up) and, where the source keeps it, before them.
    this.stream = this.client.watch([], { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable', ...(from ? { resumeAfter: from } : {}) });
    this.markOpened();
    try {
      for await (const event of this.stream) {
        // A writer's marker is not a change of anyone's data: its origin goes onto the rest of its transaction.
        const verdict = this.origins.observe(event, this.published);
        const payload = verdict.marker ? undefined : toDocumentChanged(this.source, event, verdict.origin, performance.timeOrigin + performance.now());
        if (this.failed !== undefined) throw this.failed;
        if (payload) await this.publish(payload, event._id);
        this.published = event._id;
        this.savePosition();
      }
    } finally {
      await this.stream.close().catch(() => undefined);
    }
  }

  /** Publishes a change without waiting for it (MAX_IN_FLIGHT at most under way); a failure stops the feed. */
  private async publish(payload: DocumentChanged, token: ResumeToken): Promise<void> {
    const stored = this.events.publishInOrder(this.key, Subjects.DatastoreDocumentChanged, payload, { messageId: changeMessageId(this.source, token), retryForMs: PUBLISH_RETRY_MS });
    const tracked: Promise<unknown> = stored.then(
      (result) => logger.debug(`published ${this.key} ${token._data} (${result.duplicate ? 'duplicate' : `sequence ${result.sequence}`})`),
      (error: unknown) => {
        this.failed ??= error;
        throw error;
      },
    );
    void tracked.catch(() => undefined).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    if (this.inFlight.size >= MAX_IN_FLIGHT) await this.inFlight.values().next().value?.catch(() => undefined);
  }

  /** Waits for the publishes under way; true when all of them were stored. */
  private async settled(): Promise<boolean> {
    const results = await Promise.allSettled([...this.inFlight]);
    return results.every((result) => result.status === 'fulfilled');
  }

  /** Saves the position in the background, at most every SAVE_EVERY_MS, once its changes are all stored. */
  private savePosition(): void {
    this.saving ??= this.delayedSave();
  }

  private async delayedSave(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, SAVE_EVERY_MS - (Date.now() - this.lastSave))));
    const token = this.origins.savable(this.published);
    if (token && token._data !== this.saved && (await this.settled())) await this.write(token);
    this.saving = undefined;
  }

  /** The last save when the feed stops: after what is under way. */
  private async finalSave(): Promise<void> {
    await this.saving;
    const token = this.origins.savable(this.published);
    if (token && token._data !== this.saved && (await this.settled())) await this.write(token);
  }

  private async write(token: ResumeToken): Promise<void> {
    this.lastSave = Date.now();
    try {
      await this.positions.save(this.positionKey, token);
      this.saved = token._data;
    } catch (error) {
      logger.warn(`could not save the position of ${this.key}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

@Injectable()
export class ChangePublisher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly feeds = new Map<string, Feed>();
  private timer?: NodeJS.Timeout;
  private reconciling: Promise<void> = Promise.resolve();
  private closed = false;
  private notice = false;
  private stopping?: Promise<void>;
  private unfollow?: () => void;

  constructor(
    private readonly registry: AppRegistry,
    private readonly deployed: DeployedApps,
    private readonly dataSources: DataSources,
    @Inject(DurableEvents) private readonly events: DurableEvents,
    @Inject(SETTINGS) private readonly settings: Settings,
    @Optional() private readonly followers?: DeploymentFollowers,
  ) {}

  onApplicationBootstrap(): void {
    // An admin API in this process answers a deploy once the app's new feeds watch their sources.
    this.unfollow = this.followers?.follow((appId) => this.refresh(appId));
    // schedule() never rejects: a failed reconciliation is logged and retried at the next tick.
    void this.schedule(() => this.reconcileAll());
    this.timer = setInterval(() => void this.schedule(() => this.reconcileAll()), RECONCILE_EVERY_MS);
    this.timer.unref();
  }

  /**
   * Stops every feed once its change in hand is published and saves the positions. It runs before the
   * runtime's own teardown (this module is destroyed before the runtime module it imports), while the trigger
   * consumer still handles what was published (see DatabaseTriggerConsumer).
   */
  onModuleDestroy(): Promise<void> {
    this.unfollow?.();
    this.stopping ??= this.stopFeeds();
    return this.stopping;
  }

  private async stopFeeds(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.reconciling;
    await Promise.all([...this.feeds.values()].map((feed) => feed.stop()));
    this.feeds.clear();
  }

  /**
   * Follows the app's data sources as deployed now (call it when the app was deployed or removed); resolves
   * once each feed the app needs watches its source (at most FEED_OPEN_WAIT_MS), so that a write made after
   * it reaches the app's triggers although a new feed starts from now.
   */
  async refresh(appId: string): Promise<void> {
    // This handler may hear the deployment before the host's platform handler drops the cached app.
    this.deployed.invalidate(appId);
    await this.schedule(() => this.reconcileApp(appId));
    const opening = [...this.feeds.values()].filter((feed) => feed.source.appId === appId).map((feed) => feed.opened);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(opening), new Promise<void>((resolve) => (timer = setTimeout(resolve, FEED_OPEN_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** The feeds followed now, by `<app>/<service>` (for tests and diagnostics). */
  get following(): string[] {
    return [...this.feeds.keys()];
  }

  /** Reconciliations run one at a time, so two never start the same feed. */
  private schedule(work: () => Promise<void>): Promise<void> {
    this.reconciling = this.reconciling.then(async () => {
      if (this.closed) return;
      try {
        await work();
      } catch (error) {
        logger.warn(`could not reconcile change feeds: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
    return this.reconciling;
  }

  private async reconcileAll(): Promise<void> {
    const apps = await this.registry.list();
    const ids = new Set(apps.map((app) => app._id));
    for (const [key, feed] of this.feeds) if (!ids.has(feed.source.appId)) await this.stopFeed(key);
    for (const app of apps) await this.reconcileApp(app._id);
  }

  private async reconcileApp(appId: string): Promise<void> {
    let config: AppConfig | undefined;
    try {
      config = (await this.deployed.byId(appId)).config;
    } catch {
      config = undefined; // removed
    }
    const wanted = new Map<string, ChangeSource>();
    for (const source of config ? this.linkedSources(appId, config) : []) wanted.set(`${appId}/${source.service}`, source);
    for (const [key, feed] of this.feeds) {
      if (feed.source.appId !== appId) continue;
      const next = wanted.get(key);
      if (!next || next.cluster !== feed.source.cluster) await this.stopFeed(key);
    }
    for (const [key, source] of wanted) {
      if (this.feeds.has(key) || this.closed) continue;
      const client = this.dataSources.forService(config as AppConfig, source.service).client;
      this.feeds.set(key, new Feed(key, source, client, this.events, new ChangePositions(this.dataSources.platform())));
    }
  }

  private linkedSources(appId: string, config: AppConfig): ChangeSource[] {
    const sources: ChangeSource[] = [];
    for (const service of config.services) {
      if (!isDataSourceType(service.config.type) || isFederatedType(service.config.type)) continue;
      const cluster = String(service.config.config?.['clusterName'] ?? service.config.name);
      if (!this.reachable(cluster)) continue;
      sources.push({ appId, service: service.config.name, cluster });
    }
    return sources;
  }

  /**
   * Standalone mode opens every cluster in this process. In distributed mode an embedded cluster belongs to
   * the process that opened its directory first, so only clusters mapped to MongoDB (and a mapped platform
   * database for positions) are followed here.
   */
  private reachable(cluster: string): boolean {
    if (this.settings.mode === 'standalone') return true;
    const uris = this.settings.clusterUris;
    const mapped = Boolean(uris[cluster] ?? uris['*']) && Boolean(uris[PLATFORM_CLUSTER] ?? uris['*']);
    if (!mapped && !this.notice) {
      this.notice = true;
      logger.log(`change events: cluster ${cluster} is embedded in a shared data directory; map it and ${PLATFORM_CLUSTER} to MongoDB or the datastore service (TESSERA_CLUSTER_URIS) for its changes to be published`);
    }
    return mapped;
  }

  private async stopFeed(key: string): Promise<void> {
    const feed = this.feeds.get(key);
    this.feeds.delete(key);
    await feed?.stop();
  }
}
