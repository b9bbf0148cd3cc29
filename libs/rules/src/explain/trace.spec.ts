import { compileRules } from '../roles/compiled-rules';
import { type RoleConfig } from '../roles/rule-config';

const roles: RoleConfig[] = [
  { name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true },
  { name: 'member', apply_when: { '%%user.custom_data.member': true }, fields: { title: { read: true }, notes: { read: false } } },
];
const rules = compileRules(
  { database: 'db', collection: 'docs', roles, filters: [{ name: 'live', apply_when: {}, query: { deleted: { $ne: true } } }] },
  undefined,
);
const user = { id: 'alice', custom_data: { member: true } };

describe('explain traces', () => {
  it('are absent unless asked for', () => {
    const access = rules.forRequest({ user });
    expect(access.canReadSync({ owner: 'alice' }).trace).toBeUndefined();
    expect(access.checkInsertSync({ owner: 'alice' }).trace).toBeUndefined();
    expect(access.prepareQuerySync().trace).toBeUndefined();
  });

  it('name the role, every evaluated expression with its value, and the deciding one', () => {
    const { trace } = rules.forRequest({ user, explain: true }).canReadSync({ owner: 'alice' });
    expect(trace).toMatchObject({
      operation: 'read',
      namespace: 'db.docs',
      roleSource: 'collection',
      role: 'owner',
      decidedBy: 'roles[0](owner).read',
      reason: 'visible: the role reads the whole document',
      withheldFields: [],
    });
    expect(trace?.evaluations).toEqual([
      { at: 'roles[0](owner).apply_when', expression: { owner: '%%user.id' }, value: true },
      { at: 'roles[0](owner).read', expression: true, value: true },
    ]);
  });

  it('list the withheld fields and the field rules evaluated', () => {
    const { trace, document } = rules.forRequest({ user, explain: true }).canReadSync({ _id: 1, owner: 'bob', title: 't', notes: 'n', extra: 1 });
    expect(document).toEqual({ _id: 1, title: 't' });
    expect(trace?.role).toBe('member');
    expect(trace?.withheldFields).toEqual(['owner', 'notes', 'extra']);
    expect(trace?.evaluations.map((e) => [e.at, e.value])).toEqual([
      ['roles[0](owner).apply_when', false],
      ['roles[1](member).apply_when', true],
      ['roles[1](member).read', undefined],
      ['roles[1](member).write', undefined],
      ['roles[1](member).fields.title.read', true],
      ['roles[1](member).fields.notes.read', false],
    ]);
  });

  it('mark apply_when values reused from an earlier document of the request', () => {
    const access = rules.forRequest({ user, explain: true });
    access.canReadSync({ owner: 'bob' });
    const { trace } = access.canReadSync({ owner: 'carol' });
    expect(trace?.evaluations[1]).toMatchObject({ at: 'roles[1](member).apply_when', value: true, cached: true });
  });

  it('explain a refused write', () => {
    const { trace, error } = rules.forRequest({ user, explain: true }).checkUpdateSync({ _id: 1, owner: 'bob', title: 'a' }, { _id: 1, owner: 'bob', title: 'b' });
    expect(error?.message).toBe('update not permitted');
    expect(trace).toMatchObject({ operation: 'update', role: 'member', decidedBy: 'roles[1](member).fields', withheldFields: ['title'] });
    expect(trace?.reason).toContain('does not have write permission for field(s) title');
  });

  it('explain the filters that applied', () => {
    const prepared = rules.forRequest({ user, explain: true }).prepareQuerySync({ a: 1 });
    expect(prepared.trace).toMatchObject({ operation: 'filters', appliedFilters: ['live'] });
    expect(prepared.trace?.evaluations).toEqual([{ at: 'filters[0](live).apply_when', expression: {}, value: true }]);
  });
});
