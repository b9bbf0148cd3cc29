import { type DocumentChanged, Subjects } from '@tessera/contracts';
import { eventually, findNatsServer, natsSkipReason, type NatsServerHandle, startNatsServer } from '@tessera/testing';
import { JetStreamEvents } from './durable-events';
import { type DurableEventContext } from './durable-events.port';

const stream = 'DATASTORE_CHANGES';

function change(n: number): DocumentChanged {
  return { appId: 'app-1', service: 'mongodb-atlas', cluster: 'Cluster0', db: 'shop', coll: 'items', operationType: 'insert', documentKey: { _id: { $numberInt: String(n) } }, resumeToken: { n: { $numberInt: String(n) } } };
}

/** Which events a consumer group handled, by replica, with every delivery counted. */
class Handled {
  readonly byReplica = new Map<string, number[]>();
  readonly deliveries: number[] = [];

  handler(replica: string) {
    return async (event: DocumentChanged, context: DurableEventContext): Promise<void> => {
      await new Promise((resolve) => setImmediate(resolve));
      const n = Number((event.documentKey['_id'] as { $numberInt: string }).$numberInt);
      expect(context.messageId).toBe(`change-${n}`);
      this.deliveries.push(n);
      this.byReplica.set(replica, [...(this.byReplica.get(replica) ?? []), n]);
    };
  }

  sorted(): number[] {
    return [...this.deliveries].sort((a, b) => a - b);
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, index) => from + index);

