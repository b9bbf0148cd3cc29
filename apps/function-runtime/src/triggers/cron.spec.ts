import { CronError, parseCron } from './cron';

const next = (expression: string, after: string) => parseCron(expression).nextAfter(new Date(after))?.toISOString();

describe('cron schedules', () => {
  it('finds the next matching minute, strictly after the given time, in UTC', () => {
    expect(next('* * * * *', '2026-01-01T10:00:30Z')).toBe('2026-01-01T10:01:00.000Z');
    expect(next('*/15 * * * *', '2026-01-01T10:15:00Z')).toBe('2026-01-01T10:30:00.000Z');
    expect(next('0 9 * * *', '2026-01-01T10:00:00Z')).toBe('2026-01-02T09:00:00.000Z');
    expect(next('30 2 1 * *', '2026-01-15T00:00:00Z')).toBe('2026-02-01T02:30:00.000Z');
    expect(next('0 0 * * MON', '2026-01-01T00:00:00Z')).toBe('2026-01-05T00:00:00.000Z'); // 2026-01-01 is a Thursday
    expect(next('0 12 * JUN 0', '2026-01-01T00:00:00Z')).toBe('2026-06-07T12:00:00.000Z');
    expect(next('5,10-12 8 * * *', '2026-01-01T08:10:00Z')).toBe('2026-01-01T08:11:00.000Z');
    expect(next('0 0 29 2 *', '2026-03-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
  });

  it('fires on either restricted day field, as cron does', () => {
    expect(next('0 0 13 * FRI', '2026-02-01T00:00:00Z')).toBe('2026-02-06T00:00:00.000Z');
  });

  it('refuses malformed schedules with a reason', () => {
    expect(() => parseCron('* * * *')).toThrow(CronError);
    expect(() => parseCron('60 * * * *')).toThrow(/not in 0-59/);
    expect(() => parseCron('*/0 * * * *')).toThrow(/bad step/);
    expect(() => parseCron('5-1 * * * *')).toThrow(/bad range/);
  });
});
