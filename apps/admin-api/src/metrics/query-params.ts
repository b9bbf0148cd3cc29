import { AdminApiError, AdminApiErrorCode } from '../common/admin-api.exception';

/** Query parameters of the measurement answers (per app and per group): each given once at most. */
export type QueryParams = Record<string, string | string[] | undefined>;

/** A query parameter given at most once; an empty one counts as absent. */
export function single(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) throw invalid(`${name} may be given once`);
  return value === '' ? undefined : value;
}

/** A query parameter holding an ISO-8601 date and time. */
export function date(value: string | string[] | undefined, name: string): Date | undefined {
  const text = single(value, name);
  if (text === undefined) return undefined;
  const parsed = new Date(text);
  if (Number.isNaN(parsed.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(text)) throw invalid(`${name} must be an ISO-8601 date and time (e.g. 2022-10-27T14:01:01Z)`);
  return parsed;
}

export function invalid(message: string): AdminApiError {
  return new AdminApiError(AdminApiErrorCode.InvalidParameter, message);
}
