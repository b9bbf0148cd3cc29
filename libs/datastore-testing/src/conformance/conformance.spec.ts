import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedMaterial, sharedMaterialSkipReason } from '@tessera/testing';
import { embeddedTarget, mongodbTarget, wireTarget } from './targets';
import { type ObservedEvent, matchEvents } from './events';
import { type CaseResult, formatResult, match, runConformance, summarize } from './unified-runner';

const suite = sharedMaterial('conformance/crud') ?? '';

// Skipped only where the workspace's shared conformance suite is absent: ${sharedMaterialSkipReason('conformance/crud')}.
describe.skipIf(!suite)(`the unified-format CRUD conformance suite${suite ? '' : ` (skipped: ${sharedMaterialSkipReason('conformance/crud')})`}`, () => {
  it('passes every applicable case on the embedded engine', async () => {
    const results = await runConformance(suite, embeddedTarget());
    const summary = summarize(results);
    const failures = results.filter((r) => r.status === 'failed').map(formatResult);
    expect(failures).toEqual([]);
    expect(summary.passed).toBeGreaterThanOrEqual(90);
    for (const skipped of results.filter((r) => r.status === 'skipped')) expect(skipped.reason).toBeTruthy();
  });

  it('passes every applicable case through the driver against the datastore wire server', async () => {
    const target = await wireTarget();
    try {
      const results = await runConformance(suite, target);
      const failures = results.filter((r) => r.status === 'failed').map(formatResult);
      expect(failures).toEqual([]);
      expect(summarize(results).passed).toBeGreaterThanOrEqual(90);
    } finally {
      await target.close();
    }
  }, 180_000);

  it('reports a case whose expected outcome the engine does not produce as failed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-conformance-broken-'));
    const file = JSON.parse(readFileSync(join(suite, 'updateOne.json'), 'utf8')) as { tests: { outcome?: { documents: { x: number }[] }[] }[] };
    const outcome = file.tests[1].outcome?.[0];
    if (outcome) outcome.documents[0].x = 999;
    writeFileSync(join(dir, 'updateOne.json'), JSON.stringify(file));
    const summary = summarize(await runConformance(dir, embeddedTarget()));
    expect(summary.failed).toBe(1);
    expect(summary.line).toMatch(/\d+ passed, 1 failed, \d+ skipped/);
  });
});

// Needs a MongoDB deployment: none runs here, so this is skipped unless MONGODB_URI points at one.
describe.skipIf(!process.env.MONGODB_URI)('the conformance suite on MongoDB (skipped: MONGODB_URI is not set)', () => {
  it('passes every applicable case', async () => {
    const uri = process.env.MONGODB_URI as string;
    const { MongoClient } = await import('mongodb');
    const probe = new MongoClient(uri);
    const info = await probe.db('admin').command({ buildInfo: 1 });
    await probe.close();
    const results = await runConformance(suite, mongodbTarget(uri, String(info.version), 'replicaset'));
    expect(results.filter((r) => r.status === 'failed').map(formatResult)).toEqual([]);
  });
});

describe('unified-format matching', () => {
  it('allows extra fields only in root-level documents', () => {
    expect(match({ a: 1, b: 2 }, { a: 1 }, true)).toBeUndefined();
    expect(match({ x: { a: 1, b: 2 } }, { x: { a: 1 } }, true)).toMatch(/unexpected fields b/);
  });

  it('treats numbers of any type as equal by value and honours $$unsetOrMatches', () => {
    expect(match(1, 1.0, true)).toBeUndefined();
    expect(match(undefined, { $$unsetOrMatches: { a: 1 } }, true)).toBeUndefined();
    expect(match({ a: 2 }, { $$unsetOrMatches: { a: 1 } }, true)).toMatch(/expected 1/);
  });
});

