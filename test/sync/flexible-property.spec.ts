import { type DataSourceClient } from '@tessera/datastore';
import { type QuerySet } from '@tessera/sync-protocol';
import { eventually, propertySeed } from '@tessera/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/test-host';
import { seededRandom } from './converging-client';
import { FLEXIBLE_CLUSTER, flexibleApp, FlexibleTestClient, taskSchema, writeTask } from './flexible-test-client';
import { syncUrl } from './sync-test-client';

// Issue 17's property: several flexible-sync clients subscribe, change their queries, write (inside and
// outside their views and write filters) and go away and come back with their files (sending their
// unacknowledged uploads again) while the collection is written directly; once everything is
// delivered, each client holds exactly the documents its subscription and role allow, as the collection
// holds them. Each case's seed is in its title.

const STATUSES = ['a', 'b', 'c', 'hidden'] as const;
const TASKS = 30;
const STEPS = 120;

interface Participant {
  client: FlexibleTestClient;
  url: string;
  userId: string;
  queryVersion: number;
  query: QuerySet;
  statuses: string[];
}

type TaskDoc = { _id: string; owner_id: string; status: string; name: string };

describe('flexible sync property: clients end with exactly their views', () => {
  let host: TestHost;
  let clientAppId: string;
  let cluster: DataSourceClient;

  beforeAll(async () => {
    host = await startTestHost();
    clientAppId = (await host.createApp('flexible-property', flexibleApp)).clientAppId;
    cluster = host.dataSources.forCluster(FLEXIBLE_CLUSTER);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  // Fixed seeds, so that every run repeats what once failed, and one more drawn from TESSERA_PROPERTY_SEED (a
  // fresh one with `random`), named in the test's title so that a failure can be replayed:
  // TESSERA_FLX_SEEDS=<seed>[,<seed>...] runs exactly the seeds given.
  // Seed 73782 found the upload that crossed a bootstrap on the wire (the client kept the bootstrap's older
  // value while the collection took its write); the acknowledgement now re-sends what such an upload wrote.
  // Seed 467745 found a client's create that met a document written elsewhere before the upload's turn came,
  // and moved it out of the view: the collection took the write, the client kept an object outside its view.
  const seeds = process.env['TESSERA_FLX_SEEDS']?.split(',').map(Number) ?? [1, 73782, 4242, 90210, 467745, 1 + ((propertySeed ?? Math.floor(Math.random() * 1_000_000)) % 1_000_000)];

  const converges = (seed: number) => async () => {
    const random = seededRandom(seed);
    const pick = <T,>(items: readonly T[]): T => items[random(items.length)];
    const tasks = cluster.db('app').collection('Task');
    await tasks.deleteMany({});
    const participants: Participant[] = [];
    for (let i = 0; i < 3; i++) {
      const login = await host.anonymousLogin(clientAppId);
      const url = syncUrl(host.url, clientAppId, login.accessToken);
      const client = await FlexibleTestClient.open(url);
      const query = { Task: 'status == "a"' };
      await client.openSession(1, 1, query);
      client.upload(1, taskSchema());
      participants.push({ client, url, userId: login.userId, queryVersion: 1, query, statuses: ['a'] });
    }
    const owners = [...participants.map((p) => p.userId), 'outsider'];
    await tasks.insertMany(Array.from({ length: TASKS }, (_, i): TaskDoc => ({ _id: `t${i}`, owner_id: pick(owners), status: pick(STATUSES), name: `n${i}` })));
    // The change feed follows a new app's cluster within its reconcile interval: wait until a write arrives.
    const [first] = participants;
    let probe = 0;
    await eventually(
      async () => {
        await tasks.insertOne({ _id: `probe${probe++}`, owner_id: 'outsider', status: 'a', name: 'probe' });
        await eventually(() => expect(first?.client.ids('Task').some((id) => id.startsWith('probe'))).toBe(true), { timeoutMs: 500 });
      },
      { timeoutMs: 20_000 },
    );

    for (let step = 0; step < STEPS; step++) {
      const actor = pick(participants);
      const action = random(11);
      const id = `t${random(TASKS + 5)}`;
      if (action === 10) {
        // The client goes away and comes back with its file (its unacknowledged uploads sent again).
        actor.client.close();
        actor.client = await FlexibleTestClient.resume(actor.url, actor.client, 1, actor.queryVersion, actor.query);
      } else if (action < 2) {
        actor.statuses = STATUSES.filter(() => random(2) === 0);
        if (actor.statuses.length === 0) actor.statuses = ['b'];
        actor.queryVersion++;
        actor.query = { Task: actor.statuses.map((s) => `status == "${s}"`).join(' OR ') };
        actor.client.send({ type: 'query', sessionIdent: 1, queryVersion: actor.queryVersion, queries: actor.query });
      } else if (action < 6) {
        // A client write: its own or someone else's task, into any status (some are refused and undone).
        const known = actor.client.objects.get('Task')?.has(id) === true;
        actor.client.upload(1, writeTask(id, { owner_id: random(4) === 0 ? 'outsider' : actor.userId, status: pick(STATUSES), name: `by ${actor.userId} at ${step}` }, !known));
      } else if (action < 9) {
        await tasks.replaceOne({ _id: id }, { owner_id: pick(owners), status: pick(STATUSES), name: `external ${step}` }, { upsert: true });
      } else {
        await tasks.deleteOne({ _id: id });
      }
    }

    for (const participant of participants) {
      await eventually(
        async () => {
          // The role reads what passes its read filter (not hidden) or its write filter (the user's own).
          const readable = { $or: [{ status: { $ne: 'hidden' } }, { owner_id: participant.userId }] };
          const visible = (await tasks.find({ $and: [{ status: { $in: participant.statuses } }, readable] }).toArray()) as unknown as TaskDoc[];
          const expected = new Map(visible.map((doc) => [doc._id, { owner_id: doc.owner_id, status: doc.status, name: doc.name }]));
          const held = new Map([...(participant.client.objects.get('Task') ?? new Map<string, Record<string, unknown>>())].map(([key, fields]) => [key, { owner_id: fields['owner_id'], status: fields['status'], name: fields['name'] }]));
          expect(held).toEqual(expected);
        },
        { timeoutMs: 15_000 },
      );
    }
    for (const participant of participants) {
      expect(participant.client.received.some((message) => message.type === 'error')).toBe(false);
      // Compensating writes (231) are expected; a reset or any other session error is not.
      expect(participant.client.received.filter((message) => message.type === 'json_error' && message.code !== 231)).toEqual([]);
      participant.client.close();
    }
  };

  for (const seed of seeds) it(`converges (seed ${seed})`, converges(seed), 60_000);
});
