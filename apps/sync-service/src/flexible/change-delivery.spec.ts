import { ChangeDelivery } from './change-delivery';

describe('ChangeDelivery', () => {
  it('records once, when the last session is done, the time to the latest DOWNLOAD sent', () => {
    const recorded: Array<[number, string]> = [];
    const delivery = new ChangeDelivery('app1', 1_000, 3, (ms, appId) => recorded.push([ms, appId]));
    delivery.done(1_004);
    delivery.done(undefined);
    expect(recorded).toEqual([]);
    delivery.done(1_002);
    expect(recorded).toEqual([[4, 'app1']]);
    delivery.done(1_009);
    expect(recorded).toEqual([[4, 'app1']]);
  });

  it('records nothing when no session had anything to send, and never a negative time', () => {
    const recorded: number[] = [];
    new ChangeDelivery('a', 1_000, 1, (ms) => recorded.push(ms)).done(undefined);
    expect(recorded).toEqual([]);
    // A commit stamped by a clock slightly ahead of this one.
    new ChangeDelivery('a', 1_005, 1, (ms) => recorded.push(ms)).done(1_003);
    expect(recorded).toEqual([0]);
  });
});
