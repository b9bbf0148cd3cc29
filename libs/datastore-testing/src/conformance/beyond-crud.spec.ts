/**
 * Regression cases for what the runs of mongodb/specifications' sessions, transactions, run-command and
 * change-streams suites found (README.md, "Beyond CRUD"): unified-format files of our own, cut down from
 * those suites' cases, run through the driver against the wire server.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wireTarget } from './targets';
import { type CaseResult, formatResult, runConformance } from './unified-runner';

type Fixture = Record<string, unknown>;

function writeFixtures(files: Record<string, Fixture>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-beyond-crud-'));
  for (const [name, file] of Object.entries(files)) writeFileSync(join(dir, `${name}.json`), JSON.stringify(file));
  return dir;
}

const db = 'beyond-crud';

function entities(extra: Fixture[] = []): Fixture[] {
  return [
    { client: { id: 'client0', observeEvents: ['commandStartedEvent'] } },
    { database: { id: 'db0', client: 'client0', databaseName: db } },
    { collection: { id: 'coll0', database: 'db0', collectionName: 'coll0' } },
    ...extra,
  ];
}

/** Read concern snapshot outside a transaction: reads only (sessions/snapshot-sessions-unsupported-ops). */
function snapshotRefusals(): Fixture {
  return {
    description: 'snapshot refusals',
    schemaVersion: '1.0',
    createEntities: entities([{ session: { id: 'snap', client: 'client0', sessionOptions: { snapshot: true } } }]),
    initialData: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1, x: 11 }] }],
    tests: [
      {
        description: 'a write in a snapshot session is refused by the server',
        operations: [
          { name: 'insertOne', object: 'coll0', arguments: { session: 'snap', document: { _id: 2 } }, expectError: { isClientError: false, errorCode: 72 } },
        ],
        expectEvents: [{ client: 'client0', events: [{ commandStartedEvent: { command: { insert: 'coll0', readConcern: { level: 'snapshot', atClusterTime: { $$exists: false } } } } }] }],
        outcome: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1, x: 11 }] }],
      },
      {
        description: 'a catalog listing in a snapshot session is refused by the server',
        operations: [{ name: 'listCollections', object: 'db0', arguments: { session: 'snap' }, expectError: { isClientError: false, errorCodeName: 'InvalidOptions' } }],
      },
    ],
  };
}

/** Snapshot sessions and a transaction's snapshot (sessions/snapshot-sessions, transactions/isolation). */
function snapshotReads(): Fixture {
  return {
    description: 'snapshot reads',
    schemaVersion: '1.3',
    createEntities: entities([
      { session: { id: 'snap', client: 'client0', sessionOptions: { snapshot: true } } },
      { session: { id: 'session0', client: 'client0' } },
      { session: { id: 'session1', client: 'client0' } },
    ]),
    initialData: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1, x: 11 }, { _id: 2, x: 11 }] }],
    tests: [
      {
        description: 'a snapshot session reads at the time of its first read, later ones sending it back',
        operations: [
          { name: 'find', object: 'coll0', arguments: { session: 'snap', filter: { _id: 1 } }, expectResult: [{ _id: 1, x: 11 }] },
          { name: 'updateOne', object: 'coll0', arguments: { filter: { _id: 1 }, update: { $inc: { x: 1 } } } },
          { name: 'insertOne', object: 'coll0', arguments: { document: { _id: 3, x: 33 } } },
          { name: 'find', object: 'coll0', arguments: { session: 'snap', filter: {} }, expectResult: [{ _id: 1, x: 11 }, { _id: 2, x: 11 }] },
          { name: 'distinct', object: 'coll0', arguments: { session: 'snap', fieldName: 'x', filter: {} }, expectResult: [11] },
          { name: 'countDocuments', object: 'coll0', arguments: { session: 'snap', filter: {} }, expectResult: 2 },
          { name: 'find', object: 'coll0', arguments: { filter: {} }, expectResult: [{ _id: 1, x: 12 }, { _id: 2, x: 11 }, { _id: 3, x: 33 }] },
        ],
        expectEvents: [
          {
            client: 'client0',
            events: [
              { commandStartedEvent: { commandName: 'find', command: { readConcern: { level: 'snapshot', atClusterTime: { $$exists: false } } } } },
              { commandStartedEvent: { commandName: 'update' } },
              { commandStartedEvent: { commandName: 'insert' } },
              { commandStartedEvent: { commandName: 'find', command: { readConcern: { level: 'snapshot', atClusterTime: { $$exists: true } } } } },
              { commandStartedEvent: { commandName: 'distinct', command: { readConcern: { level: 'snapshot', atClusterTime: { $$exists: true } } } } },
              { commandStartedEvent: { commandName: 'aggregate', command: { readConcern: { level: 'snapshot', atClusterTime: { $$exists: true } } } } },
              { commandStartedEvent: { commandName: 'find', command: { readConcern: { $$exists: false } } } },
            ],
          },
        ],
      },
      {
        description: 'a transaction does not see what another one committed after it started',
        operations: [
          { object: 'session0', name: 'startTransaction' },
          { object: 'session1', name: 'startTransaction' },
          { object: 'coll0', name: 'insertOne', arguments: { session: 'session0', document: { _id: 3 } } },
          { object: 'coll0', name: 'find', arguments: { session: 'session1', filter: { _id: 3 } }, expectResult: [] },
          { object: 'session0', name: 'commitTransaction' },
          { object: 'coll0', name: 'find', arguments: { session: 'session1', filter: { _id: 3 } }, expectResult: [] },
          { object: 'coll0', name: 'find', arguments: { filter: { _id: 3 } }, expectResult: [{ _id: 3 }] },
          { object: 'session1', name: 'commitTransaction' },
        ],
      },
    ],
  };
}

