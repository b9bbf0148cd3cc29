import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import { type DocumentChanged } from '@tessera/contracts';
import { decodeEjson } from '@tessera/messaging';
import { DataSources, DeployedApps, newObjectIdHex, type TriggerState, TriggerStates } from '@tessera/platform';
import { isAppGone } from './app-gone';
import { FunctionRuntimeService } from '../function-runtime.service';
import { type DatabaseTrigger, databaseTriggers, triggerEventFor } from './database-trigger';
import { TriggerClaims } from './trigger-claims';

const logger = new Logger('DatabaseTriggers');

/** Waits between the runs of a failing change: after the last, the trigger is suspended. */
export const TRIGGER_RETRY_DELAYS_MS = [100, 400, 1_000] as const;
/** How long a replica holds a trigger's lock at a time (renewed while it drains). */
const LOCK_MS = 30_000;
/** How often replicas look for triggers to resume (an administrator's resume, an enabled trigger). */
const POLL_MS = 1_000;
/** How long after a resume from now changes made before it are still looked for (then the skip state goes). */
const SKIP_FOR_MS = 10 * 60_000;
/** Backlog entries read at a time while draining. */
const DRAIN_PAGE = 200;
/** Runs of one unordered trigger under way at once within a batch (the app's sandboxes bound them too). */
export const UNORDERED_TRIGGER_CONCURRENCY = 16;

/** When a change was made (the feed's wall time); unknown: now. */
function changedAt(change: DocumentChanged): Date {
  return wallTimeOf(change) ?? new Date();
}

/** The feed's wall time of a change, when it has one. */
function wallTimeOf(change: DocumentChanged): Date | undefined {
  const wallTime = change.wallTime === undefined ? undefined : decodeEjson(change.wallTime);
  return wallTime instanceof Date ? wallTime : undefined;
}

/** Limits of the runner (tests make them small). */
export interface TriggerRunnerOptions {
  /** Changes a suspended or disabled trigger keeps (default TRIGGER_BACKLOG_LIMIT). */
  backlogLimit?: number;
}
export const TRIGGER_RUNNER_OPTIONS = Symbol('TRIGGER_RUNNER_OPTIONS');

/** What a change is for the runner: its payload and its message id (`<app>/<service>/<resume token>`). */
export interface TriggerDelivery {
  change: DocumentChanged;
  messageId: string;
  correlationId?: string;
}

/**
 * Runs one database trigger's function for a change, with App Services' lifecycle: a run that keeps failing
 * is retried (TRIGGER_RETRY_DELAYS_MS), then the trigger is suspended with the error, and the changes after it
 * wait in its backlog (TriggerStates) until an administrator resumes it, from that change or from now. A
 * disabled trigger keeps its changes the same way (unless `skip_catchup_events`) and catches up when enabled.
 * A trigger without a state (the common case) costs one read of its state per change it asked for. Only
 * changes the trigger asked for (source, namespace, operation types, `match`) reach any of this.
 */
