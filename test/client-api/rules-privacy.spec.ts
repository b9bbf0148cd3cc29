import type { ObjectId } from 'bson';
import { startTestHost, type TestHost } from '../support/test-host';
import { failureOf, Realm, realmApp } from './realm-helpers';

interface Note {
  _id: ObjectId | string;
  owner?: string;
  title?: string;
  secret?: string;
  summary?: string;
}

type Event = { operationType: string; documentKey?: { _id: unknown }; fullDocument?: Record<string, unknown>; updateDescription?: { updatedFields: Record<string, unknown>; removedFields: string[] } };

/** The next events of a realm-web watch until `done` holds, or a failure naming what arrived by the deadline. */
async function eventsUntil(stream: AsyncGenerator<unknown>, done: (events: Event[]) => boolean, timeoutMs = 10_000): Promise<Event[]> {
  const events: Event[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(events)) {
    const left = Math.max(deadline - Date.now(), 0);
    const next = await Promise.race([stream.next(), new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), left))]);
    if (next === 'late') throw new Error(`only these events by the deadline: ${JSON.stringify(events)}`);
    if (next.done) break;
    events.push(next.value as Event);
  }
  return events;
}

// Issue 14, items 1 and 5, as they were found: realm-web against a real HTTP server on a random port.
describe('rules privacy and watch filters through realm-web', () => {
  let host: TestHost;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({ services: ['graphql-gateway'] });
    ({ clientAppId } = await host.createApp('privacy', (app) => {
      app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
      app.services.push({
        config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'PrivacyCluster' } },
        defaultRule: { roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true }] },
        collectionRules: [
          {
            // Everyone reads and writes the notes, but only their owner reads `secret`.
            database: 'app',
            collection: 'notes',
            roles: [
              { name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true, insert: true, delete: true },
              { name: 'others', apply_when: {}, fields: { secret: { read: false, write: false } }, additional_fields: { read: true, write: true }, insert: true, delete: true },
            ],
          },
          {
            database: 'app',
            collection: 'private',
            roles: [{ name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true, insert: true, delete: true }],
          },
        ],
        rules: [],
        webhooks: [],
      });
    }));
  });

  afterAll(async () => {
    await host?.close();
  });

  const login = () => realmApp(host.url, clientAppId).logIn(Realm.Credentials.anonymous(false));
  const notesOf = (user: Realm.User) => user.mongoClient('mongodb-atlas').db('app').collection<Note>('notes');

  it('answers a watch with a bad filter with a 4xx, and the cluster keeps accepting writes', async () => {
    const attacker = await login();
    const victim = await login();
    for (const filter of [{ 'fullDocument.summary': { $foo: 1 } }, { $where: 'true' }]) {
      const stream = notesOf(attacker).watch({ filter } as never);
      const failure = await failureOf(stream.next());
      expect(failure.statusCode).toBe(400);
      expect(failure.errorCode).toBe('InvalidParameter');
    }
    const raw = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call?baas_at=${attacker.accessToken}&baas_request=${encodeURIComponent(Buffer.from(JSON.stringify({ name: 'watch', service: 'mongodb-atlas', arguments: [{ database: 'app', collection: 'notes', filter: { $where: 'true' } }] })).toString('base64'))}`);
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ error: expect.stringContaining('$where'), error_code: 'InvalidParameter' });
    // Writes to that collection and to every other one still succeed, and a good watch still streams.
    const good = notesOf(victim).watch();
    const first = good.next();
    for (let i = 0; i < 5; i += 1) {
      await notesOf(victim).insertOne({ owner: victim.id, title: `after ${i}`, summary: 's' });
      await victim.mongoClient('mongodb-atlas').db('app').collection('other').insertOne({ n: i });
    }
    expect(((await first).value as Event).operationType).toBe('insert');
    await good.return(undefined);
    expect(await notesOf(victim).count({ owner: victim.id })).toBe(5);
  });

  it('never sends a withheld field in a watch event', async () => {
    const owner = await login();
    const other = await login();
    const { insertedId } = await notesOf(owner).insertOne({ owner: owner.id, title: 'plan', secret: 'first' });
    const stream = notesOf(other).watch();
    const seen = eventsUntil(stream, (events) => events.length >= 3);
    await notesOf(owner).updateOne({ _id: insertedId }, { $set: { secret: 'second', title: 'plan b' } });
    await notesOf(owner).updateOne({ _id: insertedId }, { $set: { secret: 'third' } });
    await notesOf(owner).updateOne({ _id: insertedId }, { $unset: { secret: '' }, $set: { title: 'plan c' } });
    await notesOf(owner).updateOne({ _id: insertedId }, { $set: { summary: 'done' } });
    const events = await seen;
    await stream.return(undefined);
    expect(events.map((event) => event.updateDescription)).toEqual([
      { updatedFields: { title: 'plan b' }, removedFields: [], truncatedArrays: [] },
      { updatedFields: { title: 'plan c' }, removedFields: [], truncatedArrays: [] },
      { updatedFields: { summary: 'done' }, removedFields: [], truncatedArrays: [] },
    ]);
    for (const event of events) {
      expect(event.fullDocument).not.toHaveProperty('secret');
      expect(JSON.stringify(event)).not.toMatch(/secret|first|second|third/);
    }
    // The owner's own watch still carries the field.
    const own = notesOf(owner).watch();
    const mine = eventsUntil(own, (events) => events.length >= 1);
    await notesOf(owner).updateOne({ _id: insertedId }, { $set: { secret: 'fourth' } });
    expect((await mine)[0].updateDescription?.updatedFields).toEqual({ secret: 'fourth' });
    await own.return(undefined);
  });

  it('sends delete events only to users who could read the document', async () => {
    const alice = await login();
    const bob = await login();
    const privateOf = (user: Realm.User) => user.mongoClient('mongodb-atlas').db('app').collection<Note>('private');
    const stream = privateOf(bob).watch();
    const seen = eventsUntil(stream, (events) => events.some((event) => event.operationType === 'delete'));
    await privateOf(alice).insertOne({ _id: 'alice-doc', owner: alice.id });
    await privateOf(alice).deleteOne({ _id: 'alice-doc' });
    await privateOf(bob).insertOne({ _id: 'bob-doc', owner: bob.id });
    await privateOf(bob).deleteOne({ _id: 'bob-doc' });
    const events = await seen;
    await stream.return(undefined);
    expect(events.map((event) => [event.operationType, event.documentKey?._id])).toEqual([
      ['insert', 'bob-doc'],
      ['delete', 'bob-doc'],
    ]);
  });

  it('refuses the count oracle on a withheld field, and sorting on it', async () => {
    const owner = await login();
    const other = await login();
    await notesOf(owner).insertOne({ owner: owner.id, title: 'oracle', secret: 'mellon' });
    // The attack: a binary search over `secret` with `$gte`, one bit per count. The first call is refused.
    let low = 'a';
    let calls = 0;
    const failures: Array<{ statusCode: number; errorCode: string }> = [];
    for (; calls < 15; calls += 1) {
      try {
        const count = await notesOf(other).count({ title: 'oracle', secret: { $gte: low } });
        low = count > 0 ? `${low}m` : low;
      } catch (error) {
        failures.push(error as { statusCode: number; errorCode: string });
        break;
      }
    }
    expect(calls).toBe(0);
    expect(failures[0]).toMatchObject({ statusCode: 400, errorCode: 'InvalidParameter' });
    expect(await failureOf(notesOf(other).find({}, { sort: { secret: 1 } }))).toMatchObject({ statusCode: 400, errorCode: 'InvalidParameter', error: expect.stringContaining("'secret'") });
    expect(await failureOf(notesOf(other).aggregate([{ $group: { _id: '$secret' } }]))).toMatchObject({ statusCode: 400, errorCode: 'InvalidParameter' });
    expect(await failureOf(notesOf(other).findOneAndUpdate({ title: 'oracle' }, { $set: { summary: 'x' } }, { sort: { secret: -1 } }))).toMatchObject({ statusCode: 400 });
    // Readable fields still work.
    expect(await notesOf(other).count({ title: 'oracle' })).toBe(1);
    expect((await notesOf(other).find({ title: 'oracle' }))[0]).not.toHaveProperty('secret');
  });
});
