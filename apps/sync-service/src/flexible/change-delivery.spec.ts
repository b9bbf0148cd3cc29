import { ChangeDelivery, type DeliveryTimes } from './change-delivery';

const at = (wallMs: number, monoMs: number) => ({ wallMs, monoMs });

describe('ChangeDelivery', () => {
  it('records once, when the last session is done, the times to the latest DOWNLOAD sent: from the commit and from the arrival', () => {
    const recorded: Array<[DeliveryTimes, string]> = [];
    const delivery = new ChangeDelivery('app1', { committedAtMs: 1_000, arrived: at(1_001, 50.25) }, 3, (times, appId) => recorded.push([times, appId]));
    delivery.done(at(1_004, 52.5));
    delivery.done(undefined);
    expect(recorded).toEqual([]);
    delivery.done(at(1_002, 51));
    expect(recorded).toEqual([[{ fromCommitMs: 4, fromArrivalMs: 2.25 }, 'app1']]);
    delivery.done(at(1_009, 59));
    expect(recorded).toHaveLength(1);
  });

  it('records nothing when no session had anything to send, and never a negative time', () => {
    const recorded: DeliveryTimes[] = [];
    new ChangeDelivery('a', { committedAtMs: 1_000, arrived: at(1_000, 10) }, 1, (times) => recorded.push(times)).done(undefined);
    expect(recorded).toEqual([]);
    // A commit stamped by a clock slightly ahead of this one.
    new ChangeDelivery('a', { committedAtMs: 1_005, arrived: at(1_003, 10) }, 1, (times) => recorded.push(times)).done(at(1_003, 10.5));
    expect(recorded).toEqual([{ fromCommitMs: 0, fromArrivalMs: 0.5 }]);
  });

  it('measures from the reading off the feed on the epoch clock with its fraction, when the change says when', () => {
    const recorded: DeliveryTimes[] = [];
    const readAtMs = performance.timeOrigin + 40.125;
    new ChangeDelivery('a', { committedAtMs: 1_000, readAtMs, arrived: at(1_001, 41) }, 1, (times) => recorded.push(times)).done(at(1_003, 42.5));
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.fromFeedMs).toBeCloseTo(2.375, 6);
    expect(recorded[0]).toMatchObject({ fromCommitMs: 3, fromArrivalMs: 1.5 });
  });
});
