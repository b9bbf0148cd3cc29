import { Controller, Get, Param, Query, Req, UseGuards } from '@nestjs/common';
import { CLUSTER_SERVICE_TYPES } from '@tessera/app-config';
import { type AppRecord, DataSources, LOG_ENTRIES_KEPT_PER_APP, type LogEntry, LogStore, TriggerStates } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AppsService } from '../apps/apps.service';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';
import { isRequest, measure, METRICS } from '../metrics/app-metrics';
import { findService } from '../services/services.service';
import { UsersService } from '../users/users.service';
import { execution, flexibleSync, SUBSCRIPTION_TYPES, syncTranslator, syncTranslatorId, triggerLogType, triggerSubscription } from './event-subscriptions';
import { date, invalid, type QueryParams, single } from '../metrics/query-params';

const HOUR_MS = 3_600_000;
/** Hourly points one group measurement answer may hold per series (a year by hour is 8,784). */
const MAX_POINTS = 10_000;
/** Log entries of a trigger read to find its latest run (newest first, narrowed by its name). */
const RUNS_READ = 100;

/**
 * Event subscriptions (the app's triggers and sync translator), a user's devices, a data source's flexible
 * sync information and the group's billing usage: read-only views over what other resources keep.
 */
@Controller('api/admin/v3.0')
@UseGuards(AdminAuthGuard)
export class AppMiscController {
  private readonly triggerStates: TriggerStates;

  constructor(
    private readonly state: AppStateService,
    private readonly apps: AppsService,
    private readonly users: UsersService,
    private readonly logs: LogStore,
    dataSources: DataSources,
  ) {
    this.triggerStates = new TriggerStates(dataSources.platform());
  }

  /** Triggers by default; the sync translator only with `type=SYNCTRANSLATOR`, as App Services listed them. */
  @Get('groups/:groupId/apps/:appId/event_subscriptions')
  async listEventSubscriptions(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query() query: QueryParams): Promise<object[]> {
    requireGroup(request, groupId);
    const type = single(query['type'], 'type');
    if (type !== undefined && !(SUBSCRIPTION_TYPES as readonly string[]).includes(type)) throw invalid(`type must be one of ${SUBSCRIPTION_TYPES.join(', ')} (got "${type}")`);
    const record = await this.state.app(groupId, appId);
    const app = await this.state.liveApp(record);
    if (type === 'SYNCTRANSLATOR') {
      const translator = syncTranslator(record._id, app);
      return translator ? [translator] : [];
    }
    const states = new Map((await this.triggerStates.list(record._id)).map((found) => [found.trigger, found]));
    return app.triggers.filter((trigger) => type === undefined || trigger.type === type).map((trigger) => triggerSubscription(app, trigger, states.get(trigger.name)));
  }

