import { type BSONRegExp, Int32, Long, ObjectId } from 'bson';
import { startTestHost, type TestHost } from '../support/test-host';
import { failureOf, Realm, realmApp } from './realm-helpers';

// callFunction and the data-source service through realm-web's mongoClient, under the app's rules.
describe('client API functions and remote data access with realm-web', () => {
  let host: TestHost;
  let clientAppId: string;

  beforeAll(async () => {
    host = await startTestHost({
      services: ['graphql-gateway'],
      fakes: {
        functions: {
          echoFirst: (args) => args[0] ?? null,
          sum: (args) => (args as Array<number | Int32>).reduce<number>((total, value) => total + Number(value), 0),
          describeArgs: (args) => args.map((value) => (value === null ? 'null' : typeof value === 'object' ? ((value as { _bsontype?: string })._bsontype ?? (value instanceof Date ? 'Date' : Array.isArray(value) ? 'Array' : 'Object')) : typeof value)),
          bigNumbers: () => ({ long: Long.fromString('9007199254740993'), int: new Int32(7), when: new Date('2024-01-02T03:04:05Z'), id: new ObjectId('65a000000000000000000001') }),
          fails: () => {
            throw new Error('it went wrong');
          },
        },
      },
    });
    ({ clientAppId } = await host.createApp('dataapp', (app) => {
      app.functions.push({ config: { name: 'echoFirst' }, source: '' }, { config: { name: 'sum' }, source: '' }, { config: { name: 'describeArgs' }, source: '' }, { config: { name: 'bigNumbers' }, source: '' }, { config: { name: 'fails' }, source: '' }, { config: { name: 'secret', private: true }, source: '' });
      app.authProviders.push({ name: 'anon-user', type: 'anon-user' });
      app.services.push({
        config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'DataCluster' } },
        defaultRule: { roles: [{ name: 'everyone', apply_when: {}, read: true, write: true, insert: true, delete: true, search: true }] },
        collectionRules: [
          {
            database: 'chat',
            collection: 'private',
            roles: [{ name: 'owner', apply_when: { owner: '%%user.id' }, document_filters: { read: { owner: '%%user.id' }, write: { owner: '%%user.id' } }, read: true, write: true, insert: true, delete: true }],
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

  it('calls a function with canonical EJSON arguments and decodes its result', async () => {
    const user = await login();
    expect(await user.callFunction('sum', 1, 2, 39)).toBe(42);
    expect(await user.callFunction('describeArgs', 'text')).toEqual(['string']);
    expect(await user.callFunction('echoFirst', 'plain string')).toBe('plain string');
    expect(await user.callFunction('echoFirst', true)).toBe(true);
    expect(await user.callFunction('echoFirst')).toBeNull();
    expect(await user.callFunction('describeArgs', 5, 5.5, new Date(), new ObjectId(), null, [1], { a: 1 })).toEqual(['Int32', 'Double', 'Date', 'ObjectId', 'null', 'Array', 'Object']);
    const big = await user.callFunction<Record<string, unknown>>('bigNumbers');
    expect(big['when']).toEqual(new Date('2024-01-02T03:04:05Z'));
    expect(String(big['id'])).toBe('65a000000000000000000001');
  });

  it('answers in canonical EJSON with exact integer widths', async () => {
    const user = await login();
    const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bigNumbers', arguments: [] }),
    });
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ long: { $numberLong: '9007199254740993' }, int: { $numberInt: '7' }, when: { $date: { $numberLong: '1704164645000' } }, id: { $oid: '65a000000000000000000001' } });
  });

  it('accepts relaxed EJSON arguments as the native SDK sends them', async () => {
    const user = await login();
    const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json;charset=utf-8' },
      body: '{"arguments":[1,2.5,{"$date":"2024-01-01T00:00:00Z"}],"name":"describeArgs"}',
    });
    expect(await response.json()).toEqual(['Int32', 'Double', 'Date']);
  });

  it('refuses private and unknown functions and reports a function error', async () => {
    const user = await login();
    expect(await failureOf(user.callFunction('secret'))).toMatchObject({ statusCode: 403, errorCode: 'NotCallable' });
    expect(await failureOf(user.callFunction('nope'))).toMatchObject({ statusCode: 404, errorCode: 'FunctionNotFound' });
    expect(await failureOf(user.callFunction('fails'))).toMatchObject({ statusCode: 400, errorCode: 'FunctionExecutionError', error: 'it went wrong' });
  });

  it('inserts, finds, counts, updates, aggregates and deletes through mongoClient', async () => {
    const user = await login();
    const items = user.mongoClient('mongodb-atlas').db('shop').collection<{ _id: ObjectId; name: string; qty: number; tags?: string[] }>('items');
    const inserted = await items.insertOne({ name: 'apple', qty: 5 });
    expect(String(inserted.insertedId)).toMatch(/^[0-9a-f]{24}$/);
    const many = await items.insertMany([{ name: 'pear', qty: 2 }, { name: 'plum', qty: 9 }, { name: 'kiwi', qty: 1 }]);
    expect(many.insertedIds).toHaveLength(3);

    expect((await items.find({ qty: { $gte: 2 } }, { sort: { qty: -1 }, limit: 2, projection: { _id: 0, name: 1 } })).map((item) => item.name)).toEqual(['plum', 'apple']);
    expect(await items.findOne({ name: 'pear' }, { projection: { _id: 0 } })).toEqual({ name: 'pear', qty: 2 });
    expect(await items.findOne({ name: 'none' })).toBeNull();
    expect(await items.count()).toBe(4);
    expect(await items.count({ qty: { $lt: 5 } })).toBe(2);

    expect(await items.updateOne({ name: 'apple' }, { $inc: { qty: 1 } })).toEqual({ matchedCount: 1, modifiedCount: 1 });
    const upserted = await items.updateOne({ name: 'fig' }, { $set: { qty: 3 } }, { upsert: true });
    expect(upserted).toMatchObject({ matchedCount: 0, modifiedCount: 0 });
    expect(upserted.upsertedId).toBeDefined();
    expect(await items.updateMany({}, { $set: { tags: ['fruit'] } })).toEqual({ matchedCount: 5, modifiedCount: 5 });

    expect(await items.aggregate([{ $match: { qty: { $gt: 1 } } }, { $group: { _id: null, total: { $sum: '$qty' } } }])).toEqual([{ _id: null, total: 20 }]);

    expect(await items.deleteOne({ name: 'kiwi' })).toEqual({ deletedCount: 1 });
    expect(await items.deleteMany({ qty: { $lt: 4 } })).toEqual({ deletedCount: 2 });
    expect(await items.count()).toBe(2);
  });

  it('searches with $regex in every spelling realm-web sends (it answered [] to every regex)', async () => {
    const user = await login();
    const people = user.mongoClient('mongodb-atlas').db('shop').collection<{ _id: string; name?: string; tags?: string[]; pattern?: unknown }>('people');
    await people.insertMany([{ _id: 'p1', name: 'Ann' }, { _id: 'p2', name: 'bob' }, { _id: 'p3', name: 'carol', tags: ['x', 'annex'] }, { _id: 'p4', pattern: /^a/i }]);
    const ids = (docs: { _id: string }[]) => docs.map((doc) => doc._id);
    expect(ids(await people.find({ name: { $regex: 'b' } }))).toEqual(['p2']);
    expect(ids(await people.find({ name: { $regex: '^a', $options: 'i' } }))).toEqual(['p1']);
    expect(ids(await people.find({ name: /^C/i }))).toEqual(['p3']);
    expect(ids(await people.find({ name: { $regex: /^C/, $options: 'i' } }))).toEqual(['p3']);
    expect(ids(await people.find({ name: { $regex: 'o', $nin: ['bob'] } }))).toEqual(['p3']);
    expect(ids(await people.find({ tags: { $in: [/^an/] } }))).toEqual(['p3']);
    expect(ids(await people.find({ name: { $not: /^b/ } }))).toEqual(['p1', 'p3', 'p4']);
    expect(ids(await people.find({ name: { $regex: ' c a r o l  # spelled out', $options: 'x' } }))).toEqual(['p3']);
    expect(await people.count({ name: { $regex: '^[ab]', $options: 'i' } })).toBe(2);
    expect(await people.deleteMany({ name: { $regex: /^b/ } })).toEqual({ deletedCount: 1 });
    expect(await people.count()).toBe(3);
  });

  it('returns a stored regex as a BSON regex value and takes one as a query value', async () => {
    const user = await login();
    const patterns = user.mongoClient('mongodb-atlas').db('shop').collection<{ _id: string; rule: unknown }>('patterns');
    await patterns.insertOne({ _id: 'r1', rule: /^a.c$/im });
    const found = await patterns.findOne({ _id: 'r1' });
    // realm-web decodes with its own copy of bson: a BSONRegExp, but not this module's class.
    expect((found?.rule as BSONRegExp)._bsontype).toBe('BSONRegExp');
    expect(found?.rule).toMatchObject({ pattern: '^a.c$', options: 'im' });
    expect(await patterns.count({ rule: { $eq: /^a.c$/im } })).toBe(1);
    const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'findOne', service: 'mongodb-atlas', arguments: [{ database: 'shop', collection: 'patterns', query: { _id: 'r1' } }] }),
    });
    expect(await response.json()).toEqual({ _id: 'r1', rule: { $regularExpression: { pattern: '^a.c$', options: 'im' } } });
  });

  it('answers an invalid regex with 400 and the App Services error body', async () => {
    const user = await login();
    const people = user.mongoClient('mongodb-atlas').db('shop').collection('people');
    expect(await failureOf(people.find({ name: { $regex: '(' } }))).toMatchObject({ statusCode: 400, error: expect.stringMatching(/^Regular expression is invalid/) });
    expect(await failureOf(people.find({ name: { $regex: 'a', $options: 'q' } }))).toMatchObject({ statusCode: 400, error: 'invalid flag in regex options: q' });
    const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'deleteMany', service: 'mongodb-atlas', arguments: [{ database: 'shop', collection: 'people', query: { name: { $regex: '[' } } }] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: expect.stringMatching(/^Regular expression is invalid/), error_code: expect.any(String) });
  });

  it('refuses the regex shapes that backtrack without bound from users, and answers the rest', async () => {
    const user = await login();
    const words = user.mongoClient('mongodb-atlas').db('shop').collection<{ _id: string; text: string }>('words');
    await words.insertMany([{ _id: 'w1', text: `${'a'.repeat(64)}!` }, { _id: 'w2', text: 'aaa' }]);
    // (a+)+$ against 64 a's and a '!' would hold the process for longer than the age of the universe.
    for (const pattern of ['(a+)+$', '(\\w*)*!$', '((ab)*)+', '(a|aa)+\\1$', '(?<x>a)\\k<x>', '(?P<x>a)(?P=x)', 'a'.repeat(5_000)]) {
      expect(await failureOf(words.find({ text: { $regex: pattern } })), pattern.slice(0, 20)).toMatchObject({ statusCode: 400, error: expect.stringMatching(/not allowed/) });
    }
    expect((await words.find({ text: { $regex: '^(a|b)+$' } })).map((doc) => doc._id)).toEqual(['w2']);
    expect(await words.count({ text: { $regex: 'a{3,}!' } })).toBe(1);
    // An escaped backslash followed by a digit is a literal, not a backreference.
    expect(await words.count({ text: { $regex: '\\\\1' } })).toBe(0);
  });

  it('runs findOneAndUpdate, findOneAndReplace and findOneAndDelete (sent by realm-web as findOneAndReplace)', async () => {
    const user = await login();
    const boxes = user.mongoClient('mongodb-atlas').db('shop').collection<{ _id: ObjectId; label: string; n: number }>('boxes');
    await boxes.insertMany([{ label: 'a', n: 1 }, { label: 'b', n: 2 }]);
    expect(await boxes.findOneAndUpdate({ label: 'a' }, { $set: { n: 10 } }, { returnNewDocument: true, projection: { _id: 0 } })).toEqual({ label: 'a', n: 10 });
    expect(await boxes.findOneAndUpdate({ label: 'b' }, { $set: { n: 20 } }, { projection: { _id: 0 } })).toEqual({ label: 'b', n: 2 });
    expect(await boxes.findOneAndReplace({ label: 'b' }, { label: 'B', n: 0 }, { returnNewDocument: true, projection: { _id: 0 } })).toEqual({ label: 'B', n: 0 });
    expect(await boxes.findOneAndDelete({ label: 'a' }, { projection: { _id: 0 } })).toMatchObject({ label: 'a', n: 10 });
    expect(await boxes.find({}, { projection: { _id: 0 } })).toEqual([{ label: 'B', n: 0 }]);
  });

  it('writes Int32 write counts and an Int64 count on the wire', async () => {
    const user = await login();
    const call = async (name: string, args: Record<string, unknown>) => {
      const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, service: 'mongodb-atlas', arguments: [{ database: 'wire', collection: 'c', ...args }] }),
      });
      return response.json();
    };
    await call('insertOne', { document: { x: { $numberInt: '1' } } });
    expect(await call('count', { query: {} })).toEqual({ $numberLong: '1' });
    expect(await call('updateOne', { query: {}, update: { $set: { x: 2 } }, upsert: false })).toEqual({ matchedCount: { $numberInt: '1' }, modifiedCount: { $numberInt: '1' } });
    expect(await call('deleteMany', { query: {} })).toEqual({ deletedCount: { $numberInt: '1' } });
  });

  it('refuses an unknown service and an unknown action', async () => {
    const user = await login();
    expect(await failureOf(user.mongoClient('other-cluster').db('x').collection('y').find())).toMatchObject({ statusCode: 404, errorCode: 'ServiceNotFound' });
    const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'dropDatabase', service: 'mongodb-atlas', arguments: [{ database: 'x', collection: 'y' }] }),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error_code: 'ServiceCommandNotFound' });
  });

  it('streams a change made by another user to watch()', async () => {
    const watcher = await login();
    const writer = await login();
    const feed = watcher.mongoClient('mongodb-atlas').db('chat').collection<{ _id: ObjectId; text: string }>('messages');
    const stream = feed.watch();
    const first = stream.next();
    const other = writer.mongoClient('mongodb-atlas').db('chat').collection<{ _id: ObjectId; text: string }>('messages');
    // The stream registers asynchronously: keep writing until the watcher sees one of the writes.
    let written = 0;
    const writes = setInterval(() => void other.insertOne({ text: `hello ${++written}` }), 100);
    try {
      const event = (await first).value as { operationType: string; fullDocument: { text: string }; ns: { db: string; coll: string } };
      expect(event.operationType).toBe('insert');
      expect(event.fullDocument.text).toMatch(/^hello \d+$/);
      expect(event.ns).toEqual({ db: 'chat', coll: 'messages' });
    } finally {
      clearInterval(writes);
      await stream.return(undefined);
    }
  });

  it('applies the rules as the calling user: owners see only their documents, in queries and in watch()', async () => {
    const alice = await login();
    const bob = await login();
    const asAlice = alice.mongoClient('mongodb-atlas').db('chat').collection<{ _id: ObjectId; owner: string; text: string }>('private');
    const asBob = bob.mongoClient('mongodb-atlas').db('chat').collection<{ _id: ObjectId; owner: string; text: string }>('private');
    await asAlice.insertOne({ owner: alice.id, text: 'alice only' });
    expect(await failureOf(asBob.insertOne({ owner: alice.id, text: 'forged' }))).toMatchObject({ statusCode: 403, error: 'insert not permitted' });
    expect((await asAlice.find()).map((doc) => doc.text)).toEqual(['alice only']);
    expect(await asBob.find()).toEqual([]);
    expect(await asBob.count()).toBe(0);

    const stream = asBob.watch();
    const first = stream.next();
    let round = 0;
    const writes = setInterval(() => {
      round += 1;
      void asAlice.insertOne({ owner: alice.id, text: `secret ${round}` });
      void asBob.insertOne({ owner: bob.id, text: `bob ${round}` });
    }, 100);
    try {
      const event = (await first).value as { fullDocument: { owner: string; text: string } };
      expect(event.fullDocument.owner).toBe(bob.id);
      expect(event.fullDocument.text).toMatch(/^bob \d+$/);
    } finally {
      clearInterval(writes);
      await stream.return(undefined);
    }
  });

  it('applies a watch filter to the change events', async () => {
    const user = await login();
    const logs = user.mongoClient('mongodb-atlas').db('chat').collection<{ _id: ObjectId; level: string }>('logs');
    const stream = logs.watch({ filter: { operationType: 'insert', 'fullDocument.level': 'error' } });
    const first = stream.next();
    let round = 0;
    const writes = setInterval(() => void logs.insertOne({ level: ++round % 2 === 0 ? 'error' : 'info' }), 50);
    try {
      expect(((await first).value as { fullDocument: { level: string } }).fullDocument.level).toBe('error');
    } finally {
      clearInterval(writes);
      await stream.return(undefined);
    }
  });

  it('streams only the watched ids, and takes the token from baas_at as realm-core sends it', async () => {
    const user = await login();
    const notes = user.mongoClient('mongodb-atlas').db('chat').collection<{ _id: string; text: string }>('notes');
    const request = Buffer.from(JSON.stringify({ name: 'watch', service: 'mongodb-atlas', arguments: [{ database: 'chat', collection: 'notes', ids: ['keep'] }] })).toString('base64');
    const controller = new AbortController();
    const response = await fetch(`${host.url}/api/client/v2.0/app/${clientAppId}/functions/call?baas_request=${encodeURIComponent(request)}&baas_at=${user.accessToken}`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    await notes.insertOne({ _id: 'skip', text: 'not this one' });
    await notes.insertOne({ _id: 'keep', text: 'line one\nline two 100%' });
    let text = '';
    while (!text.includes('keep')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    controller.abort();
    const data = text.split('\n').filter((line) => line.startsWith('data: '));
    expect(data).toHaveLength(1);
    expect(data[0]).toContain('line one\\nline two 100%25');
    expect(text).not.toContain('skip');
  });
});
