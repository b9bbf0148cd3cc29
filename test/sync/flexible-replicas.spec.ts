import { DataSources } from '@tessera/platform';
import { eventually, findNatsServer, natsSkipReason } from '@tessera/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEXIBLE_CLUSTER, flexibleApp, FlexibleTestClient, taskSchema, writeTask } from './flexible-test-client';
import { type ReplicaEnvironment, startReplicaEnvironment } from './replica-environment';
import { userIdOf } from './sync-admin-app';
import { syncUrl } from './sync-test-client';

// Flexible sync on several sync-service replicas: two hosts in distributed mode over a real nats-server and
// one datastore (Tessera's wire server), as pods run them. A write uploaded through one replica's session
// reaches a subscribed session on the other, and a write made outside sync (the change feed reaches one
// replica per change) reaches sessions on both, entering and leaving their views.

describe.skipIf(!findNatsServer())(`flexible sync: two replicas${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let environment: ReplicaEnvironment;

  beforeAll(async () => {
    environment = await startReplicaEnvironment();
  });

  afterAll(async () => {
    await environment?.close();
  });

  it('sends an upload through one replica to a session on the other, and external writes to sessions on both', async () => {
    // The function runtime publishes the datastore's change feed; it runs beside the first replica.
    const first = await environment.replica(['admin-api', 'graphql-gateway', 'sync-service', 'function-runtime']);
    const second = await environment.replica(['graphql-gateway', 'sync-service']);
    const clientAppId = await first.createApp('flexible-replicas', flexibleApp);
    const open = async (host: typeof first): Promise<{ client: FlexibleTestClient; userId: string }> => {
      // Tokens from the first replica are good on every replica (shared signing key).
      const { access } = await first.login(clientAppId);
      return { client: await FlexibleTestClient.open(syncUrl(host.url, clientAppId, access)), userId: userIdOf(access) };
    };
    const { client: a, userId: aId } = await open(first);
    const { client: b, userId: bId } = await open(second);
    await a.openSession(1, 1, { Task: 'status == "shared"' });
    await b.openSession(1, 1, { Task: 'status == "shared"' });

    // Uploads, each way across the replicas.
    a.upload(1, [...taskSchema(), ...writeTask('from-a', { owner_id: aId, status: 'shared', name: 'written on the first replica' })]);
    await eventually(() => expect(b.objects.get('Task')?.get('from-a')).toMatchObject({ name: 'written on the first replica' }));
    b.upload(1, [...taskSchema(), ...writeTask('from-b', { owner_id: bId, status: 'shared', name: 'written on the second replica' })]);
    await eventually(() => expect(a.objects.get('Task')?.get('from-b')).toMatchObject({ name: 'written on the second replica' }));
    // An upload that moves a task out of the query erases it on the other replica's client.
    a.upload(1, writeTask('from-a', { status: 'private' }, false));
    await eventually(() => expect(b.ids('Task')).not.toContain('from-a'));

    // External writes: the change feed goes to one replica, and clients on both hear of them.
    const tasks = first.nest.get(DataSources).forCluster(FLEXIBLE_CLUSTER).db('app').collection('Task');
    let probe = 0;
    await eventually(
      async () => {
        await tasks.insertOne({ _id: `probe-${probe++}`, owner_id: 'outsider', status: 'shared', name: 'probe' });
        await eventually(() => expect(a.ids('Task').some((id) => id.startsWith('probe-'))).toBe(true), { timeoutMs: 500 });
      },
      { timeoutMs: 30_000 },
    );
    await tasks.insertOne({ _id: 'external', owner_id: 'outsider', status: 'shared', name: 'external' });
    for (const client of [a, b]) await eventually(() => expect(client.objects.get('Task')?.get('external')).toMatchObject({ name: 'external' }));
    await tasks.updateOne({ _id: 'external' }, { $set: { name: 'renamed outside' } });
    for (const client of [a, b]) await eventually(() => expect(client.objects.get('Task')?.get('external')).toMatchObject({ name: 'renamed outside' }));
    await tasks.updateOne({ _id: 'external' }, { $set: { status: 'elsewhere' } });
    for (const client of [a, b]) await eventually(() => expect(client.ids('Task')).not.toContain('external'));
    expect(await tasks.findOne({ _id: 'from-a' })).toMatchObject({ status: 'private' });
    for (const client of [a, b]) {
      expect(client.received.filter((message) => message.type === 'error' || message.type === 'json_error')).toEqual([]);
      client.close();
    }
  }, 90_000);
});