/** A unified-format file of our own whose cases check the commands the driver sends and the replies. */
function eventsFixture(): Record<string, unknown> {
  const docs = [1, 2, 3, 4, 5].map((i) => ({ _id: i, x: i * 10 }));
  return {
    description: 'events',
    schemaVersion: '1.0',
    createEntities: [
      { client: { id: 'client0', observeEvents: ['commandStartedEvent', 'commandSucceededEvent', 'commandFailedEvent'] } },
      { database: { id: 'db0', client: 'client0', databaseName: 'conformance-events' } },
      { collection: { id: 'items', database: 'db0', collectionName: 'items' } },
    ],
    initialData: [{ collectionName: 'items', databaseName: 'conformance-events', documents: docs }],
    tests: [
      {
        description: 'find in batches of two',
        operations: [{ object: 'items', name: 'find', arguments: { filter: {}, sort: { _id: 1 }, batchSize: 2, comment: 'paged' }, expectResult: docs }],
        expectEvents: [
          {
            client: 'client0',
            events: [
              { commandStartedEvent: { commandName: 'find', databaseName: 'conformance-events', command: { find: 'items', filter: {}, sort: { _id: 1 }, batchSize: 2, comment: 'paged' } } },
              { commandSucceededEvent: { commandName: 'find', reply: { cursor: { id: { $$type: 'long' }, ns: 'conformance-events.items', firstBatch: docs.slice(0, 2) } } } },
              { commandStartedEvent: { commandName: 'getMore', command: { getMore: { $$type: 'long' }, collection: 'items', batchSize: 2, comment: 'paged' } } },
              { commandSucceededEvent: { commandName: 'getMore', reply: { cursor: { id: { $$type: 'long' }, ns: 'conformance-events.items', nextBatch: docs.slice(2, 4) } } } },
              { commandStartedEvent: { commandName: 'getMore', command: { getMore: { $$type: 'long' }, collection: 'items', batchSize: 2 } } },
              { commandSucceededEvent: { commandName: 'getMore', reply: { cursor: { id: 0, ns: 'conformance-events.items', nextBatch: docs.slice(4) } } } },
            ],
          },
        ],
      },
      {
        description: 'database-level aggregate from $documents',
        operations: [{ object: 'db0', name: 'aggregate', arguments: { pipeline: [{ $documents: [{ a: 1 }, { a: 2 }] }, { $match: { a: 2 } }], let: { v: 1 } }, expectResult: [{ a: 2 }] }],
        expectEvents: [
          {
            client: 'client0',
            events: [
              { commandStartedEvent: { command: { aggregate: 1, pipeline: [{ $documents: [{ a: 1 }, { a: 2 }] }, { $match: { a: 2 } }], let: { v: 1 }, cursor: {} } } },
              { commandSucceededEvent: { reply: { cursor: { id: 0, ns: 'conformance-events.$cmd.aggregate', firstBatch: [{ a: 2 }] } } } },
            ],
          },
        ],
      },
      {
        description: 'a refused stage fails the command',
        operations: [{ object: 'items', name: 'aggregate', arguments: { pipeline: [{ $nope: 1 }] }, expectError: { errorCode: 40324 } }],
        expectEvents: [
          {
            client: 'client0',
            events: [{ commandStartedEvent: { command: { aggregate: 'items', pipeline: [{ $nope: 1 }] } } }, { commandFailedEvent: { commandName: 'aggregate', databaseName: 'conformance-events' } }],
          },
        ],
      },
    ],
  };
}

function writeFixture(file: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-conformance-events-'));
  writeFileSync(join(dir, 'events.json'), JSON.stringify(file));
  return dir;
}

type FixtureTest = { expectEvents: { events: Record<string, { command?: Record<string, unknown>; reply?: unknown }>[] }[] };

