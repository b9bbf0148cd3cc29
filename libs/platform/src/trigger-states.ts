import { type DataSourceClient, type Document, isDuplicateKeyError } from '@tessera/datastore';

/**
 * Why a database trigger is not firing as changes come: `suspended` (its function kept failing; the changes
 * since wait in its backlog), `resuming` (an administrator asked for it to go on, from its backlog or from
 * now), `disabled` (its configuration says so; changes wait for it to be enabled unless it skips catch-up
 * events). A trigger without a state fires as changes come.
 */
export type TriggerStatus = 'suspended' | 'resuming' | 'disabled';

export interface TriggerState {
  _id: string;
  app_id: string;
  trigger: string;
  status?: TriggerStatus;
  /** The error that suspended it (App Services' `error` of the trigger document). */
  error?: string;
  error_at?: Date;
  last_modified: Date;
  /** Where a resume starts: the first change after the failure (`position`) or the next one (`now`). */
  resume_from?: 'position' | 'now';
  /** Changes waiting in the backlog. */
  backlog?: number;
  /** More changes came than the backlog keeps: the saved position is gone. */
  backlog_lost?: boolean;
  /** Resumed from now: changes made before this time are skipped (they may still be on their way). */
  skip_before?: Date;
  lock_owner?: string;
  lock_until?: Date;
}

export interface TriggerBacklogEntry {
  _id: string;
  key: string;
  /** The stream's idempotency key of the change (claims are made by it). */
  message_id: string;
  /** The `datastore.document.changed` payload. */
  change: Document;
}

/** How many changes a suspended or disabled trigger keeps before its position counts as lost. */
export const TRIGGER_BACKLOG_LIMIT = 10_000;

/**
 * The lifecycle state of database triggers and the changes a suspended (or disabled) trigger has not run
 * yet, in the platform database, shared by every function-runtime replica and the admin API. Backlog entries
 * are keyed by the change's message id (`<app>/<service>/<resume token>`; a feed's tokens sort in commit
 * order), so one source's changes come back in the order they happened, across restarts of the stream.
 */
export class TriggerStates {
  constructor(
    private readonly platform: DataSourceClient,
    private readonly backlogLimit = TRIGGER_BACKLOG_LIMIT,
  ) {}

  private get states() {
    return this.platform.db('platform').collection('trigger_states');
  }

  private get entries() {
    return this.platform.db('platform').collection('trigger_backlog');
  }

  static key(appId: string, trigger: string): string {
    return `${appId}/${trigger}`;
  }

  async get(appId: string, trigger: string): Promise<TriggerState | undefined> {
    const found = await this.states.findOne({ _id: TriggerStates.key(appId, trigger) });
    return found ? (found as unknown as TriggerState) : undefined;
  }

  async list(appId?: string): Promise<TriggerState[]> {
    return (await this.states.find(appId === undefined ? {} : { app_id: appId }).toArray()) as unknown as TriggerState[];
  }

  async suspend(appId: string, trigger: string, error: string): Promise<void> {
    const now = new Date();
    await this.states.updateOne({ _id: TriggerStates.key(appId, trigger) }, { $set: { app_id: appId, trigger, status: 'suspended', error, error_at: now, last_modified: now }, $unset: { resume_from: '' } }, { upsert: true });
  }

  /** Marks a disabled trigger as keeping its changes, unless it already has a state. */
  async keepWhileDisabled(appId: string, trigger: string): Promise<void> {
    await this.states.updateOne({ _id: TriggerStates.key(appId, trigger), status: { $exists: false } }, { $set: { app_id: appId, trigger, status: 'disabled', last_modified: new Date() } });
  }

  /** Asks for a suspended trigger to go on; false when it is not suspended. */
  async requestResume(appId: string, trigger: string, from: 'position' | 'now'): Promise<boolean> {
    const result = await this.states.updateOne({ _id: TriggerStates.key(appId, trigger), status: { $in: ['suspended', 'resuming'] } }, { $set: { status: 'resuming', resume_from: from, last_modified: new Date() } });
    return result.matchedCount > 0;
  }

  /** Keeps a change for later; past the limit the position is lost instead (and the change dropped). */
  async append(appId: string, trigger: string, messageId: string, change: Document): Promise<void> {
    const key = TriggerStates.key(appId, trigger);
    const state = await this.states.findOneAndUpdate({ _id: key, $or: [{ backlog: { $exists: false } }, { backlog: { $lt: this.backlogLimit } }] }, { $inc: { backlog: 1 } });
    if (!state) {
      await this.states.updateOne({ _id: key }, { $set: { backlog_lost: true } });
      return;
    }
    try {
      await this.entries.insertOne({ _id: `${key}/${messageId}`, key, message_id: messageId, change });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /** The oldest waiting changes first. */
  async backlog(appId: string, trigger: string, limit: number): Promise<TriggerBacklogEntry[]> {
    return (await this.entries.find({ key: TriggerStates.key(appId, trigger) }, undefined, { sort: { _id: 1 }, limit }).toArray()) as unknown as TriggerBacklogEntry[];
  }

  async done(entry: TriggerBacklogEntry): Promise<void> {
    await this.entries.deleteOne({ _id: entry._id });
    await this.states.updateOne({ _id: entry.key, backlog: { $gt: 0 } }, { $inc: { backlog: -1 } });
  }

  /** Back to firing as changes come: the state and its backlog are gone. */
  async clear(appId: string, trigger: string): Promise<void> {
    const key = TriggerStates.key(appId, trigger);
    await this.entries.deleteMany({ key });
    await this.states.deleteOne({ _id: key });
  }

  /** Resumes from now: the backlog goes, and changes made before `since` that are still on their way are skipped. */
  async startFrom(appId: string, trigger: string, since: Date): Promise<void> {
    const key = TriggerStates.key(appId, trigger);
    await this.entries.deleteMany({ key });
    await this.states.updateOne({ _id: key }, { $set: { skip_before: since, last_modified: new Date() }, $unset: { status: '', error: '', error_at: '', resume_from: '', backlog: '', backlog_lost: '' } });
  }

  /**
   * Takes the trigger's lock (one holder at a time touches its backlog), for `ms`; the holder of `owner`
   * (a token per holding) extends it. False when another holds it.
   */
  async lock(appId: string, trigger: string, owner: string, ms: number): Promise<boolean> {
    const now = new Date();
    try {
      const result = await this.states.updateOne(
        { _id: TriggerStates.key(appId, trigger), $or: [{ lock_until: { $exists: false } }, { lock_until: { $lt: now } }, { lock_owner: owner }] },
        { $set: { lock_owner: owner, lock_until: new Date(now.getTime() + ms) }, $setOnInsert: { app_id: appId, trigger, last_modified: now } },
        { upsert: true },
      );
      return result.matchedCount + (result.upsertedCount ?? 0) > 0;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  /** Releases the lock; a state left without a status (the trigger fires as changes come) goes. */
  async unlock(appId: string, trigger: string, owner: string): Promise<void> {
    const key = TriggerStates.key(appId, trigger);
    await this.states.updateOne({ _id: key, lock_owner: owner }, { $unset: { lock_owner: '', lock_until: '' } });
    await this.states.deleteOne({ _id: key, status: { $exists: false }, skip_before: { $exists: false }, lock_owner: { $exists: false } });
  }
}
