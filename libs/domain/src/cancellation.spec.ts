import { Cancellation, type CancelSignal } from './cancellation';

describe('Cancellation', () => {
  it('calls each listener once when it aborts, not one removed or added after, and keeps the reason', () => {
    const cancellation = new Cancellation();
    const calls: string[] = [];
    const first = (): void => void calls.push('first');
    const removed = (): void => void calls.push('removed');
    cancellation.addEventListener('abort', first);
    cancellation.addEventListener('abort', first);
    cancellation.addEventListener('abort', removed);
    cancellation.removeEventListener('abort', removed);
    expect(cancellation.aborted).toBe(false);
    expect(cancellation.reason).toBeUndefined();
    expect(() => cancellation.throwIfAborted()).not.toThrow();
    const reason = new Error('gone');
    cancellation.abort(reason);
    cancellation.abort(new Error('again'));
    cancellation.addEventListener('abort', () => void calls.push('late'));
    expect(calls).toEqual(['first']);
    expect(cancellation.aborted).toBe(true);
    expect(cancellation.reason).toBe(reason);
    expect(() => cancellation.throwIfAborted()).toThrow(reason);
  });

  it('gives an AbortError when aborted without a reason, as an AbortController does', () => {
    const cancellation = new Cancellation();
    cancellation.abort();
    expect(cancellation.reason).toMatchObject({ name: 'AbortError' });
  });

  it('runs every listener even when one throws, then throws the first error', () => {
    const cancellation = new Cancellation();
    const calls: number[] = [];
    cancellation.addEventListener('abort', () => {
      calls.push(1);
      throw new Error('listener one');
    });
    cancellation.addEventListener('abort', () => void calls.push(2));
    expect(() => cancellation.abort()).toThrow('listener one');
    expect(calls).toEqual([1, 2]);
  });

  it('is what an AbortSignal is to its readers', () => {
    const controller = new AbortController();
    const signal: CancelSignal = controller.signal;
    let heard = false;
    signal.addEventListener('abort', () => (heard = true), { once: true });
    controller.abort();
    expect(heard && signal.aborted).toBe(true);
  });
});
