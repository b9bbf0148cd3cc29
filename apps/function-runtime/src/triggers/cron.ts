/**
 * Five-field cron expressions as scheduled triggers use them (`config.schedule`: minute, hour, day of month,
 * month, day of week; UTC), and the next time one fires. Pure.
 */
export interface CronSchedule {
  readonly expression: string;
  /** The first minute strictly after `after` that matches, or undefined within five years. */
  nextAfter(after: Date): Date | undefined;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

export class CronError extends Error {}

function field(text: string, min: number, max: number, names: string[] = [], nameBase = 0): { values: Set<number>; any: boolean } {
  const values = new Set<number>();
  const value = (token: string): number => {
    const named = names.indexOf(token.toUpperCase());
    const n = named >= 0 ? named + nameBase : /^\d+$/.test(token) ? Number(token) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw new CronError(`'${token}' is not in ${min}-${max}`);
    return n;
  };
  for (const part of text.split(',')) {
    const [range = '', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new CronError(`bad step in '${part}'`);
    let from: number;
    let to: number;
    if (range === '*') [from, to] = [min, max];
    else if (range.includes('-')) {
      const [a = '', b = ''] = range.split('-');
      [from, to] = [value(a), value(b)];
      if (from > to) throw new CronError(`bad range '${range}'`);
    } else {
      from = value(range);
      to = stepText === undefined ? from : max;
    }
    for (let n = from; n <= to; n += step) values.add(n);
  }
  return { values, any: text === '*' };
}

/** Parses `expression`; throws CronError naming what is wrong. */
export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new CronError(`a schedule has five fields (minute hour day month weekday), got '${expression}'`);
  const [minute, hour, dom, month, dow] = [field(parts[0], 0, 59), field(parts[1], 0, 23), field(parts[2], 1, 31), field(parts[3], 1, 12, MONTHS, 1), field(parts[4], 0, 7, DAYS)];
  if (dow.values.has(7)) dow.values.add(0);
  const dayMatches = (date: Date): boolean => {
    const byDom = dom.values.has(date.getUTCDate());
    const byDow = dow.values.has(date.getUTCDay());
    // As cron: with both restricted, either matches.
    if (!dom.any && !dow.any) return byDom || byDow;
    return (dom.any || byDom) && (dow.any || byDow);
  };
  return {
    expression,
    nextAfter(after: Date): Date | undefined {
      const t = new Date(after.getTime());
      t.setUTCSeconds(0, 0);
      t.setUTCMinutes(t.getUTCMinutes() + 1);
      const limit = after.getTime() + 5 * 366 * 24 * 60 * 60 * 1000;
      while (t.getTime() <= limit) {
        if (!month.values.has(t.getUTCMonth() + 1)) {
          t.setUTCMonth(t.getUTCMonth() + 1, 1);
          t.setUTCHours(0, 0, 0, 0);
        } else if (!dayMatches(t)) {
          t.setUTCDate(t.getUTCDate() + 1);
          t.setUTCHours(0, 0, 0, 0);
        } else if (!hour.values.has(t.getUTCHours())) {
          t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
        } else if (!minute.values.has(t.getUTCMinutes())) {
          t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
        } else {
          return t;
        }
      }
      return undefined;
    },
  };
}
