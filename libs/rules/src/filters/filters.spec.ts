import { Query } from 'mingo';
import { RulesErrorCode } from '../errors/rules.error';
import { type RuleUser } from '../expressions/context';
import { compileRules } from '../roles/compiled-rules';
import { type FilterConfig, type RoleConfig } from '../roles/rule-config';
import { translateExpression } from './pushdown';

const alice: RuleUser = { id: 'alice', custom_data: { team: 'red', teams: ['red', 'green'], admin: false } };
const readAll: RoleConfig = { name: 'all', apply_when: {}, read: true };

function prepare(filters: FilterConfig[], query?: Record<string, unknown>, projection?: Record<string, unknown>, roles: RoleConfig[] = [readAll]) {
  return compileRules({ database: 'db', collection: 'c', roles, filters }).forRequest({ user: alice }).prepareQuerySync(query, projection);
}

describe('filters', () => {
  it('ANDs each applying filter query into the request query, with expansions expanded', () => {
    const prepared = prepare(
      [
        { name: 'team', apply_when: {}, query: { team: '%%user.custom_data.team' } },
        { name: 'open', apply_when: { '%%user.custom_data.admin': false }, query: { status: { $ne: 'closed' } } },
      ],
      { year: 2000 },
    );
    expect(prepared.query).toEqual({ $and: [{ year: 2000 }, { team: 'red' }, { status: { $ne: 'closed' } }] });
    expect(prepared.filters).toEqual(['team', 'open']);
  });

  it('lets apply_when use %%request, %%values and %%environment', () => {
    const rules = compileRules({
      roles: [readAll],
      filters: [{ name: 'api', apply_when: { '%%request.httpMethod': 'GET', '%%values.strict': true, '%%environment.tag': 'prod' }, query: { published: true } }],
    });
    const ctx = { user: alice, request: { httpMethod: 'GET' }, values: { strict: true }, environment: { tag: 'prod' } };
    expect(rules.forRequest(ctx).prepareQuerySync({}, undefined, { pushdown: false }).query).toEqual({ published: true });
    expect(rules.forRequest({ ...ctx, environment: { tag: 'dev' } }).prepareQuerySync({}, undefined, { pushdown: false }).query).toEqual({});
  });

  it('converts ids in a filter query', () => {
    const hex = '5f4863d1b2f3a1b2c3d4e623';
    const rules = compileRules({ roles: [readAll], filters: [{ name: 'own', query: { owner: { '%stringToOid': '%%user.id' } } }] });
    const { query } = rules.forRequest({ user: { id: hex } }).prepareQuerySync({}, undefined, { pushdown: false });
    expect((query.owner as { toHexString(): string }).toHexString()).toBe(hex);
  });

  it('skips filters whose apply_when does not hold', () => {
    const prepared = prepare([{ name: 'admins', apply_when: { '%%user.custom_data.admin': true }, query: { secret: false } }], { a: 1 });
    expect(prepared).toMatchObject({ query: { a: 1 }, filters: [] });
  });

  it('uses the filter query alone when the request has none', () => {
    expect(prepare([{ name: 'mine', query: { owner: '%%user.id' } }]).query).toEqual({ owner: 'alice' });
  });

  it('merges inclusive projections of several filters and the request', () => {
    const prepared = prepare(
      [
        { name: 'a', projection: { a: 1 } },
        { name: 'b', projection: { b: 1, _id: 0 } },
      ],
      {},
      { c: 1 },
    );
    expect(prepared.projection).toEqual({ c: 1, a: 1, b: 1, _id: 0 });
  });

  it('merges exclusive projections', () => {
    expect(prepare([{ name: 'a', projection: { secret: 0 } }], {}, { other: 0 }).projection).toEqual({ other: 0, secret: 0 });
  });

  it('fails the query when the request projection and a filter projection mix modes', () => {
    expect(() => prepare([{ name: 'a', projection: { secret: 0 } }], {}, { title: 1 })).toThrow(
      expect.objectContaining({ errorCode: RulesErrorCode.FilterProjectionConflict, httpStatus: 400 }),
    );
  });

  it('does not fail on filters that do not apply', () => {
    const prepared = prepare([
      { name: 'a', projection: { a: 0 } },
      { name: 'b', apply_when: false, projection: { b: 1 } },
    ]);
    expect(prepared.projection).toEqual({ a: 0 });
  });

  it('rejects malformed filters when compiling', () => {
    const bad = (filter: unknown) => () => prepare([filter as FilterConfig]);
    expect(bad({ query: {} })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.InvalidRule }));
    expect(bad({ name: 'q', query: [] })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.InvalidRule }));
    expect(bad({ name: 'p', projection: { a: 'yes' } })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.InvalidRule }));
    expect(bad({ name: 'mixed', projection: { a: 1, b: 0 } })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.FilterProjectionConflict }));
    expect(bad({ name: 'doc', apply_when: { owner: '%%user.id' } })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.InvalidRule }));
  });

  it('evaluates a filter apply_when that calls %function asynchronously', async () => {
    const rules = compileRules({
      roles: [readAll],
      filters: [{ name: 'f', apply_when: { '%%true': { '%function': { name: 'limited', arguments: ['%%user.id'] } } }, query: { limited: true } }],
    });
    const prepared = await rules.forRequest({ user: alice, callFunction: (_name, args) => args[0] === 'alice' }).prepareQuery({}, undefined, { pushdown: false });
    expect(prepared.query).toEqual({ limited: true });
  });
});