// Durable change events through a real nats-server with JetStream (skipped without the binary: natsSkipReason).
describe.skipIf(!findNatsServer())(`durable events over JetStream${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let nats: NatsServerHandle;
  const open: JetStreamEvents[] = [];
  const connectClient = async (): Promise<JetStreamEvents> => {
    const client = await JetStreamEvents.connect({ url: nats.url, connection: { reconnectTimeWait: 100 } });
    open.push(client);
    return client;
  };

  /** A new server with an empty store (streams may not overlap in subjects). */
  const restartFresh = async (): Promise<void> => {
    await Promise.all(open.splice(0).map((client) => client.close()));
    await nats.stop();
    nats = await startNatsServer();
  };

  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await nats?.stop();
  });

  it('shares one durable consumer between two replicas: every event handled once, by one of them', async () => {
    const publisher = await connectClient();
    await publisher.ensureStream({ name: stream, subjects: [Subjects.DatastoreDocumentChanged] });
    const handled = new Handled();
    for (const replica of ['a', 'b']) {
      const client = await connectClient();
      await client.consume({ stream, durable: 'triggers-shared', subject: Subjects.DatastoreDocumentChanged, handler: handled.handler(replica), batch: 4 });
    }
    for (const n of range(1, 60)) await publisher.publish(Subjects.DatastoreDocumentChanged, change(n), { messageId: `change-${n}` });
    await eventually(() => expect(handled.sorted()).toEqual(range(1, 60)), { timeoutMs: 15_000 });
    expect(handled.byReplica.get('a')?.length).toBeGreaterThan(0);
    expect(handled.byReplica.get('b')?.length).toBeGreaterThan(0);
  });

  it('drops a re-published message id instead of storing it twice', async () => {
    const publisher = await connectClient();
    await publisher.ensureStream({ name: stream, subjects: [Subjects.DatastoreDocumentChanged] });
    const first = await publisher.publish(Subjects.DatastoreDocumentChanged, change(1000), { messageId: 'change-1000' });
    const again = await publisher.publish(Subjects.DatastoreDocumentChanged, change(1000), { messageId: 'change-1000' });
    expect(again).toEqual({ sequence: first.sequence, duplicate: true });
  });

  it('resumes where the consumer group stopped when its replica restarts', async () => {
    await restartFresh();
    const publisher = await connectClient();
    await publisher.ensureStream({ name: 'RESUME', subjects: [Subjects.DatastoreDocumentChanged] });
    const handled = new Handled();
    const first = await connectClient();
    const subscription = await first.consume({ stream: 'RESUME', durable: 'resume', subject: Subjects.DatastoreDocumentChanged, handler: handled.handler('first') });
    for (const n of range(1, 10)) await publisher.publish(Subjects.DatastoreDocumentChanged, change(n), { messageId: `change-${n}` });
    await eventually(() => expect(handled.sorted()).toEqual(range(1, 10)));
    await subscription.stop();
    await first.close();
    // Published while no replica runs: kept on the server for the group.
    for (const n of range(11, 20)) await publisher.publish(Subjects.DatastoreDocumentChanged, change(n), { messageId: `change-${n}` });
    const restarted = await connectClient();
    await restarted.consume({ stream: 'RESUME', durable: 'resume', subject: Subjects.DatastoreDocumentChanged, handler: handled.handler('restarted') });
    await eventually(() => expect(handled.sorted()).toEqual(range(1, 20)));
    expect(handled.byReplica.get('restarted')).toEqual(range(11, 20));
  });

  it('keeps an event with the replica whose handler outlasts the ack wait: no second replica gets it', async () => {
    await restartFresh();
    const publisher = await connectClient();
    await publisher.ensureStream({ name: 'SLOW', subjects: [Subjects.DatastoreDocumentChanged] });
    const deliveries: Array<[string, number]> = [];
    for (const replica of ['a', 'b']) {
      const client = await connectClient();
      await client.consume({
        stream: 'SLOW',
        durable: 'slow',
        subject: Subjects.DatastoreDocumentChanged,
        ackWaitMs: 1_000,
        handler: async (_event, context) => {
          deliveries.push([replica, context.deliveryCount]);
          // Three ack waits long: only the progress reports keep the event here.
          await new Promise((resolve) => setTimeout(resolve, 3_000));
        },
      });
    }
    await publisher.publish(Subjects.DatastoreDocumentChanged, change(1), { messageId: 'change-1' });
    await eventually(async () => expect(await publisher.lag('SLOW', 'slow')).toMatchObject({ pending: 0, ackPending: 0 }), { timeoutMs: 15_000, intervalMs: 200 });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]?.[1]).toBe(1);
  }, 30_000);

  it('hands a batch holding one event twice (the same message id) to the handler once, and settles both copies', async () => {
    await restartFresh();
    const publisher = await connectClient();
    // A short duplicate window lets the stream store an id twice, as a restarted broker may hand an event out twice.
    await publisher.ensureStream({ name: 'COPIES', subjects: [Subjects.DatastoreDocumentChanged], duplicateWindowMs: 200 });
    await publisher.publish(Subjects.DatastoreDocumentChanged, change(1), { messageId: 'change-1' });
    await publisher.publish(Subjects.DatastoreDocumentChanged, change(2), { messageId: 'change-2' });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await publisher.publish(Subjects.DatastoreDocumentChanged, change(2), { messageId: 'change-2' })).toMatchObject({ duplicate: false });
    const batches: number[][] = [];
    const consumer = await connectClient();
    await consumer.consumeBatches({
      stream: 'COPIES',
      durable: 'copies',
      subject: Subjects.DatastoreDocumentChanged,
      batch: 8,
      batchHandler: async (events) => {
        batches.push(events.map((event) => Number((event.payload.documentKey['_id'] as { $numberInt: string }).$numberInt)));
        // The first batch is slow: both copies of change 2 gather into the next one meanwhile.
        if (batches.length === 1) await new Promise((resolve) => setTimeout(resolve, 300));
      },
    });
    await eventually(async () => expect(await publisher.lag('COPIES', 'copies')).toMatchObject({ pending: 0, ackPending: 0 }), { timeoutMs: 10_000, intervalMs: 100 });
    expect(batches.flat().sort()).toEqual([1, 2]);
  });

  it('loses no event and handles none twice in a consumer when the NATS server restarts mid-stream', async () => {
    await restartFresh();
    const publisher = await connectClient();
    await publisher.ensureStream({ name: 'RESTART', subjects: [Subjects.DatastoreDocumentChanged] });
    const handled = new Handled();
    // One replica: an acknowledgement the restarted server lost brings the event back to it, and it recognises
    // the id (across replicas the guarantee is at-least-once; see JetStreamEvents).
    const consumer = await connectClient();
    await consumer.consume({ stream: 'RESTART', durable: 'restart', subject: Subjects.DatastoreDocumentChanged, handler: handled.handler('only'), batch: 4, ackWaitMs: 5_000 });
    const publishing = (async () => {
      for (const n of range(1, 80)) {
        await publisher.publish(Subjects.DatastoreDocumentChanged, change(n), { messageId: `change-${n}`, retryForMs: 20_000 });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await eventually(() => expect(handled.deliveries.length).toBeGreaterThanOrEqual(20), { timeoutMs: 10_000 });
    await nats.restart();
    await publishing;
    // Done once the group has nothing pending or unacknowledged; only then is "no duplicate" final.
    await eventually(async () => expect(await publisher.lag('RESTART', 'restart')).toMatchObject({ pending: 0, ackPending: 0 }), { timeoutMs: 30_000, intervalMs: 200 });
    expect(handled.sorted()).toEqual(range(1, 80));
  }, 60_000);
});
