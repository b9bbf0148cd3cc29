import { Controller, Get, Param, Query, Req, UseGuards } from '@nestjs/common';
import { LOG_ENTRIES_KEPT_PER_APP, LogStore, type LogEntry, type LogQuery } from '@tessera/platform';
import { AdminAuthGuard, type AdminRequest } from '../auth/admin-auth.guard';
import { requireGroup } from '../apps/apps.controller';
import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';
import { AppStateService } from '../deploy/app-state.service';

/** Entries per answer unless `limit` says otherwise (App Services' page, and its maximum). */
const DEFAULT_LIMIT = 100;
/** Tessera accepts larger pages than App Services' 100, up to what it keeps of an app's log. */
const MAX_LIMIT = LOG_ENTRIES_KEPT_PER_APP;
/** Longest `text` filter accepted. */
const MAX_TEXT = 200;

export interface LogsPage {
  logs: LogEntry[];
  /** Set when the page is full: pass it as `end_date` (and `nextSkip` as `skip`) for the next page. */
  nextEndDate?: string;
  nextSkip?: number;
}

/**
 * `.../logs`: what the function runtime, triggers and sync wrote to the app's LogStore, newest first, with
 * App Services' query parameters (`type`, `errors_only`, `user_id`, `co_id`, `start_date`, `end_date`, `skip`,
 * `limit`) and Tessera's `text` (a case-insensitive substring of the messages, error, function or trigger name,
 * URL or arguments). `errors_only` given with any value selects failed entries, as App Services reads it.
 */
@Controller('api/admin/v3.0/groups/:groupId/apps/:appId/logs')
@UseGuards(AdminAuthGuard)
export class LogsController {
  constructor(
    private readonly logs: LogStore,
    private readonly state: AppStateService,
  ) {}

  @Get()
  async list(@Req() request: AdminRequest, @Param('groupId') groupId: string, @Param('appId') appId: string, @Query() query: Record<string, string | string[] | undefined>): Promise<LogsPage> {
    requireGroup(request, groupId);
    const record = await this.state.app(groupId, appId);
    const parsed = logQuery(query);
    const logs = await this.logs.list(record._id, parsed);
    const limit = parsed.limit ?? DEFAULT_LIMIT;
    if (logs.length < limit) return { logs };
    // The next page ends where this one did; the entries of that same instant already shown are skipped.
    const last = logs[logs.length - 1].started;
    const sameInstant = logs.filter((entry) => entry.started === last).length;
    const skippedBefore = parsed.end?.getTime() === new Date(last).getTime() ? (parsed.skip ?? 0) : 0;
    return { logs, nextEndDate: last, nextSkip: sameInstant + skippedBefore };
  }
}

/** The query parameters as a LogQuery; a bad one is refused with 400 InvalidParameter naming it. */
export function logQuery(query: Record<string, string | string[] | undefined>): LogQuery {
  const limit = integer(single(query, 'limit'), 'limit', 1, MAX_LIMIT);
  const skip = integer(single(query, 'skip'), 'skip', 0, Number.MAX_SAFE_INTEGER);
  const type = single(query, 'type');
  const userId = single(query, 'user_id');
  const coId = single(query, 'co_id');
  const text = single(query, 'text');
  if (text !== undefined && text.length > MAX_TEXT) throw invalid(`text may be at most ${MAX_TEXT} characters`);
  const start = date(single(query, 'start_date'), 'start_date');
  const end = date(single(query, 'end_date'), 'end_date');
  if (start && end && end.getTime() <= start.getTime()) throw invalid('end_date must be after start_date');
  return {
    ...(type ? { types: type.split(',') } : {}),
    // App Services: present with any value (even false) means errors only.
    errorsOnly: query['errors_only'] !== undefined,
    ...(coId ? { coId } : {}),
    ...(userId ? { userId } : {}),
    ...(text ? { text } : {}),
    // App Services: start_date exclusive, end_date inclusive (dates carry milliseconds, as `started` does).
    ...(start ? { start: new Date(start.getTime() + 1) } : {}),
    ...(end ? { end } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(skip !== undefined ? { skip } : {}),
  };
}

function single(query: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw invalid(`${name} may be given once`);
  return value === '' ? undefined : value;
}

function integer(text: string | undefined, name: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) throw invalid(`${name} must be an integer of at least ${min}${max < Number.MAX_SAFE_INTEGER ? ` and at most ${max}` : ''}`);
  return value;
}

function date(text: string | undefined, name: string): Date | undefined {
  if (text === undefined) return undefined;
  const value = new Date(text);
  if (Number.isNaN(value.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(text)) throw invalid(`${name} must be an ISO 8601 date and time (e.g. 2024-05-01T12:00:00Z)`);
  return value;
}

function invalid(message: string): AdminApiError {
  return new AdminApiError(AdminApiErrorCode.InvalidParameter, message);
}
