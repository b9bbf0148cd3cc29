import { emptyApp } from '@tessera/app-config';
import { DataSources } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';
import { DataAccess } from './data-access.service';
import { UserTransactions } from './user-transaction';

describe('UserTransactions', () => {
  const dir = makeTempDir('tessera-user-tx-');
  const dataSources = new DataSources(loadSettings({ TESSERA_DATA_DIR: dir.path }));
  const config = emptyApp('tx');
  config.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
    collectionRules: [
      {
        database: 'db',
        collection: 'items',
        roles: [
          { name: 'owner', apply_when: { owner_id: '%%user.id' }, read: true, write: true, insert: true, delete: true },
          { name: 'public', apply_when: { public: true }, fields: { secret: { read: false } }, additional_fields: { read: true }, insert: false, delete: false },
        ],
        filters: [],
      },
    ],
    rules: [],
    webhooks: [],
  });
  const app = { id: 'tx', deploymentId: 'd1', config };
  const items = () => dataSources.forService(config, 'mongodb-atlas').client.db('db').collection('items');
  const transactions = new UserTransactions(new DataAccess(dataSources));
  const alice = { id: 'alice' };

  afterAll(() => dir.remove());

  it('commits every operation together, later ones reading earlier ones', async () => {
    const seen = await transactions.run(app, 'mongodb-atlas', alice, async (tx) => {
      await tx.execute({ action: 'insertOne', database: 'db', collection: 'items', args: { document: { name: 'a', owner_id: 'alice', n: 1 } } });
      await tx.execute({ action: 'findOneAndUpdate', database: 'db', collection: 'items', args: { filter: { name: 'a' }, update: { $inc: { n: 1 } }, returnNewDocument: true } });
      return tx.execute({ action: 'find', database: 'db', collection: 'items', args: { query: { name: 'a' } } });
    });
    expect(seen).toEqual([expect.objectContaining({ name: 'a', n: 2 })]);
    expect(await items().findOne({ name: 'a' })).toMatchObject({ n: 2 });
  });

  it('rolls everything back when a write is refused, and reads under the rules', async () => {
    await items().insertOne({ name: 'theirs', owner_id: 'bob', public: true, secret: 's' });
    const attempt = transactions.run(app, 'mongodb-atlas', alice, async (tx) => {
      await tx.execute({ action: 'insertOne', database: 'db', collection: 'items', args: { document: { name: 'b', owner_id: 'alice' } } });
      expect(await tx.execute({ action: 'findOne', database: 'db', collection: 'items', args: { query: { name: 'theirs' } } })).not.toHaveProperty('secret');
      await tx.execute({ action: 'findOneAndDelete', database: 'db', collection: 'items', args: { filter: { name: 'theirs' } } });
    });
    await expect(attempt).rejects.toThrow('delete not permitted');
    expect(await items().countDocuments({ name: 'b' })).toBe(0);
    expect(await items().countDocuments({ name: 'theirs' })).toBe(1);
  });
});
