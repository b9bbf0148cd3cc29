// Property tests of the rule-enforced data access through both entry points: a single call
// (DataAccess.execute) and an operation inside a transaction (UserTransactions). Random rule sets, users,
// documents and operations; the oracle for reads is the rules library itself (canRead on each stored
// document), independent of the data-access path. Both entry points must agree on every outcome.
import { emptyApp, type Role } from '@tessera/app-config';
import { DataSources } from '@tessera/platform';
import { compileRules, type RoleConfig, type RuleUser } from '@tessera/rules';
import { loadSettings } from '@tessera/settings';
import { makeTempDir } from '@tessera/testing';
import fc from 'fast-check';
import { DataAccess } from './data-access.service';
import { UserTransactions } from './user-transaction';

// Written as app configuration roles (what a deployment holds); the rules library reads them as RoleConfig.
const roleMenu: Role[] = [
  { name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true, insert: true, delete: true },
  { name: 'team', apply_when: { team: '%%user.custom_data.team' }, fields: { title: { read: true }, n: { read: true, write: true }, team: { read: true } }, additional_fields: {}, insert: false, delete: false },
  { name: 'open', apply_when: {}, read: { status: 'open' }, write: false },
  { name: 'fields', apply_when: {}, fields: { secret: { read: false } }, additional_fields: { read: true, write: true }, insert: true, delete: { status: 'done' } },
  { name: 'server', apply_when: { '%%user.type': 'server' }, read: true, write: true, insert: true, delete: true },
  { name: 'embedded', apply_when: { status: 'draft' }, fields: { meta: { fields: { x: { read: true, write: true } } }, title: { read: true } }, insert: true },
];

const userArb: fc.Arbitrary<RuleUser> = fc.record({
  id: fc.constantFrom('u1', 'u2'),
  type: fc.constantFrom('normal', 'server'),
  custom_data: fc.record({ team: fc.constantFrom('red', 'blue') }),
});

const docArb = fc.record(
  {
    owner: fc.constantFrom('u1', 'u2'),
    team: fc.constantFrom('red', 'blue'),
    status: fc.constantFrom('open', 'done', 'draft'),
    n: fc.integer({ min: 0, max: 3 }),
    title: fc.constantFrom('a', 'b'),
    secret: fc.constantFrom('s1', 's2'),
    meta: fc.record({ x: fc.integer({ min: 0, max: 2 }), y: fc.constantFrom('p', 'q') }, { requiredKeys: [] }),
  },
  { requiredKeys: ['status'] },
);

const writeArb = fc.oneof(
  docArb.map((document) => ({ action: 'insertOne', args: { document } })),
  fc.constantFrom('open', 'done', 'draft').map((status) => ({ action: 'updateMany', args: { query: { status }, update: { $set: { n: 9 } } } })),
  fc.constantFrom('a', 'b').map((title) => ({ action: 'updateOne', args: { query: { title }, update: { $set: { 'meta.x': 7 } } } })),
  fc.constantFrom('open', 'done', 'draft').map((status) => ({ action: 'deleteMany', args: { query: { status } } })),
  fc.constantFrom('a', 'b').map((title) => ({ action: 'findOneAndUpdate', args: { filter: { title }, update: { $inc: { n: 1 } }, returnNewDocument: true } })),
  fc.constantFrom('a', 'b').map((title) => ({ action: 'findOneAndDelete', args: { filter: { title } } })),
);

const readArb = fc.oneof(
  fc.constant({ action: 'find', args: { query: {} } }),
  fc.constantFrom('open', 'done', 'draft').map((status) => ({ action: 'find', args: { query: { status }, sort: { _id: -1 }, limit: 2 } })),
  fc.constantFrom('title', 'secret', 'meta.x', 'meta.y', 'n', 'owner').map((field) => ({ action: 'count', args: { query: { [field]: { $exists: true } } } })),
  fc.constantFrom('title', 'secret', 'meta.y').map((field) => ({ action: 'find', args: { sort: { [field]: 1, _id: 1 } } })),
);