/** runCursorCommand's getMore options (run-command/runCursorCommand) and the direct-connection $readPreference. */
function commandCursors(): Fixture {
  return {
    description: 'command cursors',
    schemaVersion: '1.9',
    createEntities: entities(),
    initialData: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1 }, { _id: 2 }, { _id: 3 }] }],
    tests: [
      {
        description: 'the getMore carries the maxTimeMS given, and the server refuses it for a cursor that does not await data',
        operations: [
          {
            name: 'runCursorCommand',
            object: 'db0',
            arguments: { commandName: 'find', command: { find: 'coll0', batchSize: 1 }, maxTimeMS: 300 },
            expectError: { errorCodeName: 'BadValue', errorContains: 'non-awaitData' },
          },
        ],
        expectEvents: [
          {
            client: 'client0',
            // The driver closes the cursor after the failed getMore (killCursors).
            ignoreExtraEvents: true,
            events: [
              { commandStartedEvent: { commandName: 'find', command: { find: 'coll0', maxTimeMS: { $$exists: false } } } },
              { commandStartedEvent: { commandName: 'getMore', command: { collection: 'coll0', maxTimeMS: 300 } } },
            ],
          },
        ],
      },
      {
        description: 'a command with the default read preference carries no $readPreference',
        operations: [{ name: 'runCommand', object: 'db0', arguments: { commandName: 'ping', command: { ping: 1 } }, expectResult: { ok: 1 } }],
        expectEvents: [{ client: 'client0', events: [{ commandStartedEvent: { command: { ping: 1, $readPreference: { $$exists: false } } } }] }],
      },
    ],
  };
}

