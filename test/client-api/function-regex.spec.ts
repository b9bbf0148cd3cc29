import type { AppConfig } from '@tessera/app-config';
import * as Realm from 'realm-web';
// The real process host: realm-web over HTTP, the function runtime's sandbox, the embedded datastore.
import { startTestHost, type TestHost } from '../support/test-host';

const fruit = "context.services.get('mongodb-atlas').db('shop').collection('fruit')";

const functions: Record<string, string> = {
  seed: `exports = async () => {
    const fruit = ${fruit};
    await fruit.deleteMany({});
    await fruit.insertMany([{ _id: 1, name: 'apple' }, { _id: 2, name: 'banana' }, { _id: 3, name: 'cherry' }, { _id: 4, name: 'Apricot' }, { _id: 5, rule: /^a.c/im }]);
  };`,
  // Each spelling of a regex query, as the ids it matched.
  spellings: `exports = async () => {
    const fruit = ${fruit};
    const ids = async (filter) => (await fruit.find(filter, { _id: 1 }).toArray()).map((doc) => doc._id);
    return {
      literal: await ids({ name: /^a/ }),
      regexOfLiteral: await ids({ name: { $regex: /^a/ } }),
      regexOfString: await ids({ name: { $regex: '^a' } }),
      withOptions: await ids({ name: { $regex: '^a', $options: 'i' } }),
      literalWithOptions: await ids({ name: { $regex: /^a/, $options: 'i' } }),
      globalFlag: await ids({ name: /an/g }),
      inList: await ids({ name: { $in: [/^b/, 'cherry'] } }),
      notRegex: await ids({ name: { $not: /^[ab]/i } }),
      withOtherOperators: await ids({ name: { $regex: 'a', $nin: ['banana'] } }),
    };
  };`,
  purge: `exports = async () => {
    const fruit = ${fruit};
    const { deletedCount } = await fruit.deleteMany({ name: { $regex: /^b/ } });
    return { deletedCount, left: (await fruit.find({}, { _id: 1 }).toArray()).map((doc) => doc._id) };
  };`,
  storedRegex: `exports = async () => {
    const doc = await ${fruit}.findOne({ _id: 5 });
    return { isRegExp: doc.rule instanceof RegExp, flags: doc.rule.flags, matches: doc.rule.test('xx\\nABC'), rule: doc.rule };
  };`,
  regexArgument: `exports = async (pattern) => ({ isRegExp: pattern instanceof RegExp, source: pattern.source, flags: pattern.flags, ids: (await ${fruit}.find({ name: pattern }).toArray()).map((doc) => doc._id) });`,
  invalidRegex: `exports = async () => {
    try {
      await ${fruit}.deleteMany({ name: { $regex: '(' } });
      return 'no error';
    } catch (error) {
      return error.message;
    }
  };`,
};

function fruitApp(app: AppConfig): void {
  app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'FruitCluster' } },
    defaultRule: { roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] },
    collectionRules: [],
    rules: [],
    webhooks: [],
  });
  // purge runs as system, as the function that emptied a collection did (system functions may always use $regex).
  for (const [name, source] of Object.entries(functions)) app.functions.push({ config: { name, private: false, ...(name === 'purge' ? { run_as_system: true } : {}) }, source });
}

// Regular expressions inside functions: a RegExp crosses the sandbox boundary as the BSON regex it stands
// for, and stored regexes come back to the function as RegExp. Before, `{name: {$regex: /x/}}` matched every
// document with the field (a deleteMany with it emptied the collection) and `/x/` matched nothing.
describe('regular expressions in functions (standalone, through realm-web)', () => {
  let host: TestHost;
  let user: Realm.User;

  beforeAll(async () => {
    host = await startTestHost();
    const { clientAppId } = await host.createApp('fruit', fruitApp);
    user = await new Realm.App({ id: clientAppId, baseUrl: host.url }).logIn(Realm.Credentials.anonymous(false));
  });

  afterAll(async () => {
    await host?.close();
  });

  beforeEach(async () => {
    await user.callFunction('seed');
  });

  it('matches each regex spelling as MongoDB does', async () => {
    expect(await user.callFunction('spellings')).toEqual({
      literal: [1],
      regexOfLiteral: [1],
      regexOfString: [1],
      withOptions: [1, 4],
      literalWithOptions: [1, 4],
      globalFlag: [2],
      inList: [2, 3],
      notRegex: [3, 5],
      withOtherOperators: [1],
    });
  });

  it('deletes only what {$regex: /x/} matches (it emptied the collection)', async () => {
    expect(await user.callFunction('purge')).toEqual({ deletedCount: 1, left: [1, 3, 4, 5] });
  });

  it('hands a stored regex to the function as a RegExp and returns it as a BSON regex', async () => {
    const result = await user.callFunction<{ isRegExp: boolean; flags: string; matches: boolean; rule: { _bsontype: string; pattern: string; options: string } }>('storedRegex');
    expect(result).toMatchObject({ isRegExp: true, flags: 'im', matches: true });
    expect(result.rule._bsontype).toBe('BSONRegExp');
    expect(result.rule).toMatchObject({ pattern: '^a.c', options: 'im' });
  });

  it('passes a RegExp argument from realm-web into the function as a RegExp', async () => {
    expect(await user.callFunction('regexArgument', /^A/i)).toEqual({ isRegExp: true, source: '^A', flags: 'i', ids: [1, 4] });
  });

  it('fails cleanly inside the function on an invalid pattern, deleting nothing', async () => {
    expect(await user.callFunction('invalidRegex')).toMatch(/^Regular expression is invalid/);
    expect((await user.callFunction<{ literal: number[] }>('spellings')).literal).toEqual([1]);
  });
});