describe('expectEvents through the driver against the wire server', () => {
  let target: Awaited<ReturnType<typeof wireTarget>>;
  beforeAll(async () => {
    target = await wireTarget();
  });
  afterAll(async () => {
    await target.close();
  });

  const failures = (results: CaseResult[]) => results.filter((r) => r.status !== 'passed').map(formatResult);

  it('passes when the commands sent and the replies are the expected ones', async () => {
    const results = await runConformance(writeFixture(eventsFixture()), target);
    expect(failures(results)).toEqual([]);
    expect(results.map((r) => r.unchecked)).toEqual([undefined, undefined, undefined]);
  });

  it('fails a case whose commands differ from the expected ones', async () => {
    const file = eventsFixture();
    const [paged, documents, refused] = file.tests as FixtureTest[];
    refused.expectEvents[0].events[1] = { commandSucceededEvent: {} };
    const started = paged.expectEvents[0].events[0].commandStartedEvent;
    if (started.command) started.command.batchSize = 3;
    const aggregate = documents.expectEvents[0].events[0].commandStartedEvent;
    if (aggregate.command) aggregate.command.let = { v: 2 };
    const results = await runConformance(writeFixture(file), target);
    expect(results.map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
    expect(results[2].reason).toMatch(/expected commandSucceededEvent, got commandFailedEvent\(aggregate\)/);
    expect(results[0].reason).toMatch(/events of client0\[0\]\.command\.batchSize: expected 3/);
    expect(results[1].reason).toMatch(/command\.let\.v: expected 2/);
  });

  it('fails a case whose replies or number of events differ', async () => {
    const file = eventsFixture();
    const [paged, documents] = file.tests as FixtureTest[];
    paged.expectEvents[0].events[3].commandSucceededEvent.reply = { cursor: { nextBatch: [{ _id: 3, x: 30 }] } };
    documents.expectEvents[0].events.push({ commandStartedEvent: { command: { getMore: { $$type: 'long' } } } });
    const results = await runConformance(writeFixture(file), target);
    expect(results[0].reason).toMatch(/reply\.cursor\.nextBatch: expected 1 elements, got 2/);
    expect(results[1].reason).toMatch(/expected 3 events, got 2: commandStartedEvent\(aggregate\), commandSucceededEvent\(aggregate\)/);
  });

  it('runs the same cases on the embedded engine, saying the events are not checked there', async () => {
    const results = await runConformance(writeFixture(eventsFixture()), embeddedTarget());
    expect(failures(results)).toEqual([]);
    for (const r of results) expect(r.unchecked?.join()).toMatch(/a driver emits them, and the embedded target calls the engine without one/);
  });
});

describe('matching command events', () => {
  const started = (command: Record<string, unknown>): ObservedEvent => ({ type: 'commandStartedEvent', event: { commandName: Object.keys(command)[0], databaseName: 'db', command } as never });

  it('allows extra fields in the command, not in its nested documents', () => {
    const observed = [started({ insert: 'c', documents: [{ _id: 1, x: 1 }], ordered: true, lsid: { id: 1 } })];
    expect(matchEvents(observed, { client: 'c0', events: [{ commandStartedEvent: { command: { insert: 'c', documents: [{ _id: 1, x: 1 }] } } }] })).toBeUndefined();
    expect(matchEvents(observed, { client: 'c0', events: [{ commandStartedEvent: { command: { insert: 'c', documents: [{ _id: 1 }] } } }] })).toMatch(/unexpected fields x/);
  });

  it('honours $$exists and $$unsetOrMatches in commands', () => {
    const observed = [started({ find: 'c', filter: {} })];
    expect(matchEvents(observed, { client: 'c0', events: [{ commandStartedEvent: { command: { find: 'c', allowDiskUse: { $$exists: false }, comment: { $$unsetOrMatches: 'x' } } } }] })).toBeUndefined();
    expect(matchEvents(observed, { client: 'c0', events: [{ commandStartedEvent: { command: { find: 'c', filter: { $$exists: false } } } }] })).toMatch(/filter: expected absent/);
  });

  it('tells event kinds and counts apart, and ignores extra events only when told to', () => {
    const observed = [started({ find: 'c' }), started({ getMore: 1 })];
    const first = [{ commandStartedEvent: { commandName: 'find' } }];
    expect(matchEvents(observed, { client: 'c0', events: first })).toMatch(/expected 1 events, got 2/);
    expect(matchEvents(observed, { client: 'c0', events: first, ignoreExtraEvents: true })).toBeUndefined();
    expect(matchEvents(observed, { client: 'c0', events: [{ commandSucceededEvent: {} }], ignoreExtraEvents: true })).toMatch(/expected commandSucceededEvent, got commandStartedEvent\(find\)/);
    expect(matchEvents(observed, { client: 'c0', eventType: 'cmap', events: [] })).toMatch(/not recorded/);
  });
});

/** A unified-format file of our own using sessions, a transaction, withTransaction and a change stream. */
function sessionsFixture(): Record<string, unknown> {
  return {
    description: 'sessions',
    schemaVersion: '1.3',
    createEntities: [
      { client: { id: 'client0', observeEvents: ['commandStartedEvent'] } },
      { database: { id: 'db0', client: 'client0', databaseName: 'conformance-sessions' } },
      { collection: { id: 'ledger', database: 'db0', collectionName: 'ledger' } },
      { session: { id: 'session0', client: 'client0' } },
    ],
    initialData: [{ collectionName: 'ledger', databaseName: 'conformance-sessions', documents: [{ _id: 1, amount: 5 }] }],
    tests: [
      {
        description: 'an aborted transaction leaves nothing behind, a committed one stays',
        operations: [
          { object: 'session0', name: 'startTransaction' },
          { object: 'ledger', name: 'insertOne', arguments: { session: 'session0', document: { _id: 2, amount: 7 } } },
          { object: 'testRunner', name: 'assertSessionTransactionState', arguments: { session: 'session0', state: 'in_progress' } },
          { object: 'session0', name: 'abortTransaction' },
          { object: 'session0', name: 'withTransaction', arguments: { callback: [{ object: 'ledger', name: 'insertOne', arguments: { session: 'session0', document: { _id: 3, amount: 9 } }, expectResult: { insertedId: 3 } }] } },
          { object: 'testRunner', name: 'assertSessionTransactionState', arguments: { session: 'session0', state: 'committed' } },
        ],
        expectEvents: [
          {
            client: 'client0',
            events: [
              { commandStartedEvent: { commandName: 'insert', command: { lsid: { $$sessionLsid: 'session0' }, txnNumber: 1, startTransaction: true, autocommit: false } } },
              { commandStartedEvent: { commandName: 'abortTransaction', databaseName: 'admin', command: { lsid: { $$sessionLsid: 'session0' }, txnNumber: 1 } } },
              { commandStartedEvent: { commandName: 'insert', command: { lsid: { $$sessionLsid: 'session0' }, txnNumber: 2, startTransaction: true } } },
              { commandStartedEvent: { commandName: 'commitTransaction', command: { lsid: { $$sessionLsid: 'session0' }, txnNumber: 2 } } },
            ],
          },
        ],
        outcome: [{ collectionName: 'ledger', databaseName: 'conformance-sessions', documents: [{ _id: 1, amount: 5 }, { _id: 3, amount: 9 }] }],
      },
      {
        description: 'a change stream reports an insert made after it opened',
        operations: [
          { object: 'ledger', name: 'createChangeStream', arguments: { pipeline: [] }, saveResultAsEntity: 'stream0' },
          { object: 'ledger', name: 'insertOne', arguments: { document: { _id: 4, amount: 1 } } },
          {
            object: 'stream0',
            name: 'iterateUntilDocumentOrError',
            expectResult: { operationType: 'insert', ns: { db: 'conformance-sessions', coll: 'ledger' }, documentKey: { _id: 4 }, fullDocument: { _id: 4, amount: 1 } },
          },
        ],
      },
      {
        description: 'the runner checks that a collection and an index exist',
        operations: [
          { object: 'ledger', name: 'createIndex', arguments: { keys: { amount: 1 }, name: 'by_amount' } },
          { object: 'testRunner', name: 'assertIndexExists', arguments: { databaseName: 'conformance-sessions', collectionName: 'ledger', indexName: 'by_amount' } },
          { object: 'testRunner', name: 'assertCollectionNotExists', arguments: { databaseName: 'conformance-sessions', collectionName: 'absent' } },
        ],
      },
    ],
  };
}

describe('sessions, transactions and change streams through the driver', () => {
  it('runs them against the wire server and fails what does not hold', async () => {
    const target = await wireTarget();
    try {
      const passing = await runConformance(writeFixture(sessionsFixture()), target);
      expect(passing.filter((r) => r.status !== 'passed').map(formatResult)).toEqual([]);

      const file = sessionsFixture() as { tests: { operations: { arguments?: Record<string, unknown> }[] }[] };
      const [transaction, stream, catalog] = file.tests;
      const stateCheck = transaction.operations[5].arguments;
      if (stateCheck) stateCheck.state = 'aborted';
      (stream.operations[2] as { expectResult?: Record<string, unknown> }).expectResult = { operationType: 'delete' };
      const indexCheck = catalog.operations[1].arguments;
      if (indexCheck) indexCheck.indexName = 'missing';
      const failing = await runConformance(writeFixture(file), target);
      expect(failing.map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
      expect(failing[0].reason).toMatch(/transaction state committed, expected aborted/);
      expect(failing[1].reason).toMatch(/operationType: expected "delete"/);
      expect(failing[2].reason).toMatch(/index missing .* does not exist/);
    } finally {
      await target.close();
    }
  });

  it('skips them on the embedded target, saying why', async () => {
    const results = await runConformance(writeFixture(sessionsFixture()), embeddedTarget());
    expect(results.map((r) => r.status)).toEqual(['skipped', 'skipped', 'skipped']);
    for (const r of results) expect(r.reason).toBeTruthy();
  });
});