/** withTransaction's callback errors reach it (transactions-convenient-api/callback-retry), and events are the commands as sent. */
function transactions(): Fixture {
  return {
    description: 'transactions',
    schemaVersion: '1.3',
    createEntities: entities([
      { client: { id: 'client1', uriOptions: { readConcernLevel: 'local', w: 1 }, observeEvents: ['commandStartedEvent'] } },
      { database: { id: 'db1', client: 'client1', databaseName: db } },
      { collection: { id: 'coll1', database: 'db1', collectionName: 'coll0' } },
      { session: { id: 'session1', client: 'client1' } },
    ]),
    initialData: [{ collectionName: 'coll0', databaseName: db, documents: [] }],
    tests: [
      {
        description: 'a duplicate key in the callback ends withTransaction with E11000, after an abort',
        operations: [
          {
            name: 'withTransaction',
            object: 'session1',
            arguments: {
              callback: [
                { name: 'insertOne', object: 'coll1', arguments: { session: 'session1', document: { _id: 1 } } },
                { name: 'insertOne', object: 'coll1', arguments: { session: 'session1', document: { _id: 1 } }, expectError: { errorLabelsOmit: ['TransientTransactionError'] } },
              ],
            },
            expectError: { errorLabelsOmit: ['TransientTransactionError', 'UnknownTransactionCommitResult'], errorContains: 'E11000' },
          },
        ],
        expectEvents: [
          {
            client: 'client1',
            events: [
              { commandStartedEvent: { commandName: 'insert' } },
              { commandStartedEvent: { commandName: 'insert' } },
              { commandStartedEvent: { commandName: 'abortTransaction' } },
            ],
          },
        ],
        outcome: [{ collectionName: 'coll0', databaseName: db, documents: [] }],
      },
      {
        description: 'the second transaction of a session reads after the first one commit, the first one without afterClusterTime',
        operations: [
          { object: 'session1', name: 'startTransaction' },
          { object: 'coll1', name: 'insertOne', arguments: { session: 'session1', document: { _id: 1 } } },
          { object: 'session1', name: 'commitTransaction' },
          { object: 'session1', name: 'startTransaction' },
          { object: 'coll1', name: 'insertOne', arguments: { session: 'session1', document: { _id: 2 } } },
          { object: 'session1', name: 'abortTransaction' },
        ],
        expectEvents: [
          {
            client: 'client1',
            events: [
              { commandStartedEvent: { commandName: 'insert', command: { readConcern: { level: 'local' } } } },
              { commandStartedEvent: { commandName: 'commitTransaction' } },
              { commandStartedEvent: { commandName: 'insert', command: { readConcern: { level: 'local', afterClusterTime: { $$exists: true } } } } },
              { commandStartedEvent: { commandName: 'abortTransaction' } },
            ],
          },
        ],
        outcome: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1 }] }],
      },
    ],
  };
}

/** Change streams: invalidate events, a pipeline that drops the resume token, stages refused at open (change-streams/). */
function changeStreams(): Fixture {
  return {
    description: 'change streams',
    schemaVersion: '1.7',
    createEntities: entities([{ collection: { id: 'other', database: 'db0', collectionName: 'other' } }]),
    initialData: [{ collectionName: 'coll0', databaseName: db, documents: [] }],
    tests: [
      {
        description: 'a collection dropped ends its stream with drop, then invalidate',
        operations: [
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [] }, saveResultAsEntity: 'stream0' },
          { name: 'dropCollection', object: 'db0', arguments: { collection: 'coll0' } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'drop', ns: { db, coll: 'coll0' } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'invalidate' } },
        ],
      },
      {
        description: 'a collection renamed ends its stream with rename, then invalidate',
        operations: [
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [] }, saveResultAsEntity: 'stream0' },
          { name: 'rename', object: 'coll0', arguments: { to: 'renamed' } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'rename', ns: { db, coll: 'coll0' }, to: { db, coll: 'renamed' } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'invalidate' } },
        ],
      },
      {
        description: 'a pipeline that projects out the resume token ends the stream with ChangeStreamFatalError',
        operations: [
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [{ $project: { _id: 0 } }] }, saveResultAsEntity: 'stream0' },
          { name: 'insertOne', object: 'coll0', arguments: { document: { _id: 1 } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectError: { errorCode: 280, errorCodeName: 'ChangeStreamFatalError', errorLabelsContain: ['NonResumableChangeStreamError'] } },
        ],
      },
      {
        description: "an update's description names array elements, shortened arrays and ambiguous paths as MongoDB's delta does",
        operations: [
          { name: 'insertOne', object: 'coll0', arguments: { document: { _id: 1, a: [{ '1': 1 }], array: ['foo', { a: 'bar' }, 1, 2, 3] } } },
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [], showExpandedEvents: true }, saveResultAsEntity: 'stream0' },
          { name: 'updateOne', object: 'coll0', arguments: { filter: { _id: 1 }, update: { $set: { 'a.0.1': 2 } } } },
          { name: 'updateOne', object: 'coll0', arguments: { filter: { _id: 1 }, update: [{ $set: { array: ['foo', { a: 'bar' }] } }] } },
          {
            name: 'iterateUntilDocumentOrError',
            object: 'stream0',
            expectResult: { operationType: 'update', updateDescription: { updatedFields: { 'a.0.1': 2 }, removedFields: [], truncatedArrays: [], disambiguatedPaths: { 'a.0.1': ['a', { $$type: 'int' }, '1'] } } },
          },
          {
            name: 'iterateUntilDocumentOrError',
            object: 'stream0',
            expectResult: { operationType: 'update', updateDescription: { updatedFields: {}, removedFields: [], truncatedArrays: [{ field: 'array', newSize: 2 }], disambiguatedPaths: {} } },
          },
        ],
      },
      {
        description: 'an unknown stage is refused when the stream opens, a stage change streams do not allow too',
        operations: [
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [{ $unsupported: 'foo' }] }, expectError: { errorCode: 40324 } },
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [{ $group: { _id: null } }] }, expectError: { errorCodeName: 'IllegalOperation' } },
        ],
      },
    ],
  };
}

