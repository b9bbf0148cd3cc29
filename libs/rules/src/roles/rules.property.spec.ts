// Property tests over random documents, users and rule sets (fast-check). The oracles below evaluate the
// role expressions directly with compileExpression, independently of the read/write flows under test.
import fc from 'fast-check';
import { Query } from 'mingo';
import { compileExpression } from '../expressions/compile';
import { type EvaluationContext, normalizeUser, type RuleUser } from '../expressions/context';
import { compileRules } from './compiled-rules';
import { type Expression, type FieldPermission, type RoleConfig } from './rule-config';

const ids = ['u1', 'u2', 'u3'];
const teams = ['red', 'blue'];
const fieldNames = ['owner', 'team', 'status', 'n', 'title', 'meta'] as const;

const userArb: fc.Arbitrary<RuleUser> = fc.record({
  id: fc.constantFrom(...ids),
  type: fc.constantFrom('normal', 'server'),
  custom_data: fc.record(
    { team: fc.constantFrom(...teams), roles: fc.subarray(['admin', 'editor']), teams: fc.subarray(teams) },
    { requiredKeys: [] },
  ),
});

const docArb = fc.record(
  {
    _id: fc.integer({ min: 1, max: 1000 }),
    owner: fc.constantFrom(...ids),
    team: fc.constantFrom(...teams),
    status: fc.constantFrom('open', 'done', 'draft'),
    n: fc.integer({ min: -5, max: 5 }),
    title: fc.string({ maxLength: 3 }),
    meta: fc.record({ x: fc.integer({ min: 0, max: 3 }), y: fc.constantFrom('a', 'b') }, { requiredKeys: [] }),
  },
  { requiredKeys: ['_id'] },
);

// Leaf expressions over the user, the document or both; then %or/%and/%not/%nor of them.
const leafArb: fc.Arbitrary<Expression> = fc.oneof(
  fc.constantFrom<Expression>(
    true,
    false,
    {},
    { owner: '%%user.id' },
    { '%%root.owner': '%%user.id' },
    { team: '%%user.custom_data.team' },
    { team: { $in: '%%user.custom_data.teams' } },
    { '%%user.custom_data.roles': 'admin' },
    { '%%user.type': 'server' },
    { status: { $ne: 'draft' } },
    { 'meta.x': { $gte: 2 } },
    { meta: { $exists: true } },
    { '%%prevRoot.status': 'open' },
  ),
  fc.integer({ min: -5, max: 5 }).map((k): Expression => ({ n: { $gt: k } })),
  fc.constantFrom(...teams).map((t): Expression => ({ team: t })),
);

const expressionArb: fc.Arbitrary<Expression> = fc.oneof(
  { weight: 3, arbitrary: leafArb },
  { weight: 1, arbitrary: fc.tuple(leafArb, leafArb).map(([a, b]): Expression => ({ '%or': [a, b] })) },
  { weight: 1, arbitrary: fc.tuple(leafArb, leafArb).map(([a, b]): Expression => ({ '%and': [a, b] })) },
  { weight: 1, arbitrary: leafArb.map((a): Expression => ({ '%not': a })) },
  { weight: 1, arbitrary: fc.tuple(leafArb, leafArb).map(([a, b]): Expression => ({ '%nor': [a, b] })) },
);

const permissionArb: fc.Arbitrary<FieldPermission> = fc.record(
  {
    read: expressionArb,
    write: expressionArb,
    fields: fc.record({ x: fc.record({ read: expressionArb, write: expressionArb }, { requiredKeys: [] }) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);

const roleBodyArb = fc.record(
  {
    apply_when: expressionArb,
    document_filters: fc.record({ read: expressionArb, write: expressionArb }, { requiredKeys: [] }),
    read: expressionArb,
    write: expressionArb,
    insert: expressionArb,
    delete: expressionArb,
    fields: fc.dictionary(fc.constantFrom(...fieldNames), permissionArb, { maxKeys: 3 }),
    additional_fields: fc.record({ read: expressionArb, write: expressionArb }, { requiredKeys: [] }),
  },
  { requiredKeys: ['apply_when'] },
);

const rolesArb: fc.Arbitrary<RoleConfig[]> = fc
  .array(roleBodyArb, { minLength: 1, maxLength: 4 })
  .map((bodies) => bodies.map((body, i) => ({ name: `role${i}`, ...body })));

function evaluate(expression: Expression | undefined, ctx: EvaluationContext): boolean | undefined {
  return expression === undefined ? undefined : compileExpression(expression).evaluateSync(ctx);
}

/** Every dotted path of the leaves of a document. */
function leafPaths(value: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, v]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? leafPaths(v as Record<string, unknown>, path) : [path];
  });
}

