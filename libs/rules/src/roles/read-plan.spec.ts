// The per-request read plan (read-plan.ts) must decide exactly like the general read flow, and a copying
// access must hand out documents that share no object with the documents read.
import fc from 'fast-check';
import { type RuleUser } from '../expressions/context';
import { compileRules } from './compiled-rules';
import { type Expression, type FieldPermission, type RoleConfig } from './rule-config';

const alice: RuleUser = { id: 'alice', data: { email: 'a@example.com' }, custom_data: { team: 'red' } };

/** A deep copy that keeps nothing of its input (the documents here are plain JSON-like values). */
const deepCopy = (value: unknown): unknown => structuredClone(value);

/** Every object (and array) inside a value, the value included. */
function objectsIn(value: unknown, out: Set<unknown> = new Set()): Set<unknown> {
  if (typeof value !== 'object' || value === null) return out;
  out.add(value);
  for (const inner of Object.values(value)) objectsIn(inner, out);
  return out;
}

describe('the per-request read plan', () => {
  const threeRoles: RoleConfig[] = [
    { name: 'admin', apply_when: { '%%user.custom_data.isAdmin': true }, read: true, write: true },
    { name: 'owner', apply_when: { owner_id: '%%user.id' }, read: true, write: true },
    { name: 'reader', apply_when: { '%%user.data.email': { $exists: true } }, fields: { title: { read: true }, owner_id: { read: true } }, additional_fields: { read: false } },
  ];

  it('shows owned documents whole and others with only the readable fields, in stored order', () => {
    const access = compileRules({ roles: threeRoles }).forRequest({ user: alice });
    const mine = { _id: 1, body: 'b', owner_id: 'alice', title: 't' };
    const theirs = { body: 'b', title: 't', _id: 2, owner_id: 'bob', tags: ['x'] };
    expect(access.canReadSync(mine)).toEqual({ allowed: true, role: 'owner', document: mine });
    const decision = access.canReadSync(theirs);
    expect(decision).toEqual({ allowed: true, role: 'reader', document: { title: 't', _id: 2, owner_id: 'bob' } });
    expect(Object.keys(decision.document ?? {})).toEqual(['title', '_id', 'owner_id']);
  });

  it('hides every document when no role can apply to the user', () => {
    const access = compileRules({ roles: threeRoles }).forRequest({ user: { id: 'carol' } });
    expect(access.canReadSync({ _id: 1, owner_id: 'bob' })).toEqual({ allowed: false, role: null });
    expect(access.canReadSync({ _id: 2, owner_id: 'carol', title: 't' })).toMatchObject({ allowed: true, role: 'owner' });
  });

  it('withholds the listed fields when additional fields are readable', () => {
    const roles: RoleConfig[] = [{ name: 'most', apply_when: {}, fields: { secret: { read: false }, pin: { write: false } }, additional_fields: { read: true } }];
    const access = compileRules({ roles }).forRequest({ user: alice });
    expect(access.canReadSync({ _id: 1, a: 1, secret: 's', pin: 2, b: { c: 3 } }).document).toEqual({ _id: 1, a: 1, b: { c: 3 } });
  });

  it('keeps a __proto__ field as a field and reads documents without a prototype', () => {
    const roles: RoleConfig[] = [{ name: 'r', apply_when: {}, fields: { ['__proto__']: { read: true }, title: { read: true } } }];
    const access = compileRules({ roles }).forRequest({ user: alice });
    const parsed = JSON.parse('{"_id": 1, "__proto__": {"polluted": true}, "title": "t", "hidden": 1}') as Record<string, unknown>;
    const visible = access.canReadSync(parsed).document ?? {};
    expect(Object.keys(visible)).toEqual(['_id', '__proto__', 'title']);
    expect(Object.getPrototypeOf(visible)).toBe(Object.prototype);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { _id: 2, title: 't', hidden: 1 });
    expect({ ...access.canReadSync(bare).document }).toEqual({ _id: 2, title: 't' });
  });

  it('runs the whole read flow for a role whose permissions read the document', () => {
    const roles: RoleConfig[] = [{ name: 'r', apply_when: {}, document_filters: { read: { status: 'open' } }, fields: { title: { read: { '%%this': { $ne: 'secret' } } } } }];
    const access = compileRules({ roles }).forRequest({ user: alice });
    expect(access.canReadSync({ _id: 1, status: 'done', title: 't' })).toEqual({ allowed: false, role: 'r' });
    expect(access.canReadSync({ _id: 2, status: 'open', title: 't' }).document).toEqual({ _id: 2, title: 't' });
    expect(access.canReadSync({ _id: 3, status: 'open', title: 'secret' }).document).toEqual({ _id: 3 });
  });

  // Role sets built mostly from constants and user-only expressions, which the plan settles per request.
  const settled = fc.constantFrom<Expression>(true, false, {}, { '%%user.custom_data.team': 'red' }, { '%%user.id': 'bob' }, { '%%user.data.email': { $exists: true } });
  const perDocument = fc.constantFrom<Expression>({ owner_id: '%%user.id' }, { status: 'open' }, { '%%root.n': { $gt: 0 } });
  const expression = fc.oneof({ weight: 3, arbitrary: settled }, { weight: 1, arbitrary: perDocument });
  const permission: fc.Arbitrary<FieldPermission> = fc.oneof(
    fc.record({ read: settled, write: settled }, { requiredKeys: [] }),
    fc.record({ read: fc.constantFrom<Expression>({ '%%this': { $exists: true } }) }),
    fc.record({ fields: fc.record({ x: fc.record({ read: settled }) }) }),
  );
  const roles: fc.Arbitrary<RoleConfig[]> = fc
    .array(
      fc.record(
        {
          apply_when: expression,
          document_filters: fc.record({ read: expression, write: expression }, { requiredKeys: [] }),
          read: expression,
          write: expression,
          fields: fc.dictionary(fc.constantFrom('owner_id', 'title', 'status', 'n', 'meta'), permission, { maxKeys: 4 }),
          additional_fields: fc.record({ read: settled, write: settled }, { requiredKeys: [] }),
        },
        { requiredKeys: ['apply_when'] },
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((bodies) => bodies.map((body, i) => ({ name: `role${i}`, ...body })));
  const user: fc.Arbitrary<RuleUser> = fc.record({
    id: fc.constantFrom('alice', 'bob'),
    data: fc.record({ email: fc.constant('e@example.com') }, { requiredKeys: [] }),
    custom_data: fc.record({ team: fc.constantFrom('red', 'blue') }, { requiredKeys: [] }),
  });
  const doc = fc.record(
    {
      _id: fc.integer({ min: 1, max: 100 }),
      owner_id: fc.constantFrom('alice', 'bob'),
      title: fc.string({ maxLength: 2 }),
      status: fc.constantFrom('open', 'done'),
      n: fc.integer({ min: -2, max: 2 }),
      meta: fc.record({ x: fc.integer(), y: fc.array(fc.integer(), { maxLength: 2 }) }, { requiredKeys: [] }),
      tags: fc.array(fc.constantFrom('a', 'b'), { maxLength: 2 }),
    },
    { requiredKeys: ['_id'] },
  );

  it('decides like the general read flow', async () => {
    await fc.assert(
      fc.asyncProperty(roles, user, fc.array(doc, { maxLength: 5 }), async (roleSet, who, docs) => {
        const rules = compileRules({ roles: roleSet });
        const planned = rules.forRequest({ user: who });
        const general = rules.forRequest({ user: who });
        const visible: unknown[] = [];
        for (const stored of docs) {
          const a = planned.canReadSync(stored);
          // canRead runs the general flow (one synchronous pass through readDocument).
          const b = await general.canRead(stored);
          expect(a).toEqual(b);
          if (a.document) expect(Object.keys(a.document)).toEqual(Object.keys(b.document ?? {}));
          if (b.document) visible.push(b.document);
        }
        expect(rules.forRequest({ user: who }).visibleDocumentsSync(docs)).toEqual(visible);
      }),
      { numRuns: 300 },
    );
  });

  it('with a copy function, hands out equal documents that share no object with the stored ones', async () => {
    await fc.assert(
      fc.asyncProperty(roles, user, fc.array(doc, { maxLength: 5 }), async (roleSet, who, docs) => {
        const rules = compileRules({ roles: roleSet });
        const plain = rules.forRequest({ user: who });
        const copying = rules.forRequest({ user: who, copy: deepCopy });
        const explained = rules.forRequest({ user: who, copy: deepCopy, explain: true });
        expect(copying.copies).toBe(true);
        for (const stored of docs) {
          const reference = plain.canReadSync(stored);
          const stored2 = objectsIn(stored);
          for (const decision of [copying.canReadSync(stored), await copying.canRead(stored), explained.canReadSync(stored)]) {
            expect([decision.allowed, decision.role, decision.document]).toEqual([reference.allowed, reference.role, reference.document]);
            for (const inner of objectsIn(decision.document)) expect(stored2.has(inner)).toBe(false);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