/** Expanded events and changeStreamPreAndPostImages (change-streams-showExpandedEvents, -pre_and_post_images). */
function expandedEvents(): Fixture {
  return {
    description: 'expanded events',
    schemaVersion: '1.7',
    createEntities: entities([{ collection: { id: 'off', database: 'db0', collectionName: 'imagesOff' } }]),
    initialData: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1 }] }],
    tests: [
      {
        description: 'index changes, collMod and a rename are reported with showExpandedEvents',
        operations: [
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [], showExpandedEvents: true }, saveResultAsEntity: 'stream0' },
          { name: 'createIndex', object: 'coll0', arguments: { keys: { x: 1 }, name: 'x_1' } },
          { name: 'dropIndex', object: 'coll0', arguments: { name: 'x_1' } },
          { name: 'runCommand', object: 'db0', arguments: { commandName: 'collMod', command: { collMod: 'coll0' } } },
          { name: 'rename', object: 'coll0', arguments: { to: 'renamedExpanded' } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'createIndexes', collectionUUID: { $$exists: true }, operationDescription: { indexes: [{ v: 2, key: { x: 1 }, name: 'x_1' }] } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'dropIndexes', operationDescription: { $$exists: true } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'modify' } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'rename', to: { db, coll: 'renamedExpanded' }, operationDescription: { to: { db, coll: 'renamedExpanded' } } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'invalidate' } },
        ],
      },
      {
        description: 'with changeStreamPreAndPostImages disabled, whenAvailable gives null and required fails',
        operations: [
          { name: 'runCommand', object: 'db0', arguments: { commandName: 'collMod', command: { collMod: 'coll0', changeStreamPreAndPostImages: { enabled: false } } } },
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [], fullDocument: 'whenAvailable', fullDocumentBeforeChange: 'whenAvailable' }, saveResultAsEntity: 'stream0' },
          { name: 'createChangeStream', object: 'coll0', arguments: { pipeline: [], fullDocumentBeforeChange: 'required' }, saveResultAsEntity: 'stream1' },
          { name: 'updateOne', object: 'coll0', arguments: { filter: { _id: 1 }, update: { $set: { x: 1 } } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'update', fullDocument: null, fullDocumentBeforeChange: null } },
          { name: 'iterateUntilDocumentOrError', object: 'stream1', expectError: { isClientError: false } },
          { name: 'runCommand', object: 'db0', arguments: { commandName: 'collMod', command: { collMod: 'coll0', changeStreamPreAndPostImages: { enabled: true } } } },
          { name: 'updateOne', object: 'coll0', arguments: { filter: { _id: 1 }, update: { $set: { x: 2 } } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'update', fullDocument: { _id: 1, x: 2 }, fullDocumentBeforeChange: { _id: 1, x: 1 } } },
        ],
      },
      {
        description: 'a collection created with changeStreamPreAndPostImages disabled gives no images, and modifyCollection enables them',
        operations: [
          { name: 'dropCollection', object: 'db0', arguments: { collection: 'imagesOff' } },
          { name: 'createCollection', object: 'db0', arguments: { collection: 'imagesOff', changeStreamPreAndPostImages: { enabled: false } } },
          { name: 'createChangeStream', object: 'off', arguments: { pipeline: [], fullDocumentBeforeChange: 'whenAvailable' }, saveResultAsEntity: 'stream0' },
          { name: 'insertOne', object: 'off', arguments: { document: { _id: 1 } } },
          { name: 'deleteOne', object: 'off', arguments: { filter: { _id: 1 } } },
          { name: 'modifyCollection', object: 'db0', arguments: { collection: 'imagesOff', changeStreamPreAndPostImages: { enabled: true } } },
          { name: 'insertOne', object: 'off', arguments: { document: { _id: 2 } } },
          { name: 'deleteOne', object: 'off', arguments: { filter: { _id: 2 } } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'insert' } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'delete', fullDocumentBeforeChange: null } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'insert' } },
          { name: 'iterateUntilDocumentOrError', object: 'stream0', expectResult: { operationType: 'delete', fullDocumentBeforeChange: { _id: 2 } } },
        ],
      },
    ],
  };
}