/** The outcome of a call: its result, or its error code and message. */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { ok: JSON.parse(JSON.stringify(await call())) as unknown };
  } catch (error) {
    const coded = error as { errorCode?: string; message?: string };
    return { error: coded.errorCode ?? 'unknown', message: coded.message };
  }
}

describe('rules through both entry points', () => {
  const dir = makeTempDir('tessera-one-path-');
  const dataSources = new DataSources(loadSettings({ TESSERA_DATA_DIR: dir.path }));
  const dataAccess = new DataAccess(dataSources);
  const transactions = new UserTransactions(dataAccess);
  let deployment = 0;

  afterAll(() => dir.remove());

  function appWith(roles: Role[]) {
    const config = emptyApp('one-path');
    config.services.push({
      config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } },
      collectionRules: [{ database: 'db', collection: 'c', roles }],
      rules: [],
      webhooks: [],
    });
    deployment += 1;
    return { id: 'one-path', deploymentId: `d${deployment}`, config };
  }

  const store = () => dataSources.forService(appWith([]).config, 'mongodb-atlas').client.db('db').collection('c');

  async function reset(docs: Record<string, unknown>[]): Promise<void> {
    await store().deleteMany({});
    if (docs.length) await store().insertMany(docs.map((doc, i) => ({ _id: i + 1, ...doc })));
  }

  const stored = async () => store().find({}).sort({ _id: 1 }).toArray();

  const roleSetArb = fc.subarray(roleMenu, { minLength: 1 }).chain((roles) => fc.shuffledSubarray(roles, { minLength: roles.length }));

  it('reads the same documents, and only readable ones, alone and in a transaction', async () => {
    await fc.assert(
      fc.asyncProperty(roleSetArb, userArb, fc.array(docArb, { maxLength: 6 }), readArb, async (roles, user, docs, read) => {
        const app = appWith(roles);
        await reset(docs);
        const request = { app, service: 'mongodb-atlas', database: 'db', collection: 'c', caller: { kind: 'user' as const, user } };
        const alone = await outcome(() => dataAccess.execute({ ...request, action: read.action, args: read.args }));
        const inside = await outcome(() => transactions.run(app, 'mongodb-atlas', user, (tx) => tx.execute({ action: read.action, database: 'db', collection: 'c', args: read.args })));
        expect(inside).toEqual(alone);
        if (read.action === 'find' && 'query' in read.args && Object.keys(read.args).length === 1 && 'ok' in (alone as object)) {
          const access = compileRules({ database: 'db', collection: 'c', roles: roles as RoleConfig[] }).forRequest({ user });
          const expected: unknown[] = [];
          for (const doc of await stored()) {
            const decision = await access.canRead(doc);
            if (decision.document) expected.push(decision.document);
          }
          expect((alone as { ok: unknown[] }).ok).toEqual(JSON.parse(JSON.stringify(expected)));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('decides writes the same way alone and in a transaction, leaving the same data', async () => {
    await fc.assert(
      fc.asyncProperty(roleSetArb, userArb, fc.array(docArb, { maxLength: 5 }), writeArb, async (roles, user, docs, write) => {
        const app = appWith(roles);
        const args = JSON.parse(JSON.stringify(write.args)) as Record<string, unknown>;
        if (write.action === 'insertOne') (args['document'] as Record<string, unknown>)['_id'] = 100;
        await reset(docs);
        const alone = await outcome(() => dataAccess.execute({ app, service: 'mongodb-atlas', database: 'db', collection: 'c', action: write.action, args: structuredClone(args), caller: { kind: 'user', user } }));
        const afterAlone = await stored();
        await reset(docs);
        const inside = await outcome(() => transactions.run(app, 'mongodb-atlas', user, (tx) => tx.execute({ action: write.action, database: 'db', collection: 'c', args: structuredClone(args) })));
        expect(inside).toEqual(alone);
        expect(await stored()).toEqual(afterAlone);
      }),
      { numRuns: 60 },
    );
  });
});
