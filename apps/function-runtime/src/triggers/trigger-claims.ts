import { Inject, Injectable } from '@nestjs/common';
import { isDatastoreError, isDuplicateKeyError } from '@tessera/datastore';
import { DataSources, PLATFORM_CLUSTER } from '@tessera/platform';
import { SETTINGS, type Settings } from '@tessera/settings';

/** How long a claim is kept: the stream's retention, past which no event comes again. */
const KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * One run per trigger and change across replicas: before a replica runs a trigger for a change it claims
 * `<trigger>/<message id>` in the platform database; a replica that gets the same change again (an
 * acknowledgement lost in a broker restart, delivered to another replica) finds the claim and skips it.
 * A replica that dies between its claim and the end of the run loses that run (at most once) instead of
 * having it run twice. Without a platform database this process may open (distributed mode with an
 * embedded `tessera-platform`) every claim succeeds and the stream's guarantees alone apply.
 */
@Injectable()
export class TriggerClaims {
  private readonly enabled: boolean;
  private lastSweep = Date.now();

  constructor(
    private readonly dataSources: DataSources,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.enabled = settings.mode === 'standalone' || Boolean(settings.clusterUris[PLATFORM_CLUSTER] ?? settings.clusterUris['*']);
  }

  private get collection() {
    return this.dataSources.platform().db('platform').collection('trigger_claims');
  }

  /** True when this replica may run it: nobody claimed it before. */
  async claim(key: string): Promise<boolean> {
    if (!this.enabled) return true;
    await this.sweep();
    try {
      await this.collection.insertOne({ _id: key, at: new Date() });
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  /**
   * Claims several at once (one write): the keys this replica may run, those nobody claimed before. What
   * another replica claimed meanwhile is left out; any other failure rejects.
   */
  async claimMany(keys: readonly string[]): Promise<Set<string>> {
    // A key asked twice is claimed once: the caller runs each key it gets back once.
    const unique = [...new Set(keys)];
    if (!this.enabled || unique.length === 0) return new Set(unique);
    await this.sweep();
    const at = new Date();
    try {
      await this.collection.insertMany(
        unique.map((key) => ({ _id: key, at })),
        { ordered: false },
      );
      return new Set(unique);
    } catch (error) {
      const refused = isDatastoreError(error) && isDuplicateKeyError(error) ? error.writeErrors : undefined;
      if (!refused || refused.some((failure) => failure.code !== 11000)) throw error;
      const taken = new Set(refused.map((failure) => failure.index));
      return new Set(unique.filter((_, index) => !taken.has(index)));
    }
  }

  /** Gives claims back: the runs did not happen after all (failed ones that will be tried again later). */
  async releaseMany(keys: readonly string[]): Promise<void> {
    if (!this.enabled || keys.length === 0) return;
    await this.collection.deleteMany({ _id: { $in: [...keys] } });
  }

  /** Gives a claim back: the run did not happen after all (a failed run that will be tried again later). */
  async release(key: string): Promise<void> {
    if (!this.enabled) return;
    await this.collection.deleteOne({ _id: key });
  }

  private async sweep(): Promise<void> {
    if (Date.now() - this.lastSweep < 60 * 60 * 1000) return;
    this.lastSweep = Date.now();
    await this.collection.deleteMany({ at: { $lt: new Date(Date.now() - KEEP_MS) } }).catch(() => undefined);
  }
}