function valueAt(doc: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), doc);
}

const runs = { numRuns: 300 };

describe('rules properties', () => {
  it('never returns a document that no role applies to', () => {
    fc.assert(
      fc.property(rolesArb, userArb, fc.array(docArb, { maxLength: 5 }), (roles, user, docs) => {
        const access = compileRules({ roles }).forRequest({ user });
        const decisions = docs.map((doc) => access.canReadSync(doc));
        docs.forEach((doc, i) => {
          const ctx: EvaluationContext = { user: normalizeUser(user), root: doc, prevRoot: doc };
          if (!roles.some((role) => evaluate(role.apply_when, ctx) === true)) {
            expect(decisions[i]).toMatchObject({ allowed: false, role: null });
            expect(decisions[i].document).toBeUndefined();
          }
        });
        // The result of a find is exactly the visible documents, in order.
        expect(access.visibleDocumentsSync(docs)).toEqual(decisions.filter((d) => d.allowed).map((d) => d.document));
      }),
      runs,
    );
  });

  it('lets a query use only paths that no visible document withholds', () => {
    // canReadPath is what data access checks before a user filters, sorts or groups on a field: when it
    // says yes, every document the user can see shows that path exactly as stored.
    const paths = ['owner', 'team', 'status', 'n', 'title', 'meta', 'meta.x', 'meta.y'];
    fc.assert(
      fc.property(rolesArb, userArb, fc.array(docArb, { maxLength: 5 }), (roles, user, docs) => {
        const access = compileRules({ roles }).forRequest({ user });
        for (const path of paths) {
          if (!access.canReadPath(path)) continue;
          for (const doc of docs) {
            const visible = access.canReadSync(doc).document;
            if (visible) expect(valueAt(visible, path), `${path} of ${JSON.stringify(doc)}`).toEqual(valueAt(doc, path));
          }
        }
      }),
      runs,
    );
  });

  it('never shows a field without read permission', () => {
    fc.assert(
      fc.property(rolesArb, userArb, docArb, (roles, user, doc) => {
        const decision = compileRules({ roles }).forRequest({ user, explain: true }).canReadSync(doc);
        if (!decision.document) return;
        const role = roles.find((r) => r.name === decision.role) as RoleConfig;
        const ctx: EvaluationContext = { user: normalizeUser(user), root: doc, prevRoot: doc };
        // Everything shown is in the stored document, unchanged.
        for (const path of leafPaths(decision.document)) expect(valueAt(decision.document, path)).toEqual(valueAt(doc, path));
        // Nothing listed as withheld is shown.
        for (const path of decision.trace?.withheldFields ?? []) expect(valueAt(decision.document, path)).toBeUndefined();
        if (evaluate(role.read, ctx) === true || evaluate(role.write, ctx) === true) return;
        // Field level: each shown top-level field (but _id) has a rule whose read or write holds, or
        // embedded rules whose own read or write holds for each shown embedded field.
        for (const key of Object.keys(decision.document)) {
          if (key === '_id') continue;
          const rule = role.fields?.[key] ?? role.additional_fields;
          expect(rule).toBeDefined();
          if (!rule) continue;
          const fieldCtx = { ...ctx, this: doc[key as keyof typeof doc], prev: doc[key as keyof typeof doc] };
          if (rule.read !== undefined || rule.write !== undefined) {
            expect(evaluate(rule.read, fieldCtx) === true || evaluate(rule.write, fieldCtx) === true).toBe(true);
          } else {
            const embedded = (rule as FieldPermission).fields ?? {};
            for (const inner of Object.keys(decision.document[key] as Record<string, unknown>)) {
              const innerRule = embedded[inner];
              expect(innerRule).toBeDefined();
              const innerValue = (doc[key as keyof typeof doc] as Record<string, unknown>)[inner];
              const innerCtx = { ...ctx, this: innerValue, prev: innerValue };
              expect(evaluate(innerRule?.read, innerCtx) === true || evaluate(innerRule?.write, innerCtx) === true).toBe(true);
            }
          }
        }
      }),
      runs,
    );
  });

  it('decides the same with and without explain, and across interleaved requests', () => {
    fc.assert(
      fc.property(rolesArb, userArb, userArb, fc.array(docArb, { maxLength: 4 }), (roles, user, other, docs) => {
        const rules = compileRules({ roles });
        const plain = rules.forRequest({ user });
        const explained = rules.forRequest({ user, explain: true });
        const interleaved = rules.forRequest({ user: other });
        for (const doc of docs) {
          interleaved.canReadSync(doc);
          const a = plain.canReadSync(doc);
          const b = explained.canReadSync(doc);
          expect([a.allowed, a.role, a.document]).toEqual([b.allowed, b.role, b.document]);
          expect(a.document).toEqual(compileRules({ roles }).forRequest({ user }).canReadSync(doc).document);
        }
      }),
      runs,
    );
  });

  it('lets write imply read, for documents and for fields', () => {
    fc.assert(
      fc.property(rolesArb, userArb, docArb, (roles, user, doc) => {
        const rules = compileRules({ roles });
        const access = rules.forRequest({ user });
        const decision = access.canReadSync(doc);
        const role = roles.find((r) => r.name === access.selectRoleSync(doc));
        if (!role) return;
        const ctx: EvaluationContext = { user: normalizeUser(user), root: doc, prevRoot: doc };
        const filters = role.document_filters;
        const filtersLetWrite = filters?.write === undefined ? filters?.read === undefined || evaluate(filters.read, ctx) === true : evaluate(filters.write, ctx) === true;
        if (!filtersLetWrite) return;
        const read = evaluate(role.read, ctx);
        if (evaluate(role.write, ctx) === true) {
          // Document level: whoever may write the document sees all of it.
          expect(decision.document).toEqual(doc);
          return;
        }
        if (read !== undefined) return;
        // Field level: a field whose write permission holds is shown.
        for (const key of Object.keys(doc)) {
          if (key === '_id') continue;
          const rule = role.fields?.[key] ?? role.additional_fields;
          const fieldCtx = { ...ctx, this: doc[key as keyof typeof doc], prev: doc[key as keyof typeof doc] };
          if (rule && evaluate(rule.write, fieldCtx) === true) expect(decision.document?.[key]).toEqual(doc[key as keyof typeof doc]);
        }
      }),
      runs,
    );
  });

  it('decides writes without changing anything, the same way every time', () => {
    fc.assert(
      fc.property(rolesArb, userArb, docArb, docArb, (roles, user, pre, changes) => {
        const post = { ...pre, ...changes, _id: pre._id };
        const [preCopy, postCopy, rolesCopy, userCopy] = [structuredClone(pre), structuredClone(post), structuredClone(roles), structuredClone(user)];
        const access = compileRules({ roles }).forRequest({ user });
        const first = [access.checkInsertSync(post), access.checkUpdateSync(pre, post), access.checkDeleteSync(pre)];
        const again = compileRules({ roles }).forRequest({ user });
        const second = [again.checkInsertSync(post), again.checkUpdateSync(pre, post), again.checkDeleteSync(pre)];
        expect(first.map((d) => [d.allowed, d.role, d.error?.message])).toEqual(second.map((d) => [d.allowed, d.role, d.error?.message]));
        for (const decision of first) {
          if (!decision.allowed) expect(decision.error?.errorCode).toBe('SchemaValidationFailedWrite');
        }
        expect([pre, post, roles, user]).toEqual([preCopy, postCopy, rolesCopy, userCopy]);
      }),
      runs,
    );
  });

  it('pushes down a query that matches every readable document, and only those when exact', () => {
    fc.assert(
      fc.property(rolesArb, userArb, fc.array(docArb, { maxLength: 6 }), (roles, user, docs) => {
        const access = compileRules({ roles }).forRequest({ user });
        const prepared = access.prepareQuerySync();
        const readable = docs.filter((doc) => access.canReadSync(doc).allowed);
        if (prepared.matchesNothing) {
          expect(readable).toEqual([]);
          return;
        }
        const engine = new Query(prepared.query);
        for (const doc of readable) expect(engine.test(doc)).toBe(true);
        // When the pushdown claims to be exact, the store's answer is exactly the readable documents.
        if (prepared.exact) expect(docs.filter((doc) => engine.test(doc))).toEqual(readable);
      }),
      runs,
    );
  });
});
