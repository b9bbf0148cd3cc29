import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Subjects } from '@tessera/contracts';
import { JetStreamEvents } from '@tessera/messaging';
import { eventually, findNatsServer, natsSkipReason } from '@tessera/testing';
import { AdminSession, zipText } from '../admin-api/admin-session';
import { MongoClient } from 'mongodb';
import * as Realm from 'realm-web';
import { adminPassword, anonymousLogin, callFunction, Cluster, distributedApp, postJson } from './cluster';
import { type CollectedSpan, OtlpCollector } from './otlp-collector';

const realmApp = (url: string, id: string): Realm.App => new Realm.App({ id, baseUrl: url });

// The four services and the datastore as separate processes over a real NATS server, driven as clients drive standalone mode:
// realm-web login and function calls through the gateway (gateway -> NATS -> function runtime), CRUD under
// rules, a GraphQL query, and admin pushes that every replica reloads. Skips when nats-server is missing
// (natsSkipReason).
describe.skipIf(!findNatsServer())(`four services as separate processes over NATS${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let cluster: Cluster;
  let admin: AdminSession;
  let appId: string;
  let clientAppId: string;
  let collector: OtlpCollector;

  beforeAll(async () => {
    // Every process exports its spans (all sampled) to a collector in this test.
    collector = await OtlpCollector.start();
    cluster = await Cluster.start({
      runtimes: 2,
      // A function call waits as long as the function may run (its limit plus a 5 s margin): with a 5 s limit, a
      // call lost in a killed replica fails at 10 s, as the fault tests below expect.
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER_ARG: '1', TESSERA_FUNCTION_TIME_LIMIT_SECONDS: '5' },
      // The runtimes log every message they handle, so the test can find the trace id in their logs.
      serviceEnv: { 'function-runtime': { LOG_LEVEL: 'debug' } },
    });
    admin = await AdminSession.login(cluster.one('admin-api'), 'admin', adminPassword);
    ({ _id: appId, client_app_id: clientAppId } = await admin.createApp('dist'));
    expect((await admin.push(appId, distributedApp('dist'))).status).toBe(204);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await collector?.close();
  });

  it('runs each service alone in its own process, with health and readiness endpoints', async () => {
    for (const [process, service] of cluster.processes) {
      expect(process.output()).toContain('Tessera is running (distributed)');
      expect((await fetch(`${process.url}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${process.url}/readyz`)).json()).toEqual({ status: 'ready', mode: 'distributed', services: [service] });
    }
    // Only the gateway serves the client API, only the admin API serves the admin API.
    expect((await fetch(`${cluster.one('function-runtime').url}/api/client/v2.0/app/${clientAppId}/location`)).status).toBe(404);
    expect((await postJson(`${cluster.one('graphql-gateway').url}/api/admin/v3.0/auth/providers/local-userpass/login`, { username: 'admin', password: adminPassword })).status).toBe(404);
  });

  it('logs in with realm-web and calls a function through gateway, NATS and the function runtime', async () => {
    const app = realmApp(cluster.one('graphql-gateway').url, clientAppId);
    const user = await app.logIn(Realm.Credentials.anonymous(false));
    expect(await user.callFunction('sum', 1, 2, 39)).toBe(42);
    expect(await user.callFunction('greet', 'ada')).toEqual({ greeting: 'hello, ada' });
  });

  it('reads and writes documents under the rules: each user sees only their own', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const alice = await realmApp(gateway, clientAppId).logIn(Realm.Credentials.anonymous(false));
    const bob = await realmApp(gateway, clientAppId).logIn(Realm.Credentials.anonymous(false));
    const notes = (user: Realm.User) => user.mongoClient('mongodb-atlas').db('shop').collection<{ _id: unknown; owner_id: string; text: string }>('notes');
    await notes(alice).insertOne({ owner_id: alice.id, text: 'alice was here' });
    await notes(bob).insertOne({ owner_id: bob.id, text: 'bob was here' });
    expect((await notes(alice).find({})).map((note) => note.text)).toEqual(['alice was here']);
    expect(await notes(bob).count({})).toBe(1);
    await expect(notes(bob).insertOne({ owner_id: alice.id, text: 'forged' })).rejects.toThrow();
    expect((await notes(alice).updateOne({ text: 'alice was here' }, { $set: { text: 'alice edited' } })).modifiedCount).toBe(1);
    expect((await notes(bob).deleteMany({})).deletedCount).toBe(1);
    expect((await notes(alice).find({})).map((note) => note.text)).toEqual(['alice edited']);
  });

  it('keeps app data and the platform database in the datastore service: no other process writes to its disk', async () => {
    // Written through the gateway above: app users and sessions (tessera-platform) and the notes (the app's cluster).
    expect(existsSync(join(cluster.datastoreDir.path, 'clusters', 'DistributedCluster'))).toBe(true);
    expect(existsSync(join(cluster.datastoreDir.path, 'clusters', 'tessera-platform'))).toBe(true);
    // Every other process keeps nothing on its disk: no embedded cluster, no platform files.
    for (const [process, service] of cluster.processes) {
      if (service === 'datastore') continue;
      expect(existsSync(join(cluster.dataDirs.get(process)!, 'clusters')), service).toBe(false);
      expect(existsSync(join(cluster.dataDirs.get(process)!, 'platform')), service).toBe(false);
    }
    // The same documents, read straight through the driver.
    const client = new MongoClient(cluster.datastoreUri, { appName: 'DistributedCluster' });
    try {
      expect(await client.db('shop').collection('notes').countDocuments({ text: 'alice edited' })).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('answers a GraphQL query generated from the pushed schema', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const user = await anonymousLogin(gateway, clientAppId);
    const graphql = (query: string) => postJson<{ data?: Record<string, unknown>; errors?: unknown[] }>(`${gateway}/api/client/v2.0/app/${clientAppId}/graphql`, { query }, { authorization: `Bearer ${user.access_token}` });
    const inserted = await graphql(`mutation { insertOneNote(data: { owner_id: "${user.user_id}", text: "via graphql" }) { text } }`);
    expect(inserted).toEqual({ status: 200, body: { data: { insertOneNote: { text: 'via graphql' } } } });
    expect((await graphql('{ notes { text owner_id } }')).body).toEqual({ data: { notes: [{ text: 'via graphql', owner_id: user.user_id }] } });
  });

  it('broadcasts an admin push as apps.deployment.changed so the function runtime process reloads', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const user = await anonymousLogin(gateway, clientAppId);
    expect((await admin.push(appId, distributedApp('dist', 'bonjour'))).status).toBe(204);
    // The runtime serves the new version as soon as it hears the event; no process restarts.
    await eventually(async () => expect((await callFunction(gateway, clientAppId, user.access_token, 'greet', ['ada'])).body).toEqual({ greeting: 'bonjour, ada' }), { timeoutMs: 10_000 });
    const pulled = await admin.pull(appId);
    expect(pulled.get('functions/greet/source.js')).toContain('bonjour');
  });
  it('traces one client request across processes: HTTP edge, NATS hops and handlers share the trace', async () => {
    const gateway = cluster.one('graphql-gateway').url;
    const user = await anonymousLogin(gateway, clientAppId);
    // The test is the caller: its traceparent makes the trace id known and its span the root.
    const callTrace = randomBytes(16).toString('hex');
    const testSpan = randomBytes(8).toString('hex');
    const called = await callFunction(gateway, clientAppId, user.access_token, 'sum', [2, 3], { traceparent: `00-${callTrace}-${testSpan}-01` });
    expect(called).toEqual({ status: 200, body: { $numberInt: '5' } });
    // Each process exports its spans in batches of its own: a child (the session lookup, say) can arrive before
    // its parent (the HTTP span, which ends last), so each tree below is checked once every span of it arrived.
    await eventually(
      () => {
        expect(new Set(collector.trace(callTrace).map((span) => span.service))).toEqual(new Set(['tessera-graphql-gateway', 'tessera-function-runtime']));
        expectLinked(collector.trace(callTrace), testSpan);
      },
      { timeoutMs: 15_000 },
    );
    const callSpans = collector.trace(callTrace);
    const edge = callSpans.find((span) => span.service === 'tessera-graphql-gateway' && span.parentSpanId === testSpan);
    const handler = callSpans.find((span) => span.service === 'tessera-function-runtime' && span.name === 'functions.execution.run process');
    expect(edge?.name).toMatch(/^POST \/api\/client\/v2.0\/app\/.+\/functions\/call$/);
    // The runtime's span descends from the gateway's HTTP span through the gateway's send span.
    const send = callSpans.find((span) => span.spanId === handler?.parentSpanId);
    expect(send).toMatchObject({ service: 'tessera-graphql-gateway', name: 'functions.execution.run send', parentSpanId: edge?.spanId });
    // The structured log line of the handling names the trace and the handler's span.
    const logged = cluster
      .all('function-runtime')
      .flatMap((runtime) => runtime.output().split('\n'))
      .filter((line) => line.includes(callTrace))
      .map((line) => JSON.parse(line) as { msg?: string; trace_id?: string; span_id?: string });
    expect(logged).toContainEqual(expect.objectContaining({ trace_id: callTrace, span_id: handler?.spanId, msg: expect.stringMatching(/^handled functions\.execution\.run in \d+ ms/) as unknown }));

    // Data access reaches the datastore inside the request's trace: a CLIENT span per operation under the edge.
    const dataTrace = randomBytes(16).toString('hex');
    const inserted = await postJson(
      `${gateway}/api/client/v2.0/app/${clientAppId}/functions/call`,
      { service: 'mongodb-atlas', name: 'insertOne', arguments: [{ database: 'shop', collection: 'notes', document: { owner_id: user.user_id, text: 'traced' } }] },
      { authorization: `Bearer ${user.access_token}`, traceparent: `00-${dataTrace}-${testSpan}-01` },
    );
    expect(inserted.status).toBe(200);
    const dataSpans = await eventually(() => {
      const spans = collector.trace(dataTrace);
      expect(spans.find((span) => span.name === 'insertOne shop.notes')).toBeDefined();
      expectLinked(spans, testSpan);
      return spans;
    }, { timeoutMs: 15_000 });
    const insert = dataSpans.find((span) => span.name === 'insertOne shop.notes')!;
    expect(insert).toMatchObject({ service: 'tessera-graphql-gateway', kind: 3, attributes: { 'db.system': 'mongodb', 'db.name': 'shop', 'db.collection.name': 'notes', 'db.mongodb.collection': 'notes', 'db.operation.name': 'insertOne' } });
    const dataEdge = dataSpans.find((span) => span.parentSpanId === testSpan);
    expect(dataEdge?.service).toBe('tessera-graphql-gateway');

    // An admin push fans out as apps.deployment.changed to every process: one trace across all five.
    const pushTrace = randomBytes(16).toString('hex');
    const pushed = await fetch(`${admin.baseUrl}${admin.app(appId, '/push')}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${admin.accessToken}`, 'content-type': 'application/zip', traceparent: `00-${pushTrace}-${testSpan}-01` },
      body: Buffer.from(zipText(distributedApp('dist', 'hola'))),
    });
    expect(pushed.status).toBe(204);
    const services = ['tessera-admin-api', 'tessera-graphql-gateway', 'tessera-function-runtime', 'tessera-sync-service', 'tessera-datastore'];
    await eventually(
      () => {
        expect(new Set(collector.trace(pushTrace).map((span) => span.service))).toEqual(new Set(services));
        expectLinked(collector.trace(pushTrace), testSpan);
      },
      { timeoutMs: 15_000 },
    );
  });
  describe('faults', () => {
    const sum = (gateway: string, token: string) => callFunction(gateway, clientAppId, token, 'sum', [1, 2]);
    const timed = async <T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> => {
      const started = Date.now();
      const result = await work();
      return { result, ms: Date.now() - started };
    };

    it('serves a stream of calls from the surviving runtime when one of two is killed; none hangs', async () => {
      const gateway = cluster.one('graphql-gateway').url;
      const user = await anonymousLogin(gateway, clientAppId);
      const [victim, survivor] = cluster.all('function-runtime');
      expect(survivor).toBeDefined();
      const outcomes: { status: number; ms: number; afterKill: boolean }[] = [];
      let killed = false;
      const worker = async (): Promise<void> => {
        while (outcomes.length < 80) {
          const afterKill = killed;
          const { result, ms } = await timed(() => sum(gateway, user.access_token));
          outcomes.push({ status: result.status, ms, afterKill });
        }
      };
      const workers = Promise.all([worker(), worker(), worker(), worker()]);
      await eventually(() => expect(outcomes.length).toBeGreaterThanOrEqual(20), { timeoutMs: 20_000 });
      await cluster.stopService(victim, 'SIGKILL');
      killed = true;
      await workers;
      // A call caught inside the killed replica fails at its deadline at the latest; every later one is served.
      for (const outcome of outcomes) expect(outcome.status === 200 || outcome.ms < 11_000).toBe(true);
      const late = outcomes.filter((outcome) => outcome.afterKill).slice(-20);
      expect(late.map((outcome) => outcome.status)).toEqual(late.map(() => 200));
    }, 60_000);

    it('drains the calls in flight when a runtime replica is stopped with SIGTERM: no call fails', async () => {
      const gateway = cluster.one('graphql-gateway').url;
      const user = await anonymousLogin(gateway, clientAppId);
      await cluster.startService('function-runtime');
      const [leaving] = cluster.all('function-runtime');
      const statuses: number[] = [];
      let stopped = false;
      const worker = async (): Promise<void> => {
        while (!stopped || statuses.length < 60) statuses.push((await sum(gateway, user.access_token)).status);
      };
      const workers = Promise.all([worker(), worker(), worker(), worker()]);
      await eventually(() => expect(statuses.length).toBeGreaterThanOrEqual(20), { timeoutMs: 20_000 });
      expect(await cluster.stopService(leaving)).toBe(0);
      stopped = true;
      await workers;
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
    }, 60_000);

    it('fails fast with NoResponder when no runtime replica is live, and recovers when one starts', async () => {
      const gateway = cluster.one('graphql-gateway').url;
      const user = await anonymousLogin(gateway, clientAppId);
      // SIGTERM drains and exits 0.
      for (const runtime of cluster.all('function-runtime')) expect(await cluster.stopService(runtime)).toBe(0);
      const { result, ms } = await timed(() => sum(gateway, user.access_token));
      expect(result.status).toBe(503);
      expect(result.body).toMatchObject({ error_code: 'NoResponder' });
      expect(ms).toBeLessThan(2_000);
      await cluster.startService('function-runtime');
      expect((await sum(gateway, user.access_token)).body).toEqual({ $numberInt: '3' });
    }, 60_000);

    it('reconnects every service after the NATS server restarts mid-stream; document changes in the stream survive it', async () => {
      const gateway = cluster.one('graphql-gateway').url;
      const user = await anonymousLogin(gateway, clientAppId);
      expect((await sum(gateway, user.access_token)).status).toBe(200);
      // The services created the DATASTORE_CHANGES stream at boot; a trigger-like consumer group reads it.
      const events = await JetStreamEvents.connect({ url: cluster.nats.url, connection: { reconnectTimeWait: 100 } });
      const handled: string[] = [];
      // Synthetic changes of an app that does not exist (the runtimes' triggers skip them); the stream also
      // carries the real changes the runtimes publish, which this consumer group leaves aside.
      const change = (n: number) => ({ appId: 'e2e-synthetic', service: 'mongodb-atlas', cluster: 'Cluster0', db: 'shop', coll: 'notes', operationType: 'insert' as const, documentKey: { _id: `note-${n}` }, resumeToken: { n: `${n}` } });
      try {
        await events.consume({ stream: 'DATASTORE_CHANGES', durable: 'e2e-triggers', subject: Subjects.DatastoreDocumentChanged, handler: (event) => void (event.appId === 'e2e-synthetic' && handled.push(event.documentKey['_id'] as string)) });
        for (const n of [1, 2, 3, 4, 5]) await events.publish(Subjects.DatastoreDocumentChanged, change(n), { messageId: `note-${n}`, retryForMs: 1_000 });
        await cluster.nats.restart();
        for (const n of [6, 7, 8, 9, 10]) await events.publish(Subjects.DatastoreDocumentChanged, change(n), { messageId: `note-${n}`, retryForMs: 20_000 });
        await eventually(async () => expect(await events.lag('DATASTORE_CHANGES', 'e2e-triggers')).toMatchObject({ pending: 0, ackPending: 0 }), { timeoutMs: 20_000, intervalMs: 200 });
        expect([...handled].sort()).toEqual(['note-1', 'note-10', 'note-2', 'note-3', 'note-4', 'note-5', 'note-6', 'note-7', 'note-8', 'note-9']);
      } finally {
        await events.close();
      }
      await eventually(async () => expect((await sum(gateway, user.access_token)).status).toBe(200), { timeoutMs: 20_000, intervalMs: 200 });
      // Readiness follows the broker connections: once every process is ready again, deploy events reach the runtime.
      await eventually(async () => {
        for (const process of cluster.processes.keys()) expect((await fetch(`${process.url}/readyz`)).status).toBe(200);
      }, { timeoutMs: 20_000, intervalMs: 200 });
      expect((await admin.push(appId, distributedApp('dist', 'salut'))).status).toBe(204);
      await eventually(async () => expect((await callFunction(gateway, clientAppId, user.access_token, 'greet', ['ada'])).body).toEqual({ greeting: 'salut, ada' }), { timeoutMs: 10_000 });
    }, 60_000);

    it('keeps serving data after the datastore service restarts: clients reconnect, nothing acknowledged is lost', async () => {
      const gateway = cluster.one('graphql-gateway').url;
      const user = await realmApp(gateway, clientAppId).logIn(Realm.Credentials.anonymous(false));
      const notes = user.mongoClient('mongodb-atlas').db('shop').collection<{ _id: unknown; owner_id: string; text: string }>('notes');
      await notes.insertOne({ owner_id: user.id, text: 'before the restart' });
      expect(await cluster.restartDatastore()).toBe(0);
      await notes.insertOne({ owner_id: user.id, text: 'after the restart' });
      expect((await notes.find({})).map((note) => note.text)).toEqual(['before the restart', 'after the restart']);
      expect((await sum(gateway, (await anonymousLogin(gateway, clientAppId)).access_token)).status).toBe(200);
    }, 60_000);

    it('keeps client sessions across a gateway restart: tokens verify with the shared key', async () => {
      const old = cluster.one('graphql-gateway');
      const user = await anonymousLogin(old.url, clientAppId);
      expect(await cluster.stopService(old)).toBe(0);
      const gateway = (await cluster.startService('graphql-gateway')).url;
      expect((await sum(gateway, user.access_token)).body).toEqual({ $numberInt: '3' });
      const refreshed = await fetch(`${gateway}/api/client/v2.0/auth/session`, { method: 'POST', headers: { authorization: `Bearer ${user.refresh_token}` } });
      expect(refreshed.status).toBe(201);
      const { access_token: accessToken } = (await refreshed.json()) as { access_token: string };
      expect((await sum(gateway, accessToken)).status).toBe(200);
    }, 60_000);
  });
});

/** Every span's parent is the caller's span or another span of the same trace: one connected tree. */
function expectLinked(spans: CollectedSpan[], rootParent: string): void {
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) expect(span.parentSpanId === rootParent || ids.has(span.parentSpanId ?? ''), `${span.service}: ${span.name} has an unknown parent`).toBe(true);
}