describe('query pushdown', () => {
  it('pushes an owner role down as a query', () => {
    const prepared = prepare([], { year: 2000 }, undefined, [{ name: 'owner', apply_when: { owner: '%%user.id' }, read: true }]);
    expect(prepared.query).toEqual({ $and: [{ year: 2000 }, { owner: 'alice' }] });
    expect(prepared).toMatchObject({ matchesNothing: false, exact: true });
  });

  it('adds nothing when a role reads every document', () => {
    expect(prepare([], { year: 2000 }).query).toEqual({ year: 2000 });
  });

  it('drops roles whose user-only apply_when is false and reports when nothing is readable', () => {
    const prepared = prepare([], {}, undefined, [{ name: 'admin', apply_when: { '%%user.custom_data.admin': true }, read: true }]);
    expect(prepared.matchesNothing).toBe(true);
  });

  it('ORs the alternatives of several roles and stops at a role that applies to everything', () => {
    const prepared = prepare([], {}, undefined, [
      { name: 'owner', apply_when: { owner: '%%user.id' }, read: true },
      { name: 'team', apply_when: { team: { $in: '%%user.custom_data.teams' } }, read: true },
      { name: 'none', apply_when: {}, read: false },
      { name: 'never', apply_when: {}, read: true },
    ]);
    expect(prepared.query).toEqual({ $or: [{ owner: 'alice' }, { team: { $in: ['red', 'green'] } }] });
    // A role that applies to every document but never reads shadows the others: not exact.
    expect(prepared.exact).toBe(false);
  });

  it('is exact when every role but the last reads whatever it applies to', () => {
    const ordered = [
      { name: 'owner', apply_when: { owner: '%%user.id' }, read: true },
      { name: 'public', apply_when: { visibility: 'public' }, fields: { secret: { read: false } }, additional_fields: { read: true } },
    ];
    const prepared = prepare([], {}, undefined, ordered);
    expect(prepared).toMatchObject({ query: { $or: [{ owner: 'alice' }, { visibility: 'public' }] }, exact: true });
    // A conditional read before the last role: the first role that applies may hide what a later one shows.
    const conditional = prepare([], {}, undefined, [{ name: 'owner', apply_when: { owner: '%%user.id' }, read: { status: 'open' } }, ordered[1]]);
    expect(conditional.exact).toBe(false);
  });

  it('is not exact when an earlier role that never reads may be chosen', () => {
    const prepared = prepare([], {}, undefined, [
      { name: 'drafts', apply_when: { status: 'draft' }, read: false },
      { name: 'all', apply_when: {}, read: true },
    ]);
    expect(prepared).toMatchObject({ query: {}, exact: false });
    expect(compileRules({ roles: [{ name: 'drafts', apply_when: { status: 'draft' }, read: false }, readAll] }).forRequest({ user: alice }).canReadSync({ status: 'draft' }).allowed).toBe(false);
  });

  it('pushes document_filters.read OR document_filters.write', () => {
    const prepared = prepare([], {}, undefined, [
      { name: 'sub', apply_when: {}, document_filters: { read: { feed: { $in: '%%user.custom_data.teams' } }, write: { owner: '%%user.id' } }, read: true },
    ]);
    expect(prepared.query).toEqual({ $or: [{ feed: { $in: ['red', 'green'] } }, { owner: 'alice' }] });
  });

  it('adds no constraint for what it cannot translate', () => {
    const ctx = { user: { id: 'alice' } };
    expect(translateExpression({ '%%true': { '%function': { name: 'f' } } }, ctx)).toEqual({ condition: true, exact: false });
    expect(translateExpression({ a: '%%root.b' }, ctx).condition).toBe(true);
    expect(translateExpression({ meta: { k: 1 } }, ctx).condition).toBe(true);
  });

  it('translates symmetric equality, operators, negation and conversions', () => {
    const ctx = { user: { id: '5f4863d1b2f3a1b2c3d4e623' } };
    expect(translateExpression({ '%%user.id': '%%root.owner' }, ctx).condition).toEqual({ owner: '5f4863d1b2f3a1b2c3d4e623' });
    expect(translateExpression({ n: { $gt: 1, $lte: 5 } }, ctx).condition).toEqual({ $and: [{ n: { $gt: 1 } }, { n: { $lte: 5 } }] });
    expect(translateExpression({ '%not': { status: 'done' } }, ctx).condition).toEqual({ $nor: [{ status: 'done' }] });
    expect(translateExpression({ x: { $exists: false } }, ctx).condition).toEqual({ x: { $exists: false } });
    const oid = translateExpression({ _id: { '%stringToOid': '%%user.id' } }, ctx).condition as Record<string, { toHexString(): string }>;
    expect(oid._id.toHexString()).toBe('5f4863d1b2f3a1b2c3d4e623');
  });

  it('never narrows: the pushed query matches every readable document (checked with a query engine)', () => {
    const roles: RoleConfig[] = [
      { name: 'owner', apply_when: { $or: [{ owner: '%%user.id' }, { collaborators: '%%user.id' }] }, read: true },
      { name: 'team', apply_when: { team: '%%user.custom_data.teams' }, document_filters: { read: { status: { $ne: 'draft' } } }, read: true },
    ];
    const rules = compileRules({ roles });
    const access = rules.forRequest({ user: alice });
    const { query } = access.prepareQuerySync();
    const docs = [
      { owner: 'alice' },
      { owner: 'bob', collaborators: ['alice'] },
      { owner: 'bob', team: 'green', status: 'open' },
      { owner: 'bob', team: 'green', status: 'draft' },
      { owner: 'bob', team: 'blue' },
    ];
    const engine = new Query(query);
    for (const doc of docs) if (access.canReadSync(doc).allowed) expect(engine.test(doc)).toBe(true);
    expect(docs.filter((d) => engine.test(d))).toHaveLength(3);
  });
});
