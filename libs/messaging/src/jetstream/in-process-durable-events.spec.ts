import { type DocumentChanged, Subjects } from '@tessera/contracts';
import { eventually } from '@tessera/testing';
import { type DurableEventContext } from './durable-events.port';
import { InProcessDurableEvents } from './in-process-durable-events';

const stream = 'DATASTORE_CHANGES';
const subject = Subjects.DatastoreDocumentChanged;

function change(n: number): DocumentChanged {
  return { appId: 'app-1', service: 'mongodb-atlas', cluster: 'Cluster0', db: 'shop', coll: 'items', operationType: 'insert', documentKey: { _id: { $numberInt: String(n) } }, resumeToken: { _data: String(n) } };
}

const numberOf = (event: DocumentChanged): number => Number((event.documentKey['_id'] as { $numberInt: string }).$numberInt);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, index) => from + index);

// The standalone stream behind DurableEvents: the semantics the JetStream spec shows over a real server.
describe('in-process durable events', () => {
  let events: InProcessDurableEvents;

  beforeEach(async () => {
    events = new InProcessDurableEvents();
    await events.ensureStream({ name: stream, subjects: [subject] });
  });
  afterEach(async () => {
    await events.close();
  });

  it('stores a message id once within the duplicate window', async () => {
    const first = await events.publish(subject, change(1), { messageId: 'm-1' });
    const again = await events.publish(subject, change(1), { messageId: 'm-1' });
    expect(first).toEqual({ sequence: 1, duplicate: false });
    expect(again.duplicate).toBe(true);
    const seen: number[] = [];
    await events.consume({ stream, durable: 'g', subject, handler: (event) => void seen.push(numberOf(event)) });
    await eventually(() => expect(seen).toEqual([1]));
  });

  it('untilConsumed: a publish before any consumer joined resolves only once the group that joins later handled it', async () => {
    let state = 'pending';
    const published = events.publish(subject, change(1), { messageId: 'u-1', untilConsumed: true }).then(() => (state = 'handled'));
    // Published again (a relay) while the first waits: it waits for the same handling.
    let againState = 'pending';
    const again = events.publish(subject, change(1), { messageId: 'u-1', untilConsumed: true }).then((answer) => (againState = answer.duplicate ? 'handled' : 'stored twice'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(state).toBe('pending');
    const seen: number[] = [];
    let failOnce = true;
    await events.consume({
      stream,
      durable: 'late',
      subject,
      handler: (event) => {
        if (failOnce) {
          failOnce = false;
          throw new Error('not yet');
        }
        seen.push(numberOf(event));
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The first delivery failed: still not handled.
    expect(state).toBe('pending');
    await published;
    await again;
    expect(seen).toEqual([1]);
    expect(againState).toBe('handled');
  });

  it('untilConsumed: a publish is rejected when the stream closes before a consumer handled it, and its id is forgotten', async () => {
    const group = await events.consume({ stream, durable: 'leaving', subject, handler: () => undefined });
    await group.stop();
    // The group that stopped does not count as handling it.
    const published = events.publish(subject, change(2), { messageId: 'u-2', untilConsumed: true });
    const outcome = published.then(
      () => 'resolved',
      (error: unknown) => String(error),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await events.close();
    expect(await outcome).toMatch(/before a consumer handled it/);
    // A plain publish (no untilConsumed) with nobody consuming resolves at once, as before.
    const other = new InProcessDurableEvents();
    await other.ensureStream({ name: stream, subjects: [subject] });
    expect(await other.publish(subject, change(3), { messageId: 'u-3' })).toEqual({ sequence: 1, duplicate: false });
    await other.close();
  });

  it('shares a durable consumer between two members: every event handled once, by one of them', async () => {
    const byMember = new Map<string, number[]>();
    const handler = (member: string) => async (event: DocumentChanged, context: DurableEventContext) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(context.messageId).toBe(`m-${numberOf(event)}`);
      byMember.set(member, [...(byMember.get(member) ?? []), numberOf(event)]);
    };
    await events.consume({ stream, durable: 'shared', subject, handler: handler('a') });
    await events.consume({ stream, durable: 'shared', subject, handler: handler('b') });
    await Promise.all(range(1, 40).map((n) => events.publish(subject, change(n), { messageId: `m-${n}` })));
    await eventually(() => expect([...byMember.values()].flat().sort((x, y) => x - y)).toEqual(range(1, 40)));
    expect(byMember.get('a')?.length).toBeGreaterThan(0);
    expect(byMember.get('b')?.length).toBeGreaterThan(0);
  });

  it('resolves a publish once every consuming group finished the event, so a saved position never passes an unhandled one', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handled: number[] = [];
    await events.consume({ stream, durable: 'slow', subject, handler: async (event) => {
      await gate;
      handled.push(numberOf(event));
    } });
    let published = false;
    const publishing = events.publish(subject, change(1), { messageId: 'm-1' }).then(() => (published = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(published).toBe(false);
    release();
    await publishing;
    expect(handled).toEqual([1]);
  });

  it('resumes a stopped group where it stopped, and a second group gets every event too', async () => {
    const seen: number[] = [];
    const subscription = await events.consume({ stream, durable: 'resume', subject, handler: (event) => void seen.push(numberOf(event)) });
    for (const n of range(1, 5)) await events.publish(subject, change(n), { messageId: `m-${n}` });
    await eventually(() => expect(seen).toEqual(range(1, 5)));
    await subscription.stop();
    for (const n of range(6, 9)) await events.publish(subject, change(n), { messageId: `m-${n}` });
    await events.consume({ stream, durable: 'resume', subject, handler: (event) => void seen.push(numberOf(event)) });
    await eventually(() => expect(seen).toEqual(range(1, 9)));
    const other: number[] = [];
    await events.consume({ stream, durable: 'other', subject, handler: (event) => void other.push(numberOf(event)) });
    for (const n of range(10, 11)) await events.publish(subject, change(n), { messageId: `m-${n}` });
    await eventually(() => expect(other).toEqual([10, 11]));
    await eventually(() => expect(seen).toEqual(range(1, 11)));
  });

  it('delivers an event again after its handler threw, and gives up after maxDeliver', async () => {
    const deliveries: Array<[number, number]> = [];
    await events.consume({
      stream,
      durable: 'retry',
      subject,
      maxDeliver: 2,
      handler: (event, context) => {
        deliveries.push([numberOf(event), context.deliveryCount]);
        if (numberOf(event) !== 2) throw new Error('not yet');
      },
    });
    await Promise.all([events.publish(subject, change(1), { messageId: 'm-1' }), events.publish(subject, change(2), { messageId: 'm-2' })]);
    await eventually(() => expect(deliveries).toEqual([[1, 1], [2, 1], [1, 2]]), { timeoutMs: 5_000 });
    // Given up: nothing waits for a retry, so no third delivery can come.
    await eventually(() => expect(events.lag(stream, 'retry')).toEqual({ pending: 0, retrying: 0 }), { timeoutMs: 5_000 });
    expect(deliveries).toHaveLength(3);
  });
});