  @Get('groups/:groupId/apps/:appId/event_subscriptions/:subscriptionId')
  async getEventSubscription(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('subscriptionId') subscriptionId: string): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const app = await this.state.liveApp(record);
    const translator = subscriptionId === syncTranslatorId(record._id) ? syncTranslator(record._id, app) : undefined;
    if (translator) return translator;
    const trigger = findTrigger(app.triggers, subscriptionId);
    return triggerSubscription(app, trigger, await this.triggerStates.get(record._id, trigger.name));
  }

  /** The latest run in the app's log: a trigger's function run, or the sync service's latest connection event. */
  @Get('groups/:groupId/apps/:appId/event_subscriptions/:subscriptionId/execution')
  async latestExecution(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('subscriptionId') subscriptionId: string): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const app = await this.state.liveApp(record);
    if (subscriptionId === syncTranslatorId(record._id) && syncTranslator(record._id, app)) {
      const [latest] = await this.logs.list(record._id, { types: ['SYNC_CONNECTION_START', 'SYNC_CONNECTION_END', 'SYNC_ERROR'], limit: 1 });
      return execution(subscriptionId, latest);
    }
    const trigger = findTrigger(app.triggers, subscriptionId);
    const runs = await this.logs.list(record._id, { types: [triggerLogType(trigger)], text: trigger.name, limit: RUNS_READ });
    return execution(trigger.id ?? trigger.name, runs.find((entry) => entry['trigger_name'] === trigger.name));
  }

  /**
   * The devices the user logged in from: the device ids its open sessions carry (clients send theirs at
   * login; Tessera keeps no platform or SDK details of a device), with their first login and last use.
   */
  @Get('groups/:groupId/apps/:appId/users/:userId/devices')
  async devices(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('userId') userId: string): Promise<object[]> {
    requireGroup(request, groupId);
    const sessions = await this.users.sessions(await this.state.app(groupId, appId), userId);
    const devices = new Map<string, { _id: string; user_id: string; sessions: number; first_login: number; last_used: number }>();
    for (const session of sessions) {
      const device = devices.get(session.device_id) ?? { _id: session.device_id, user_id: userId, sessions: 0, first_login: session.created, last_used: session.last_used };
      device.sessions += 1;
      device.first_login = Math.min(device.first_login, session.created);
      device.last_used = Math.max(device.last_used, session.last_used);
      devices.set(session.device_id, device);
    }
    return [...devices.values()].sort((a, b) => b.last_used - a.last_used);
  }

  /** Spec SyncDataResponse: the data source and the flexible sync configuration that syncs it, if any. */
  @Get('groups/:groupId/apps/:appId/service/:serviceId/config')
  async flexibleSyncInfo(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Param('serviceId') serviceId: string): Promise<object> {
    requireGroup(request, groupId);
    const app = await this.state.liveApp(await this.state.app(groupId, appId));
    const service = findService(app, serviceId);
    const config = service.config.config ?? {};
    if (!CLUSTER_SERVICE_TYPES.includes(String(service.config.type))) throw invalid(`service "${service.config.name}" is not a linked cluster`);
    return {
      clusterId: service.config.id,
      clusterName: typeof config['clusterName'] === 'string' ? config['clusterName'] : service.config.name,
      clusterType: 'atlas',
      ...(typeof config['readPreference'] === 'string' ? { readPreference: config['readPreference'] } : {}),
      wireProtocolEnabled: config['wireProtocolEnabled'] === true,
      flexible_sync: flexibleSync(app, service),
    };
  }

  /**
   * Billing usage of the whole group: `request_count` and `compute_time` (hours) of every app, summed per
   * period, read from each app's log (the platform keeps an app's newest LOG_ENTRIES_KEPT_PER_APP entries).
   * Sync time and data transfer are not recorded, so they are not reported.
   */
  @Get('groups/:groupId/measurements')
  async groupMeasurements(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Query() query: QueryParams): Promise<object> {
    requireGroup(request, groupId);
    const now = new Date();
    const start = date(query['start'], 'start') ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const end = date(query['end'], 'end') ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - 1000);
    const granularity = single(query['granularity'], 'granularity') ?? 'P31D';
    if (granularity !== 'P31D' && granularity !== 'PT1H') throw invalid('granularity must be P31D or PT1H');
    if (end.getTime() < start.getTime()) throw invalid('end must not be before start');
    const granularityMs = granularity === 'PT1H' ? HOUR_MS : end.getTime() - start.getTime() + 1;
    if ((end.getTime() - start.getTime()) / granularityMs > MAX_POINTS) throw invalid(`the range holds more than ${MAX_POINTS} periods of this granularity`);
    const entries: LogEntry[] = [];
    for (const record of await this.apps.list(groupId, [])) entries.push(...(await this.appEntries(record, start, end)));
    const series = [
      { name: 'request_count', units: '', selects: isRequest, value: () => 1 },
      { name: 'compute_time', units: 'HOURS', selects: isRequest, value: (entry: LogEntry) => METRICS['OVERALL_COMPUTE_MS'].value(entry) / HOUR_MS },
    ];
    // P31D is one period from start to end, as App Services reported a billing month.
    const measurements = measure(entries, series, start, end, granularityMs, granularity === 'P31D' ? start.getTime() : 0);
    return { start: start.toISOString(), end: end.toISOString(), granularity, group_id: groupId, measurements };
  }

  private appEntries(record: AppRecord, start: Date, end: Date): Promise<LogEntry[]> {
    return this.logs.list(record._id, { start, end, limit: LOG_ENTRIES_KEPT_PER_APP });
  }
}

function findTrigger<T extends { id?: string; name: string }>(triggers: T[], id: string): T {
  const trigger = triggers.find((candidate) => candidate.id === id) ?? triggers.find((candidate) => candidate.name === id);
  if (!trigger) throw new AdminApiError(AdminApiErrorCode.TriggerNotFound, `event subscription not found: '${id}'`);
  return trigger;
}
