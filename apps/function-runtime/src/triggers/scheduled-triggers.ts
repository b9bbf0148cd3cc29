import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import { type AppConfig } from '@tessera/app-config';
import { AppRegistry, DeployedApps } from '@tessera/platform';
import { FunctionRuntimeService } from '../function-runtime.service';
import { triggerFunctionName } from './trigger-function';
import { CronError, type CronSchedule, parseCron } from './cron';
import { TriggerClaims } from './trigger-claims';

const logger = new Logger('ScheduledTriggers');

/** How often replicas look at the clock and at the deployed apps. */
const TICK_MS = 1_000;
const RELOAD_EVERY_MS = 15_000;

interface Scheduled {
  appId: string;
  name: string;
  id?: string;
  functionName: string;
  schedule: CronSchedule;
  /** The firing this replica waits for. */
  next: Date | undefined;
}

/**
 * Fires SCHEDULED triggers (`config.schedule`, five-field cron in UTC): every runtime replica watches the
 * clock, and for each firing the replicas race to claim `<app>/<trigger>/<firing time>` (TriggerClaims), so
 * one of them runs the function, as system and without arguments, logged as `SCHEDULED_TRIGGER`. Firings
 * missed while no replica ran are not caught up (App Services' default). Without a platform database this
 * process may open, claims are off and every replica fires.
 */
@Injectable()
export class ScheduledTriggers implements OnApplicationBootstrap, OnModuleDestroy {
  private scheduled = new Map<string, Scheduled>();
  private timer?: NodeJS.Timeout;
  private lastReload = 0;
  private readonly running = new Set<Promise<void>>();
  private ticking: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: AppRegistry,
    private readonly deployed: DeployedApps,
    private readonly runtime: FunctionRuntimeService,
    @Optional() private readonly claims?: TriggerClaims,
  ) {}

  onApplicationBootstrap(): void {
    // The timer waits for the reload and the claims of one tick before the next, not for the functions it
    // started: a slow function must not hold back every other app's schedule.
    this.timer = setInterval(() => {
      this.ticking = this.ticking
        .then(() => this.startDue(new Date()))
        .then(() => undefined)
        .catch((error: unknown) => logger.warn(`scheduled triggers: ${error instanceof Error ? error.message : String(error)}`));
    }, TICK_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    await Promise.all(this.running);
  }

  /** Fires what is due at `now` and waits for those runs (tests call it with their own clock). */
  async tick(now: Date): Promise<void> {
    await Promise.all(await this.startDue(now));
  }

  /** Starts every firing due at `now`, each on its own; resolves with the runs once they are started. */
  private async startDue(now: Date): Promise<Promise<void>[]> {
    if (now.getTime() - this.lastReload >= RELOAD_EVERY_MS) await this.reload(now);
    const runs: Promise<void>[] = [];
    for (const entry of this.scheduled.values()) {
      if (!entry.next || entry.next > now) continue;
      const firing = entry.next;
      // The next firing after now: a replica that was away does not fire what it missed.
      entry.next = entry.schedule.nextAfter(now);
      const run = this.fire(entry, firing);
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
      runs.push(run);
    }
    return runs;
  }

  /** One firing: claimed by one replica, then run; never rejects (failures are logged). */
  private async fire(entry: Scheduled, firing: Date): Promise<void> {
    try {
      const claimed = this.claims ? await this.claims.claim(`${entry.appId}/${entry.name}/${firing.toISOString()}`) : true;
      if (!claimed) return;
    } catch (error) {
      logger.warn(`scheduled trigger ${entry.name} of app ${entry.appId}: could not claim its ${firing.toISOString()} firing: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    try {
      await this.runtime.execute({ appId: entry.appId, name: entry.functionName, arguments: [], caller: { type: 'system' }, origin: 'trigger', trigger: { name: entry.name, ...(entry.id ? { id: entry.id } : {}), type: 'SCHEDULED' } });
    } catch (error) {
      // Recorded in the app's logs by the runtime as a failed run of the trigger.
      logger.debug(`scheduled trigger ${entry.name} of app ${entry.appId} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Reads every app's enabled scheduled triggers; a schedule that did not change keeps its next firing. */
  async reload(now: Date): Promise<void> {
    this.lastReload = now.getTime();
    const next = new Map<string, Scheduled>();
    for (const record of await this.registry.list()) {
      let config: AppConfig;
      try {
        // The process's cached configuration: deployments reach every replica (a broadcast, and the
        // reconciliation of decision 0023), so it is the live one.
        config = (await this.deployed.byId(record._id)).config;
      } catch {
        continue;
      }
      for (const trigger of config.triggers) {
        if (trigger.type !== 'SCHEDULED' || trigger.disabled === true) continue;
        const functionName = triggerFunctionName(trigger);
        const expression = (trigger.config as { schedule?: unknown } | undefined)?.schedule;
        if (typeof functionName !== 'string' || typeof expression !== 'string') continue;
        const key = `${record._id}/${trigger.name}`;
        const known = this.scheduled.get(key);
        if (known && known.schedule.expression === expression && known.functionName === functionName) {
          next.set(key, known);
          continue;
        }
        try {
          const schedule = parseCron(expression);
          next.set(key, { appId: record._id, name: trigger.name, ...(trigger.id ? { id: trigger.id } : {}), functionName, schedule, next: schedule.nextAfter(now) });
        } catch (error) {
          if (!(error instanceof CronError)) throw error;
          logger.warn(`scheduled trigger ${trigger.name} of app ${record._id} has an invalid schedule: ${error.message}`);
        }
      }
    }
    this.scheduled = next;
  }
}