@Injectable()
export class DatabaseTriggerRunner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly owner = newObjectIdHex();
  private holdings = 0;
  private readonly states: TriggerStates;
  private timer?: NodeJS.Timeout;
  private polling: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    dataSources: DataSources,
    private readonly deployed: DeployedApps,
    private readonly runtime: FunctionRuntimeService,
    @Optional() private readonly claims?: TriggerClaims,
    @Optional() @Inject(TRIGGER_RUNNER_OPTIONS) options?: TriggerRunnerOptions,
  ) {
    this.states = new TriggerStates(dataSources.platform(), options?.backlogLimit);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.polling = this.polling.then(() => this.poll()).catch((error: unknown) => logger.warn(`database triggers: ${error instanceof Error ? error.message : String(error)}`));
    }, POLL_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.polling;
  }

  /** Handles a change the trigger watches (source, namespace, operation type already checked by the caller). */
  async deliver(trigger: DatabaseTrigger, delivery: TriggerDelivery): Promise<void> {
    const appId = delivery.change.appId;
    // `match` first: a change the trigger did not ask for costs no read at all.
    if (!triggerEventFor(trigger, delivery.change)) return;
    if (!trigger.disabled && !(await this.states.get(appId, trigger.name))) {
      if (!(await this.fire(trigger, delivery))) await this.keep(trigger, delivery);
      return;
    }
    await this.locked(appId, trigger.name, async (lock) => {
      let state = await this.states.get(appId, trigger.name);
      if (trigger.disabled) {
        if (trigger.skipCatchup) return;
        await this.states.keepWhileDisabled(appId, trigger.name);
        await this.keep(trigger, delivery);
        return;
      }
      if (state?.status === 'resuming' || state?.status === 'disabled') state = await this.drain(trigger, state, lock);
      if (state?.status === 'suspended') {
        await this.keep(trigger, delivery);
        return;
      }
      if (state?.skip_before) {
        // Resumed from now: a change made before the resume is skipped; the first one after ends the skipping.
        if (changedAt(delivery.change) < new Date(state.skip_before)) return;
        await this.states.clear(appId, trigger.name);
      }
      if (!(await this.fire(trigger, delivery))) await this.keep(trigger, delivery);
    });
  }

  /**
   * Handles a batch of changes for one trigger, in stream order: the common case (enabled, no state) costs
   * one read of its state and one claim write for the whole batch; an ordered trigger then runs them one after
   * the other, an unordered one up to UNORDERED_TRIGGER_CONCURRENCY at once. When a change keeps failing the
   * trigger is suspended and the changes of the batch not run yet go to its backlog after it, in order.
   * Any other state takes the one-change path, under the trigger's lock.
   */
  async deliverBatch(trigger: DatabaseTrigger, deliveries: readonly TriggerDelivery[]): Promise<void> {
    // A change delivered twice in one batch (the same message id) runs once.
    const ids = new Set<string>();
    const wanted = deliveries.filter((delivery) => {
      if (delivery.messageId) {
        if (ids.has(delivery.messageId)) return false;
        ids.add(delivery.messageId);
      }
      return triggerEventFor(trigger, delivery.change);
    });
    if (wanted.length === 0) return;
    const appId = wanted[0].change.appId;
    if (trigger.disabled || (await this.states.get(appId, trigger.name))) {
      for (const delivery of wanted) await this.deliver(trigger, delivery);
      return;
    }
    const claimOf = (delivery: TriggerDelivery) => `${appId}/${trigger.name}/${delivery.messageId}`;
    const claimable = wanted.filter((delivery) => delivery.messageId);
    const claimed = this.claims ? await this.claims.claimMany(claimable.map(claimOf)) : new Set(claimable.map(claimOf));
    // A change without a message id cannot be claimed (it runs); one another replica claimed is its.
    const mine = wanted.filter((delivery) => !delivery.messageId || claimed.has(claimOf(delivery)));
    let next = 0;
    const failed: number[] = [];
    const worker = async (): Promise<void> => {
      while (failed.length === 0 && next < mine.length) {
        const index = next++;
        if (!(await this.fire(trigger, mine[index], true))) failed.push(index);
      }
    };
    const workers = trigger.ordered ? 1 : Math.min(UNORDERED_TRIGGER_CONCURRENCY, mine.length);
    await Promise.all(Array.from({ length: workers }, worker));
    if (failed.length === 0) return;
    // The failed changes first, then the ones no worker started, with their claims given back for the resume.
    const left = mine.slice(next);
    if (this.claims) await this.claims.releaseMany(left.filter((delivery) => delivery.messageId).map(claimOf));
    for (const delivery of [...failed.sort((a, b) => a - b).map((index) => mine[index]), ...left]) await this.keep(trigger, delivery);
  }

  /** Keeps the change in the trigger's backlog, for when it resumes. */
  private keep(trigger: DatabaseTrigger, delivery: TriggerDelivery): Promise<void> {
    return this.states.append(delivery.change.appId, trigger.name, delivery.messageId, delivery.change);
  }

  /**
   * Runs the trigger's function on the change, retried; false when it kept failing, and the trigger is then
   * suspended (the caller keeps the change first in its backlog). A change another replica ran is skipped.
   */
  private async fire(trigger: DatabaseTrigger, delivery: TriggerDelivery, claimed = false): Promise<boolean> {
    const { change } = delivery;
    const event = triggerEventFor(trigger, change);
    if (!event) return true;
    const claim = `${change.appId}/${trigger.name}/${delivery.messageId}`;
    if (!claimed && delivery.messageId && this.claims && !(await this.claims.claim(claim))) return true;
    let failure = '';
    const madeAt = wallTimeOf(change);
    for (let attempt = 0; attempt <= TRIGGER_RETRY_DELAYS_MS.length; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, TRIGGER_RETRY_DELAYS_MS[attempt - 1]));
      try {
        await this.runtime.execute({
          appId: change.appId,
          name: trigger.functionName,
          arguments: [event],
          caller: { type: 'system' },
          origin: 'trigger',
          ...(delivery.correlationId ? { correlationId: delivery.correlationId } : {}),
          trigger: { name: trigger.name, ...(trigger.id ? { id: trigger.id } : {}), type: 'DATABASE', ...(madeAt ? { changedAt: madeAt } : {}) },
        });
        return true;
      } catch (error) {
        // Each failed run is in the app's logs (the runtime records it as the trigger's).
        failure = error instanceof Error ? error.message : String(error);
      }
    }
    logger.warn(`trigger ${trigger.name} of app ${change.appId} is suspended: ${failure}`);
    await this.states.suspend(change.appId, trigger.name, `error executing function "${trigger.functionName}": ${failure}`);
    // The change runs again when the trigger resumes.
    if (this.claims) await this.claims.release(claim);
    return false;
  }

  /**
   * Runs the backlog of a resuming (or re-enabled) trigger in order, then lets it fire as changes come.
   * Returns the state left: suspended again when a change kept failing, else undefined. Call it locked.
   */
  private async drain(trigger: DatabaseTrigger, state: TriggerState, lock: string): Promise<TriggerState | undefined> {
    const appId = state.app_id;
    const fromNow = state.resume_from === 'now' || (state.status === 'disabled' && trigger.skipCatchup) || (state.status === 'resuming' && trigger.skipCatchup);
    if (!fromNow && state.backlog_lost && !trigger.tolerateResumeErrors) {
      const error = `cannot resume trigger "${trigger.name}": more than its backlog keeps changed while it was stopped and its saved position is gone; resume it from now (disable_token) or set tolerate_resume_errors`;
      await this.states.suspend(appId, trigger.name, error);
      return { ...state, status: 'suspended', error };
    }
    if (fromNow || state.backlog_lost) {
      if (state.status === 'resuming') {
        await this.states.startFrom(appId, trigger.name, new Date(state.last_modified));
        return { ...state, status: undefined, skip_before: new Date(state.last_modified) };
      }
      await this.states.clear(appId, trigger.name);
      return undefined;
    }
    for (;;) {
      const page = await this.states.backlog(appId, trigger.name, DRAIN_PAGE);
      if (page.length === 0) break;
      for (const entry of page) {
        const delivery: TriggerDelivery = { change: entry.change as unknown as DocumentChanged, messageId: entry.message_id };
        if (!(await this.fire(trigger, delivery))) return (await this.states.get(appId, trigger.name)) ?? { ...state, status: 'suspended' };
        await this.states.done(entry);
      }
      // A long backlog keeps the lock.
      await this.states.lock(appId, trigger.name, lock, LOCK_MS);
    }
    await this.states.clear(appId, trigger.name);
    return undefined;
  }

  /**
   * Runs `work` holding the trigger's lock (waiting while another holds it: another replica, or this one's
   * poller); the lock is released after. Each holding has its own token, so two holders in one process
   * exclude each other too.
   */
  private async locked(appId: string, trigger: string, work: (lock: string) => Promise<void>): Promise<void> {
    const lock = `${this.owner}/${++this.holdings}`;
    while (!(await this.states.lock(appId, trigger, lock, LOCK_MS))) {
      if (this.closed) throw new Error(`stopping: trigger ${trigger} of app ${appId} is busy elsewhere`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    try {
      await work(lock);
    } finally {
      await this.states.unlock(appId, trigger, lock);
    }
  }

  /** Resumes what waits without a new change (resumed triggers, enabled ones with a backlog); forgets the states of removed triggers and apps. */
  private async poll(): Promise<void> {
    if (this.closed) return;
    for (const state of await this.states.list()) {
      if (!state.status && state.skip_before && Date.now() - new Date(state.skip_before).getTime() > SKIP_FOR_MS) await this.states.clear(state.app_id, state.trigger);
      let trigger: DatabaseTrigger | undefined;
      try {
        trigger = databaseTriggers((await this.deployed.byId(state.app_id)).config).find((candidate) => candidate.name === state.trigger);
      } catch (error) {
        // Only an app that is gone loses its triggers' backlogs; an unreachable registry is tried again.
        if (!isAppGone(error)) continue;
        trigger = undefined;
      }
      if (!trigger) {
        await this.states.clear(state.app_id, state.trigger);
        continue;
      }
      if (trigger.disabled || (state.status !== 'resuming' && state.status !== 'disabled')) continue;
      const found = trigger;
      const lock = `${this.owner}/${++this.holdings}`;
      if (!(await this.states.lock(state.app_id, state.trigger, lock, LOCK_MS))) continue;
      try {
        const current = await this.states.get(state.app_id, state.trigger);
        if (current?.status === 'resuming' || current?.status === 'disabled') await this.drain(found, current, lock);
      } finally {
        await this.states.unlock(state.app_id, state.trigger, lock);
      }
    }
  }
}
