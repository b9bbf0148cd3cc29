/**
 * A function's sessions in the real sandbox over the in-memory data access: the order the host runs a
 * session's steps in, withTransaction's retries on a MongoDB driver's labelled errors, and the end of the call
 * ending what it left open.
 */
import { APP, makeRuntime } from './testing/runtime-fixture';

const TRADE = `exports = async () => {
  const client = context.services.get('mongodb-atlas');
  const session = client.startSession();
  const runs = { count: 0 };
  const result = await session.withTransaction(async () => {
    runs.count += 1;
    await client.db('bank').collection('accounts').insertOne({ n: runs.count }, { session });
    return 'done after ' + runs.count;
  });
  await session.endSession();
  return result;
};`;

describe('sessions of a function call', () => {
  const rt = makeRuntime();
  afterAll(() => rt.runtime.close());
  beforeEach(() => {
    rt.data.sessionLog.length = 0;
    rt.data.transactionFailures.length = 0;
  });

  it('opens the transaction with its first operation, commits it and ends the session, in order', async () => {
    rt.functions.deploy(APP, { trade: TRADE });
    expect((await rt.call('trade')).result).toBe('done after 1');
    expect(rt.data.sessionLog).toEqual(['begin', 'insertOne', 'commit', 'end']);
  });

  it('runs the callback again after a TransientTransactionError, as MongoDB drivers do', async () => {
    rt.functions.deploy(APP, { trade: TRADE });
    rt.data.transactionFailures.push({ at: 'operation', labels: ['TransientTransactionError'] });
    expect((await rt.call('trade')).result).toBe('done after 2');
    expect(rt.data.sessionLog).toEqual(['begin', 'insertOne', 'abort', 'begin', 'insertOne', 'commit', 'end']);
  });

  it('tries a commit again after UnknownTransactionCommitResult, and the whole transaction after a transient commit failure', async () => {
    rt.functions.deploy(APP, { trade: TRADE });
    rt.data.transactionFailures.push({ at: 'commit', labels: ['UnknownTransactionCommitResult'] }, { at: 'commit', labels: ['TransientTransactionError'] });
    expect((await rt.call('trade')).result).toBe('done after 2');
    expect(rt.data.sessionLog).toEqual(['begin', 'insertOne', 'commit', 'commit', 'begin', 'insertOne', 'commit', 'end']);
  });

  it('throws any other failure after aborting, without running the callback again', async () => {
    rt.functions.deploy(APP, {
      // The same trade, its failure caught and answered.
      trade: TRADE.replace('exports = async () => {', 'exports = async () => { try { return await (async () => {').replace(/\};$/, '})(); } catch (e) { return "failed: " + e.message; } };'),
    });
    rt.data.transactionFailures.push({ at: 'operation', labels: ['SomethingElse'] });
    expect((await rt.call('trade')).result).toBe('failed: injected SomethingElse');
    expect(rt.data.sessionLog).toEqual(['begin', 'insertOne', 'abort', 'end']);
  });

  it('ends the sessions a call leaves open, aborting their transactions', async () => {
    rt.functions.deploy(APP, {
      leave: `exports = async () => {
        const client = context.services.get('mongodb-atlas');
        const session = client.startSession();
        session.startTransaction();
        await client.db('bank').collection('accounts').insertOne({ n: 1 }, { session });
        return 'left';
      };`,
    });
    expect((await rt.call('leave')).result).toBe('left');
    expect(rt.data.sessionLog).toEqual(['begin', 'insertOne', 'end']);
  });
});
