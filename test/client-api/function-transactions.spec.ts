import type { AppConfig } from '@tessera/app-config';
import * as Realm from 'realm-web';
// The real process host: realm-web over HTTP, the function runtime's sandbox, the embedded datastore.
import { startTestHost, type TestHost } from '../support/test-host';

const db = "context.services.get('mongodb-atlas').db('bank')";

const functions: Record<string, string> = {
  seed: `exports = async () => {
    const accounts = ${db}.collection('accounts');
    await accounts.deleteMany({});
    await ${db}.collection('trades').deleteMany({});
    await accounts.insertMany([
      { _id: 'henry', owner: context.user.id, points: 42 },
      { _id: 'michelle', owner: context.user.id, points: 144 },
    ]);
  };`,
  state: `exports = async () => ({
    points: Object.fromEntries((await ${db}.collection('accounts').find({}).toArray()).map((a) => [a._id, a.points])),
    trades: await ${db}.collection('trades').count({}),
  });`,
  // The App Services docs' example, as written there: withTransaction, { session } on each operation, abort in
  // the catch and endSession in the finally.
  trade: `exports = async (from, to, amount, failAfterFirst) => {
    const client = context.services.get('mongodb-atlas');
    const accounts = client.db('bank').collection('accounts');
    const trades = client.db('bank').collection('trades');
    const session = client.startSession();
    try {
      await session.withTransaction(async () => {
        await accounts.updateOne({ _id: from }, { $inc: { points: -amount } }, { session });
        if (failAfterFirst) throw new Error('stopped halfway');
        await accounts.updateOne({ _id: to }, { $inc: { points: amount } }, { session });
        await trades.insertOne({ from, to, amount, owner: context.user.id }, { session });
      });
      return 'committed';
    } catch (err) {
      await session.abortTransaction();
      return 'aborted: ' + err.message;
    } finally {
      await session.endSession();
    }
  };`,
  isolation: `exports = async () => {
    const client = context.services.get('mongodb-atlas');
    const accounts = client.db('bank').collection('accounts');
    const session = client.startSession();
    session.startTransaction();
    await accounts.updateOne({ _id: 'henry' }, { $set: { points: 1000 } }, { session });
    const inside = (await accounts.findOne({ _id: 'henry' }, {}, { session })).points;
    const insideCursor = (await accounts.find({ _id: 'henry' }, {}, { session }).toArray())[0].points;
    const outside = (await accounts.findOne({ _id: 'henry' })).points;
    const inTransaction = session.inTransaction();
    await session.commitTransaction();
    const after = (await accounts.findOne({ _id: 'henry' })).points;
    await session.endSession();
    return { inside, insideCursor, outside, inTransaction, after, afterCommit: session.inTransaction() };
  };`,
  // A write the rules refuse fails; catching it and committing must not keep the write before it.
  refusedThenCommit: `exports = async () => {
    const client = context.services.get('mongodb-atlas');
    const trades = client.db('bank').collection('trades');
    const session = client.startSession();
    session.startTransaction();
    await trades.insertOne({ owner: context.user.id, note: 'mine' }, { session });
    let refused;
    try {
      await trades.insertOne({ owner: 'someone-else', note: 'forged' }, { session });
    } catch (e) {
      refused = e.message;
    }
    let commit = 'committed';
    try {
      await session.commitTransaction();
    } catch (e) {
      commit = e.message;
    }
    await session.endSession();
    return { refused, commit };
  };`,
  leaveOpen: `exports = async () => {
    const client = context.services.get('mongodb-atlas');
    const session = client.startSession();
    session.startTransaction();
    await client.db('bank').collection('trades').insertOne({ owner: context.user.id, note: 'never committed' }, { session });
    return 'left open';
  };`,
  misuse: `exports = async () => {
    const client = context.services.get('mongodb-atlas');
    const accounts = client.db('bank').collection('accounts');
    const out = {};
    const attempt = async (name, fn) => { try { await fn(); out[name] = 'no error'; } catch (e) { out[name] = e.message; } };
    const session = client.startSession();
    await attempt('commitWithoutStart', () => session.commitTransaction());
    session.startTransaction();
    await attempt('startTwice', () => session.startTransaction());
    await attempt('emptyCommit', () => session.commitTransaction());
    await attempt('fakeSession', () => accounts.findOne({}, {}, { session: { id: 1 } }));
    await session.endSession();
    await attempt('afterEnd', () => accounts.findOne({}, {}, { session }));
    await attempt('abortWithoutTransaction', () => client.startSession().abortTransaction());
    return out;
  };`,
  twoTransactions: `exports = async () => {
    const client = context.services.get('mongodb-atlas');
    const trades = client.db('bank').collection('trades');
    const first = client.startSession();
    const second = client.startSession();
    first.startTransaction();
    second.startTransaction();
    await trades.insertOne({ owner: context.user.id, note: 'first' }, { session: first });
    let refused;
    try {
      await trades.insertOne({ owner: context.user.id, note: 'second' }, { session: second });
    } catch (e) {
      refused = e.message;
    }
    await first.commitTransaction();
    await trades.insertOne({ owner: context.user.id, note: 'second' }, { session: second });
    await second.commitTransaction();
    return { refused, notes: (await trades.find({}, { note: 1, _id: 0 }).toArray()).map((t) => t.note).sort() };
  };`,
  manySessions: `exports = async () => {
    const client = context.services.get('mongodb-atlas');
    const accounts = client.db('bank').collection('accounts');
    try {
      for (let i = 0; i < 40; i++) await accounts.findOne({}, {}, { session: client.startSession() });
      return 'no limit';
    } catch (e) {
      return e.message;
    }
  };`,
};

function bankApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'BankCluster' } },
    defaultRule: { roles: [] },
    collectionRules: [
      { database: 'bank', collection: 'accounts', roles: [{ name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true, insert: true, delete: true }] },
      { database: 'bank', collection: 'trades', roles: [{ name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true, insert: true, delete: true }] },
    ],
    rules: [],
    webhooks: [],
  });
  // Every function runs as the calling user (application authentication): the rules apply inside transactions too.
  for (const [name, source] of Object.entries(functions)) app.functions.push({ config: { name, private: false }, source });
}

// Transactions in functions (`client.startSession()`), as App Services' docs use them.
describe('transactions in functions (standalone, through realm-web)', () => {
  let host: TestHost;
  let user: Realm.User;

  beforeAll(async () => {
    host = await startTestHost();
    const { clientAppId } = await host.createApp('bank', bankApp);
    user = await new Realm.App({ id: clientAppId, baseUrl: host.url }).logIn(Realm.Credentials.anonymous(false));
  });

  afterAll(async () => {
    await host?.close();
  });

  beforeEach(async () => {
    await user.callFunction('seed');
  });

  it("commits the docs' brownie-points trade: both updates and the insert, at once", async () => {
    expect(await user.callFunction('trade', 'michelle', 'henry', 5, false)).toBe('committed');
    expect(await user.callFunction('state')).toEqual({ points: { henry: 47, michelle: 139 }, trades: 1 });
  });

  it('rolls back the first update when the transaction throws halfway, and the catch may abort again', async () => {
    expect(await user.callFunction('trade', 'michelle', 'henry', 5, true)).toBe('aborted: stopped halfway');
    expect(await user.callFunction('state')).toEqual({ points: { henry: 42, michelle: 144 }, trades: 0 });
  });

  it('shows its writes to reads in the session and hides them from reads outside it until the commit', async () => {
    expect(await user.callFunction('isolation')).toEqual({ inside: 1000, insideCursor: 1000, outside: 42, inTransaction: true, after: 1000, afterCommit: false });
  });

  it('never commits part of a transaction in which the rules refused a write', async () => {
    const out = await user.callFunction<{ refused: string; commit: string }>('refusedThenCommit');
    expect(out.refused).toMatch(/insert not permitted|not permitted|denied/i);
    expect(out.commit).toMatch(/Transaction has been aborted/);
    expect((await user.callFunction<{ trades: number }>('state')).trades).toBe(0);
  });

  it('aborts what a call left open when it ends, and other writers are not held up by it', async () => {
    expect(await user.callFunction('leaveOpen')).toBe('left open');
    expect((await user.callFunction<{ trades: number }>('state')).trades).toBe(0);
    // The aborted transaction released its hold on the collection: a plain write goes through at once.
    expect(await user.callFunction('trade', 'henry', 'michelle', 2, false)).toBe('committed');
    expect(await user.callFunction('state')).toEqual({ points: { henry: 40, michelle: 146 }, trades: 1 });
  });

  it('answers misuse as MongoDB drivers do, with a message', async () => {
    expect(await user.callFunction('misuse')).toEqual({
      commitWithoutStart: 'No transaction started',
      startTwice: 'Transaction already in progress',
      emptyCommit: 'no error',
      fakeSession: 'options.session must be a session from startSession()',
      afterEnd: 'Cannot use a session that has ended',
      abortWithoutTransaction: 'no error',
    });
  });

  it('refuses a second open transaction of one call on the same service instead of letting it wait for the first', async () => {
    expect(await user.callFunction('twoTransactions')).toEqual({
      refused: 'another transaction of this call is open on service "mongodb-atlas": commit or abort it before starting this one',
      notes: ['first', 'second'],
    });
  });

  it('bounds the sessions one call may hold open', async () => {
    expect(await user.callFunction('manySessions')).toMatch(/at most 16 sessions open/);
  });
});
