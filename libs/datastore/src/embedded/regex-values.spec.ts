import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BSONRegExp } from 'bson';
import { openEmbeddedClient } from './embedded-client';

// Regex values in the embedded store: one stored form (the BSON regex), kept as written across a restart.
// The log was read back with bson's default, which turns a regex into a RegExp: options x and l were lost,
// `s` became `g`, and a PCRE-only pattern made the store fail to open.
describe('regex values in the embedded store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-regex-values-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps stored regexes, PCRE options and syntax included, across a restart, and matches them after it', async () => {
    let client = openEmbeddedClient(dir);
    await client.db('app').collection('rules').insertMany([
      { _id: 1, rule: /^a.b$/ims },
      { _id: 2, rule: new BSONRegExp('(?P<word>\\w+) # a word', 'x') },
      { _id: 3, name: 'a\nb' },
    ]);
    await client.close();

    client = openEmbeddedClient(dir);
    const rules = client.db('app').collection('rules');
    expect(await rules.find({ rule: { $exists: true } }).toArray()).toEqual([
      { _id: 1, rule: new BSONRegExp('^a.b$', 'ims') },
      { _id: 2, rule: new BSONRegExp('(?P<word>\\w+) # a word', 'x') },
    ]);
    expect((await rules.find({ rule: /^a.b$/ims }).toArray()).map((doc) => doc._id)).toEqual([1]);
    expect((await rules.find({ name: new BSONRegExp('^a.b$', 's') }).toArray()).map((doc) => doc._id)).toEqual([3]);
    expect((await rules.find({ rule: { $type: 'regex' } }).toArray()).map((doc) => doc._id)).toEqual([1, 2]);
    await client.close();
  });

  it('refuses a regex _id', async () => {
    const client = openEmbeddedClient(dir);
    await expect(client.db('app').collection('c').insertOne({ _id: /x/ })).rejects.toMatchObject({ codeName: 'BadValue' });
    await expect(client.db('app').collection('c').insertOne({ _id: new BSONRegExp('x') })).rejects.toMatchObject({ codeName: 'BadValue' });
    await client.close();
  });
});