/** DDL, write conflicts and write concerns in transactions (transactions/create-*, errors, commit). */
function transactionWrites(): Fixture {
  return {
    description: 'transaction writes',
    schemaVersion: '1.3',
    createEntities: entities([
      { session: { id: 'session0', client: 'client0' } },
      { session: { id: 'session1', client: 'client0' } },
    ]),
    initialData: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1, x: 1 }, { _id: 2, x: 2 }] }],
    tests: [
      {
        description: 'a collection and an index created in a transaction are seen once it commits',
        operations: [
          { object: 'db0', name: 'dropCollection', arguments: { collection: 'fresh' } },
          { object: 'session0', name: 'startTransaction' },
          { object: 'db0', name: 'createCollection', arguments: { session: 'session0', collection: 'fresh' } },
          { object: 'db0', name: 'runCommand', arguments: { session: 'session0', commandName: 'createIndexes', command: { createIndexes: 'fresh', indexes: [{ key: { x: 1 }, name: 'x_1' }] } } },
          { object: 'testRunner', name: 'assertCollectionNotExists', arguments: { databaseName: db, collectionName: 'fresh' } },
          { object: 'session0', name: 'commitTransaction' },
          { object: 'testRunner', name: 'assertIndexExists', arguments: { databaseName: db, collectionName: 'fresh', indexName: 'x_1' } },
        ],
      },
      {
        description: 'a collection an aborted transaction created by inserting is never seen',
        operations: [
          { object: 'session0', name: 'startTransaction' },
          { object: 'db0', name: 'runCommand', arguments: { session: 'session0', commandName: 'insert', command: { insert: 'implicit', documents: [{ _id: 1 }] } } },
          { object: 'testRunner', name: 'assertCollectionNotExists', arguments: { databaseName: db, collectionName: 'implicit' } },
          { object: 'session0', name: 'abortTransaction' },
          { object: 'testRunner', name: 'assertCollectionNotExists', arguments: { databaseName: db, collectionName: 'implicit' } },
        ],
      },
      {
        description: 'an index on a collection that existed before the transaction is refused in it',
        operations: [
          { object: 'session0', name: 'startTransaction' },
          { object: 'coll0', name: 'createIndex', arguments: { session: 'session0', keys: { x: 1 }, name: 'x_1' }, expectError: { errorCodeName: 'OperationNotSupportedInTransaction' } },
          { object: 'session0', name: 'abortTransaction' },
        ],
      },
      {
        description: 'a second transaction writing a document the first one changed fails with WriteConflict; one writing another document waits',
        operations: [
          { object: 'session0', name: 'startTransaction' },
          { object: 'coll0', name: 'updateOne', arguments: { session: 'session0', filter: { _id: 1 }, update: { $set: { x: 10 } } } },
          { object: 'session1', name: 'startTransaction' },
          {
            object: 'coll0',
            name: 'updateOne',
            arguments: { session: 'session1', filter: { x: 1 }, update: { $set: { x: 11 } } },
            expectError: { errorCodeName: 'WriteConflict', errorLabelsContain: ['TransientTransactionError'] },
          },
          { object: 'session0', name: 'commitTransaction' },
          { object: 'session1', name: 'commitTransaction', expectError: { errorCodeName: 'NoSuchTransaction', errorLabelsContain: ['TransientTransactionError'] } },
        ],
        outcome: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1, x: 10 }, { _id: 2, x: 2 }] }],
      },
      {
        description: 'a transaction writing a document committed after its snapshot fails with WriteConflict; its other writes are undone',
        operations: [
          { object: 'session0', name: 'startTransaction' },
          { object: 'coll0', name: 'find', arguments: { session: 'session0', filter: { _id: 2 } }, expectResult: [{ _id: 2, x: 2 }] },
          { object: 'coll0', name: 'updateOne', arguments: { filter: { _id: 2 }, update: { $set: { x: 20 } } } },
          { object: 'coll0', name: 'updateOne', arguments: { session: 'session0', filter: { _id: 1 }, update: { $set: { x: 10 } } } },
          {
            object: 'coll0',
            name: 'updateOne',
            arguments: { session: 'session0', filter: { _id: 2 }, update: { $inc: { x: 1 } } },
            expectError: { errorCodeName: 'WriteConflict', errorLabelsContain: ['TransientTransactionError'] },
          },
          { object: 'session0', name: 'commitTransaction', expectError: { errorCodeName: 'NoSuchTransaction', errorLabelsContain: ['TransientTransactionError'] } },
        ],
        outcome: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1, x: 1 }, { _id: 2, x: 20 }] }],
      },
      {
        description: 'a commit asking more members than the replica set has is done, with a write concern error',
        operations: [
          { object: 'session0', name: 'startTransaction', arguments: { writeConcern: { w: 3 } } },
          { object: 'coll0', name: 'insertOne', arguments: { session: 'session0', document: { _id: 3 } } },
          { object: 'session0', name: 'commitTransaction', expectError: { errorCode: 100, errorLabelsOmit: ['TransientTransactionError', 'UnknownTransactionCommitResult'] } },
        ],
        outcome: [{ collectionName: 'coll0', databaseName: db, documents: [{ _id: 1, x: 1 }, { _id: 2, x: 2 }, { _id: 3 }] }],
      },
    ],
  };
}

