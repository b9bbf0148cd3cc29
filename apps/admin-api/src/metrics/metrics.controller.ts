import { Controller, Get, Param, Query, Req, UseGuards } from '@nestjs/common';
import { LOG_ENTRIES_KEPT_PER_APP, type LogEntry, LogStore } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AppStateService } from '../deploy/app-state.service';
import { durationMs, isRequest, type Measurement, measure, METRICS, OPEN_SYNC_CONNECTIONS, openConnections, SYNC_CONNECTION_END, SYNC_CONNECTION_START } from './app-metrics';
import { date, invalid, single } from './query-params';

/** Data points one answer may hold per series (a year by hour is 8,784). */
const MAX_POINTS = 10_000;
const HOUR_MS = 3_600_000;

/**
 * `GET .../metrics` and `GET .../measurements` (openapi-admin-v3.yaml), computed from the app's log: the
 * platform keeps the newest LOG_ENTRIES_KEPT_PER_APP entries of an app, so older periods read as quieter
 * than they were.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId')
@UseGuards(AdminAuthGuard)
export class MetricsController {
  constructor(
    private readonly state: AppStateService,
    private readonly logs: LogStore,
  ) {}

  @Get('metrics')
  async metrics(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query() query: Record<string, string | string[] | undefined>): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const start = date(query['start'], 'start');
    const end = date(query['end'], 'end');
    const granularity = single(query['granularity'], 'granularity');
    const granularityMs = granularity === undefined ? undefined : durationMs(granularity);
    if (!start || !end || !granularity) throw invalid('start, end and granularity are required');
    if (granularityMs === undefined) throw invalid(`granularity must be an ISO-8601 duration such as PT1H, PT5M or P1D (got "${granularity}")`);
    const names = (Array.isArray(query['metrics']) ? query['metrics'] : query['metrics'] ? [query['metrics']] : Object.keys(METRICS)).flatMap((name) => name.split(','));
    // Own names only: `constructor` or `__proto__` are not metrics; an empty name (`metrics=,`) is none either.
    const unknown = names.find((name) => !Object.hasOwn(METRICS, name));
    if (unknown !== undefined) throw invalid(`metric ${unknown} is not recorded by this server (available: ${Object.keys(METRICS).join(', ')})`);
    const measurements = await this.measure(record._id, names.filter((name) => name !== OPEN_SYNC_CONNECTIONS).map((name) => ({ name, ...METRICS[name] })), start, end, granularityMs);
    if (names.includes(OPEN_SYNC_CONNECTIONS)) {
      // Connections opened before the range may be open in it: their entries are read without a start bound.
      const connections = await this.logs.list(record._id, { types: [SYNC_CONNECTION_START, SYNC_CONNECTION_END], end, limit: LOG_ENTRIES_KEPT_PER_APP });
      const open = openConnections(connections, start, end, granularityMs, new Date());
      measurements.splice(names.indexOf(OPEN_SYNC_CONNECTIONS), 0, open);
    }
    return { app_id: record._id, app_name: record.name, group_id: groupId, start: start.toISOString(), end: end.toISOString(), granularity, measurements };
  }

  /** Billing usage: `request_count` and `compute_time` (hours), by P31D or PT1H. */
  @Get('measurements')
  async measurements(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query() query: Record<string, string | string[] | undefined>): Promise<object> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const now = new Date();
    const start = date(query['start'], 'start') ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const end = date(query['end'], 'end') ?? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - 1000);
    const granularity = single(query['granularity'], 'granularity') ?? 'P31D';
    if (granularity !== 'P31D' && granularity !== 'PT1H') throw invalid('granularity must be P31D or PT1H');
    const granularityMs = granularity === 'PT1H' ? HOUR_MS : end.getTime() - start.getTime() + 1;
    const series = [
      { name: 'request_count', units: '', selects: isRequest, value: () => 1 },
      { name: 'compute_time', units: 'HOURS', selects: isRequest, value: (entry: LogEntry) => METRICS['OVERALL_COMPUTE_MS'].value(entry) / HOUR_MS },
    ];
    // P31D is one period from start to end, as App Services reported a billing month.
    const measurements = await this.measure(record._id, series, start, end, granularityMs, granularity === 'P31D' ? start.getTime() : 0);
    return { start: start.toISOString(), end: end.toISOString(), granularity, group_id: groupId, appId: record._id, appName: record.name, measurements };
  }

  private async measure(appId: string, series: Parameters<typeof measure>[1], start: Date, end: Date, granularityMs: number, origin = 0): Promise<Measurement[]> {
    if (end.getTime() < start.getTime()) throw invalid('end must not be before start');
    if ((end.getTime() - start.getTime()) / granularityMs > MAX_POINTS) throw invalid(`the range holds more than ${MAX_POINTS} periods of this granularity`);
    return measure(await this.logs.list(appId, { start, end, limit: LOG_ENTRIES_KEPT_PER_APP }), series, start, end, granularityMs, origin);
  }
}
