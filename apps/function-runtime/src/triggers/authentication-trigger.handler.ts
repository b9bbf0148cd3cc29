import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, Optional } from '@nestjs/common';
import { type AppAuthEvent, Subjects } from '@tessera/contracts';
import { AUTH_EVENTS_STREAM, DurableEvents, type DurableSubscription, propagationHeaders } from '@tessera/messaging';
import { DeployedApps } from '@tessera/platform';
import { isAppGone } from './app-gone';
import { FunctionRuntimeService } from '../function-runtime.service';
import { authenticationTriggers, authTriggerEvent, eventUser, firesOn, userCreationFunction } from './authentication-trigger';
import { TriggerClaims } from './trigger-claims';

const logger = new Logger('AuthenticationTriggers');

/** The durable consumer (queue group) of auth events shared by the function-runtime replicas. */
export const AUTH_TRIGGERS_CONSUMER = 'function-runtime-auth-triggers';

/**
 * Runs what an app user's auth event fires: the app's matching AUTHENTICATION triggers (logged as
 * `AUTH_TRIGGER`) and, on CREATE, the custom user data's user creation function, each as system. Events come
 * from the durable stream (AuthEvents records them in an outbox first), so an event recorded while no
 * runtime runs, or before a crash, runs when one is back; one replica gets each (the queue group), and each
 * run is claimed by event id first, so an event delivered or published twice runs once. The user already
 * exists when this runs: a failing function is logged and never undoes it (as App Services).
 */
@Injectable()
export class AuthenticationTriggerHandler implements OnApplicationBootstrap, OnModuleDestroy {
  private subscription?: DurableSubscription;

  constructor(
    @Inject(DurableEvents) private readonly events: DurableEvents,
    private readonly deployed: DeployedApps,
    private readonly runtime: FunctionRuntimeService,
    @Optional() private readonly claims?: TriggerClaims,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await this.events.consume({
      stream: AUTH_EVENTS_STREAM,
      durable: AUTH_TRIGGERS_CONSUMER,
      subject: Subjects.AppsAuthEventOccurred,
      handler: (event, context) => this.authEvent(event, propagationHeaders(context)),
      ackWaitMs: 15_000,
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.subscription?.stop();
  }

  /** `headers`: the event's correlation id and trace context, passed on to what the functions' data access sends. */
  async authEvent(event: AppAuthEvent, headers?: Readonly<Record<string, string>>): Promise<void> {
    let config;
    try {
      config = (await this.deployed.byId(event.appId)).config;
    } catch (error) {
      // The app is gone: nothing to run. Anything else (the registry unreachable) gets the event again.
      if (isAppGone(error)) return;
      throw error;
    }
    const runs: Promise<void>[] = [];
    for (const trigger of authenticationTriggers(config)) {
      if (!firesOn(trigger, event)) continue;
      runs.push(
        this.run(event, headers, `${event.appId}/${trigger.name}/${event.eventId}`, trigger.functionName, [authTriggerEvent(event)], {
          name: trigger.name,
          ...(trigger.id ? { id: trigger.id } : {}),
          type: 'AUTHENTICATION',
        }),
      );
    }
    const creation = event.operationType === 'CREATE' ? userCreationFunction(config) : undefined;
    if (creation) runs.push(this.run(event, headers, `${event.appId}/on_user_creation/${event.eventId}`, creation, [eventUser(event)]));
    await Promise.all(runs);
  }

  /** One claimed run; never rejects (a failure is in the app's logs). */
  private async run(event: AppAuthEvent, headers: Readonly<Record<string, string>> | undefined, claim: string, functionName: string, args: unknown[], trigger?: { name: string; id?: string; type: 'AUTHENTICATION' }): Promise<void> {
    try {
      if (this.claims && !(await this.claims.claim(claim))) return;
      await this.runtime.execute({ appId: event.appId, name: functionName, arguments: args, caller: { type: 'system' }, origin: 'trigger', ...(headers ? { headers } : {}), ...(trigger ? { trigger } : {}) });
    } catch (error) {
      logger.debug(`${trigger ? `authentication trigger ${trigger.name}` : `user creation function ${functionName}`} of app ${event.appId} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
