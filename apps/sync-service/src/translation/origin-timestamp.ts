/** Origin timestamps of server changesets count milliseconds from 2015-01-01T00:00:00Z, as realm's do. */
const ORIGIN_EPOCH_MS = Date.UTC(2015, 0, 1);

export function originTimestampNow(): number {
  return Date.now() - ORIGIN_EPOCH_MS;
}