describe('beyond CRUD: sessions, transactions, command cursors and change streams on the wire server', () => {
  let target: Awaited<ReturnType<typeof wireTarget>>;
  beforeAll(async () => {
    target = await wireTarget();
  });
  afterAll(async () => {
    await target.close();
  });

  const notPassed = (results: CaseResult[]) => results.filter((r) => r.status !== 'passed').map(formatResult);

  it('refuses read concern snapshot for writes and catalog listings outside a transaction', async () => {
    expect(notPassed(await runConformance(writeFixtures({ snapshot: snapshotRefusals() }), target))).toEqual([]);
  });

  it('reads a snapshot session and a transaction at their snapshot', async () => {
    expect(notPassed(await runConformance(writeFixtures({ snapshots: snapshotReads() }), target))).toEqual([]);
  });

  it('sends getMore options of command cursors and no $readPreference to a replica set primary', async () => {
    expect(notPassed(await runConformance(writeFixtures({ cursors: commandCursors() }), target))).toEqual([]);
  });

  it('passes withTransaction its callback errors and records commands as they were sent', async () => {
    expect(notPassed(await runConformance(writeFixtures({ transactions: transactions() }), target))).toEqual([]);
  });

  it('ends change streams as MongoDB does: invalidate, a lost resume token, stages refused at open', async () => {
    expect(notPassed(await runConformance(writeFixtures({ streams: changeStreams() }), target))).toEqual([]);
  });

  it('runs DDL in transactions, reports write conflicts at once and unsatisfiable write concerns', async () => {
    expect(notPassed(await runConformance(writeFixtures({ writes: transactionWrites() }), target))).toEqual([]);
  });

  it('reports the catalog\'s changes with showExpandedEvents and honours changeStreamPreAndPostImages', async () => {
    expect(notPassed(await runConformance(writeFixtures({ expanded: expandedEvents() }), target))).toEqual([]);
  });

  it('fails a case that expects an error the server does not raise', async () => {
    const file = snapshotRefusals() as { tests: { operations: { arguments?: Record<string, unknown> }[] }[] };
    const [write] = file.tests;
    const args = write.operations[0].arguments;
    if (args) delete args.session;
    const results = await runConformance(writeFixtures({ snapshot: file }), target);
    expect(results[0].status).toBe('failed');
    expect(results[0].reason).toMatch(/expected an error/);
  });
});
