import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { type RuleUser } from '../expressions/context';
import { compileRules, type RequestContext } from './compiled-rules';
import { type RoleConfig, type RuleSetConfig } from './rule-config';

const alice: RuleUser = { id: 'alice', custom_data: { team: 'red', roles: ['member'] } };

function rulesWith(...roles: RoleConfig[]) {
  return compileRules({ database: 'db', collection: 'things', roles });
}

function access(roles: RoleConfig[], ctx: RequestContext = { user: alice }) {
  return rulesWith(...roles).forRequest(ctx);
}

describe('role selection', () => {
  it('hides a document when no role applies', () => {
    const decision = access([{ name: 'owner', apply_when: { owner: '%%user.id' }, read: true }], { user: alice, explain: true }).canReadSync({ owner: 'bob' });
    expect(decision).toMatchObject({ allowed: false, role: null });
    expect(decision.document).toBeUndefined();
    expect(decision.trace?.reason).toBe('hidden: no role applies');
  });

  it('assigns the first role whose apply_when holds', () => {
    const a = access([
      { name: 'first', apply_when: { '%%user.custom_data.team': 'red' }, read: false },
      { name: 'second', apply_when: {}, read: true },
    ]);
    expect(a.selectRoleSync({ x: 1 })).toBe('first');
    expect(a.canReadSync({ x: 1 }).allowed).toBe(false);
  });

  it('treats a role without apply_when as always applying', () => {
    expect(access([{ name: 'any', read: true }]).canReadSync({ a: 1 }).allowed).toBe(true);
  });

  it('chooses a role per document', () => {
    const a = access([
      { name: 'mine', apply_when: { owner: '%%user.id' }, read: true },
      { name: 'public', apply_when: { public: true }, read: true, fields: {} },
    ]);
    expect(a.selectRoleSync({ owner: 'alice' })).toBe('mine');
    expect(a.selectRoleSync({ owner: 'bob', public: true })).toBe('public');
    expect(a.selectRoleSync({ owner: 'bob' })).toBeNull();
  });

  it('uses the default roles only for a collection without roles', () => {
    const defaults: RuleSetConfig = { roles: [{ name: 'default', apply_when: {}, read: true }] };
    expect(compileRules({ database: 'db', collection: 'c', roles: [] }, defaults).roleSource).toBe('default');
    expect(compileRules(undefined, defaults).forRequest({ user: alice }).canReadSync({ a: 1 }).role).toBe('default');
    const withRoles = compileRules({ database: 'db', collection: 'c', roles: [{ name: 'none', apply_when: false, read: true }] }, defaults);
    expect(withRoles.roleSource).toBe('collection');
    expect(withRoles.forRequest({ user: alice }).canReadSync({ a: 1 }).allowed).toBe(false);
  });

  it('fails with NoMatchingRuleFound when the namespace has no rules at all', () => {
    const rules = compileRules(undefined, undefined, { namespace: 'my_database.users' });
    let error: unknown;
    try {
      rules.forRequest({ user: alice });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RulesError);
    expect((error as RulesError).httpStatus).toBe(403);
    expect((error as RulesError).toBody()).toEqual({ error: "no rule exists for namespace 'my_database.users'", error_code: 'NoMatchingRuleFound' });
  });
});

describe('read evaluation', () => {
  const doc = { _id: 1, owner: 'alice', title: 't', secret: 's' };

  it('shows the whole document when read is true', () => {
    const decision = access([{ name: 'r', read: true }]).canReadSync(doc);
    expect(decision.document).toBe(doc);
  });

  it('shows the whole document when write is true (write implies read)', () => {
    expect(access([{ name: 'w', write: true }]).canReadSync(doc).document).toBe(doc);
    expect(access([{ name: 'w', read: false, write: true }]).canReadSync(doc).document).toBe(doc);
  });

  it('hides the document when read is false and write is not true, whatever the field rules say', () => {
    const decision = access([{ name: 'r', read: false, fields: { title: { read: true } } }]).canReadSync(doc);
    expect(decision.allowed).toBe(false);
  });

  it('hides the document when neither read nor write is true and there are no field rules', () => {
    expect(access([{ name: 'r' }]).canReadSync(doc).allowed).toBe(false);
    expect(access([{ name: 'r', write: false }]).canReadSync(doc).allowed).toBe(false);
  });

  it('falls through to field rules when read is undefined and write is false', () => {
    const decision = access([{ name: 'r', write: false, fields: { title: { read: true } } }]).canReadSync(doc);
    expect(decision.document).toEqual({ _id: 1, title: 't' });
  });

  it('evaluates read and write expressions against the document', () => {
    const a = access([{ name: 'r', read: { owner: '%%user.id' } }]);
    expect(a.canReadSync(doc).allowed).toBe(true);
    expect(a.canReadSync({ ...doc, owner: 'bob' }).allowed).toBe(false);
  });

  it('does not let an insert-only role read (%%prevRoot is the stored document during reads)', () => {
    const a = access([{ name: 'insert-only', write: { '%%prevRoot': { '%exists': false } }, insert: true }]);
    expect(a.canReadSync(doc).allowed).toBe(false);
    expect(a.checkInsertSync(doc).allowed).toBe(true);
    expect(a.checkUpdateSync(doc, { ...doc, title: 'x' }).allowed).toBe(false);
  });

  describe('document filters', () => {
    const role = (filters: RoleConfig['document_filters']): RoleConfig => ({ name: 'r', document_filters: filters, read: true });

    it('hides documents that fail document_filters.read', () => {
      const a = access([role({ read: { owner: '%%user.id' }, write: false })]);
      expect(a.canReadSync(doc).allowed).toBe(true);
      expect(a.canReadSync({ ...doc, owner: 'bob' }).allowed).toBe(false);
    });

    it('shows documents that pass document_filters.write only (write implies read)', () => {
      const a = access([role({ read: false, write: { owner: '%%user.id' } })]);
      expect(a.canReadSync(doc).allowed).toBe(true);
    });

    it('treats an undefined document_filters.read as true outside Sync (decision 0010)', () => {
      const a = access([role({ write: { workspace: 'alpha' } })]);
      expect(a.canReadSync({ workspace: 'beta' }).allowed).toBe(true);
    });

    it('does not treat an undefined document_filters.write as granting reads', () => {
      const a = access([role({ read: { owner: '%%user.id' } })]);
      expect(a.canReadSync({ ...doc, owner: 'bob' }).allowed).toBe(false);
    });
  });

  describe('search', () => {
    it('hides documents from search when search is false, not from a plain read', () => {
      const a = access([{ name: 'r', read: true, search: false }]);
      expect(a.canReadSync(doc, { search: true }).allowed).toBe(false);
      expect(a.canReadSync(doc).allowed).toBe(true);
    });

    it('allows search when search is undefined (decision 0010)', () => {
      expect(access([{ name: 'r', read: true }]).canReadSync(doc, { search: true }).allowed).toBe(true);
    });

    it('evaluates a search expression', () => {
      const a = access([{ name: 'r', read: true, search: { '%%user.custom_data.team': 'blue' } }]);
      expect(a.canReadSync(doc, { search: true }).allowed).toBe(false);
    });
  });

  describe('field level', () => {
    const fieldRole = (extra: Partial<RoleConfig>): RoleConfig => ({ name: 'f', ...extra });

    it('removes fields without read permission and keeps _id', () => {
      const decision = access([fieldRole({ fields: { title: { read: true }, secret: { read: false } } })], { user: alice, explain: true }).canReadSync(doc);
      expect(decision.document).toEqual({ _id: 1, title: 't' });
      expect(decision.trace?.withheldFields.sort()).toEqual(['owner', 'secret']);
    });

    it('lets a field write permission imply read', () => {
      expect(access([fieldRole({ fields: { secret: { write: true } } })]).canReadSync(doc).document).toEqual({ _id: 1, secret: 's' });
    });

    it('applies additional_fields to fields without their own rule', () => {
      const decision = access([fieldRole({ fields: { secret: { read: false } }, additional_fields: { read: true } })]).canReadSync(doc);
      expect(decision.document).toEqual({ _id: 1, owner: 'alice', title: 't' });
    });

    it('evaluates field rules with %%this and the document', () => {
      const a = access([fieldRole({ fields: { title: { read: { '%%this': 't' } }, secret: { read: { owner: '%%user.id' } } } })]);
      expect(a.canReadSync(doc).document).toEqual({ _id: 1, title: 't', secret: 's' });
      expect(a.canReadSync({ ...doc, owner: 'bob', title: 'u' }).document).toEqual({ _id: 1 });
    });

    it('lets a permission on a parent field decide its whole subtree', () => {
      const a = access([fieldRole({ fields: { meta: { read: true, fields: { hidden: { read: false } } } } })]);
      expect(a.canReadSync({ _id: 1, meta: { a: 1, hidden: 2 } }).document).toEqual({ _id: 1, meta: { a: 1, hidden: 2 } });
      const denied = access([fieldRole({ fields: { meta: { read: false, fields: { a: { read: true } } } } })]);
      expect(denied.canReadSync({ _id: 1, meta: { a: 1 } }).document).toEqual({ _id: 1 });
    });

    it('applies embedded field rules to each document of an array', () => {
      const a = access([fieldRole({ fields: { items: { fields: { name: { read: true } } } } })]);
      expect(a.canReadSync({ _id: 1, items: [{ name: 'a', price: 1 }, { name: 'b', price: 2 }] }).document).toEqual({
        _id: 1,
        items: [{ name: 'a' }, { name: 'b' }],
      });
    });

    it('leaves out an embedded document whose fields are all withheld', () => {
      const a = access([fieldRole({ fields: { meta: { fields: { a: { read: false } } } } })]);
      expect(a.canReadSync({ _id: 1, meta: { a: 1, b: 2 } }).document).toEqual({ _id: 1 });
    });

    it('keeps a __proto__ key of a parsed document as a key', () => {
      const stored = JSON.parse('{"_id":1,"__proto__":{"x":1},"title":"t"}') as Record<string, unknown>;
      const fields = JSON.parse('{"__proto__": {"read": true}, "title": {"read": false}}') as RoleConfig['fields'];
      const visible = access([fieldRole({ fields })]).canReadSync(stored).document;
      expect(Object.getPrototypeOf(visible)).toBe(Object.prototype);
      expect(Object.keys(visible ?? {})).toEqual(['_id', '__proto__']);
    });

    it('does not change the stored document', () => {
      const stored = { _id: 1, a: 1, nested: { b: 2, c: 3 } };
      const copy = structuredClone(stored);
      access([fieldRole({ fields: { nested: { fields: { b: { read: true } } } } })]).canReadSync(stored);
      expect(stored).toEqual(copy);
    });
  });
});

describe('write evaluation', () => {
  const doc = { _id: 1, owner: 'alice', title: 't' };

  it('refuses a write when no role applies, with App Services error code and message', () => {
    const decision = access([{ name: 'owner', apply_when: { owner: '%%user.id' }, write: true }]).checkInsertSync({ _id: 7, owner: 'bob' });
    expect(decision.allowed).toBe(false);
    expect(decision.error?.toBody()).toEqual({ error: 'insert not permitted', error_code: 'SchemaValidationFailedWrite' });
    expect(decision.error?.reason).toContain('no role applies');
    expect(decision.error?.reason).toContain('db.things');
  });

  it('refuses writes when document_filters.write fails', () => {
    const a = access([{ name: 'r', document_filters: { read: true, write: { owner: '%%user.id' } }, read: true, write: true }]);
    expect(a.checkInsertSync({ owner: 'bob' }).allowed).toBe(false);
    expect(a.checkInsertSync({ owner: 'alice' }).allowed).toBe(true);
  });

  it('requires document_filters.write before and after an update', () => {
    const a = access([{ name: 'r', document_filters: { read: true, write: { owner: '%%user.id' } }, write: true }]);
    expect(a.checkUpdateSync(doc, { ...doc, title: 'x' }).allowed).toBe(true);
    expect(a.checkUpdateSync(doc, { ...doc, owner: 'bob' }).allowed).toBe(false);
    expect(a.checkUpdateSync({ ...doc, owner: 'bob' }, doc).allowed).toBe(false);
  });

  it('refuses when write is false even with field-level writes (v2 semantics, decision 0010)', () => {
    const a = access([{ name: 'r', read: true, write: false, fields: { title: { write: true } } }]);
    expect(a.checkUpdateSync(doc, { ...doc, title: 'x' }).allowed).toBe(false);
  });

  it('checks every changed field when write is undefined', () => {
    const a = access([{ name: 'r', read: true, fields: { title: { write: true } }, additional_fields: { write: false } }], { user: alice, explain: true });
    expect(a.checkUpdateSync(doc, { ...doc, title: 'x' }).allowed).toBe(true);
    const refused = a.checkUpdateSync(doc, { ...doc, owner: 'bob' });
    expect(refused.allowed).toBe(false);
    expect(refused.error?.reason).toContain('owner');
    expect(refused.trace?.withheldFields).toEqual(['owner']);
    // Removing a field is a change to it: title is writable, so removing it is allowed.
    expect(a.checkUpdateSync(doc, { _id: 1, owner: 'alice' }).allowed).toBe(true);
  });

  it('checks embedded field writes path by path', () => {
    const a = access([{ name: 'r', read: true, fields: { meta: { fields: { color: { write: true } } } } }]);
    const pre = { _id: 1, meta: { color: 'red', size: 1 } };
    expect(a.checkUpdateSync(pre, { _id: 1, meta: { color: 'blue', size: 1 } }).allowed).toBe(true);
    expect(a.checkUpdateSync(pre, { _id: 1, meta: { color: 'red', size: 2 } }).allowed).toBe(false);
  });

  it('evaluates field write rules with %%prev and %%this (a schema-style validate)', () => {
    const a = access([{ name: 'r', read: true, fields: { owner_id: { write: { '%or': [{ '%%prev': { '%exists': false } }, { '%%prev': '%%this' }] } } } }]);
    expect(a.checkInsertSync({ owner_id: 'a' }).allowed).toBe(true);
    expect(a.checkUpdateSync({ _id: 1 }, { _id: 1, owner_id: 'b' }).allowed).toBe(true);
    const refused = a.checkUpdateSync({ _id: 1, owner_id: 'a' }, { _id: 1, owner_id: 'b' });
    expect(refused.allowed).toBe(false);
    expect(refused.error?.errorCode).toBe(RulesErrorCode.SchemaValidationFailedWrite);
  });

  it('sees the post-image as %%root and the pre-image as %%prevRoot in write', () => {
    const a = access([{ name: 'r', read: true, write: { '%%root.status': 'done', '%%prevRoot.status': 'open' } }]);
    expect(a.checkUpdateSync({ status: 'open' }, { status: 'done' }).allowed).toBe(true);
    expect(a.checkUpdateSync({ status: 'done' }, { status: 'open' }).allowed).toBe(false);
  });

  it('chooses the role of an update on the stored document, so a write cannot move a document into a role', () => {
    const a = access([
      { name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true },
      { name: 'reader', apply_when: {}, read: true, write: false },
    ]);
    const decision = a.checkUpdateSync({ _id: 1, owner: 'bob' }, { _id: 1, owner: 'alice' });
    expect(decision).toMatchObject({ allowed: false, role: 'reader' });
  });

  it('refuses an insert when insert is false, even with write true', () => {
    const a = access([{ name: 'r', write: true, insert: false }]);
    expect(a.checkInsertSync(doc).allowed).toBe(false);
    expect(a.checkUpdateSync(doc, { ...doc, title: 'x' }).allowed).toBe(true);
  });

  it('evaluates an insert expression against the new document', () => {
    const a = access([{ name: 'r', write: true, insert: { owner: '%%user.id' } }]);
    expect(a.checkInsertSync(doc).allowed).toBe(true);
    expect(a.checkInsertSync({ ...doc, owner: 'bob' }).allowed).toBe(false);
  });

  it('requires every field of a new document to be writable when write is undefined', () => {
    const a = access([{ name: 'r', fields: { title: { write: true } } }]);
    expect(a.checkInsertSync({ _id: 1, title: 't' }).allowed).toBe(true);
    expect(a.checkInsertSync({ _id: 1, title: 't', owner: 'x' }).allowed).toBe(false);
  });

  it('allows delete by default once the role can write, and refuses it when delete is false', () => {
    expect(access([{ name: 'r', write: true }]).checkDeleteSync(doc).allowed).toBe(true);
    expect(access([{ name: 'r', write: true, delete: false }]).checkDeleteSync(doc).error?.message).toBe('delete not permitted');
    expect(access([{ name: 'r', read: true, delete: true }]).checkDeleteSync(doc).allowed).toBe(false);
  });

  it('refuses an update with update not permitted', () => {
    const decision = access([{ name: 'r', read: true }]).checkUpdateSync(doc, { ...doc, title: 'x' });
    expect(decision.error?.toBody()).toEqual({ error: 'update not permitted', error_code: 'SchemaValidationFailedWrite' });
  });

  it('does not change the pre- or post-image', () => {
    const pre = { _id: 1, a: { b: 1 } };
    const post = { _id: 1, a: { b: 2 } };
    const [preCopy, postCopy] = [structuredClone(pre), structuredClone(post)];
    access([{ name: 'r', fields: { a: { fields: { b: { write: false } } } } }]).checkUpdateSync(pre, post);
    expect([pre, post]).toEqual([preCopy, postCopy]);
  });
});

describe('rule errors', () => {
  it('rejects duplicate role names', () => {
    expect(() => rulesWith({ name: 'a' }, { name: 'a' })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.InvalidRule }));
  });

  it('rejects a role without a name or with a name over 100 characters', () => {
    expect(() => rulesWith({ name: '' })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.InvalidRule }));
    expect(() => rulesWith({ name: 'x'.repeat(101) })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.InvalidRule }));
  });

  it('names the location of a malformed expression', () => {
    expect(() => rulesWith({ name: 'bad', read: { x: { $where: 'true' } } })).toThrow(/roles\[0\]\(bad\)\.read/);
  });

  it('rejects a malformed field permission', () => {
    expect(() => rulesWith({ name: 'bad', fields: { a: { read: { '%%nope': 1 } } } })).toThrow(/fields\.a\.read/);
  });
});

describe('rules that call %function', () => {
  const roles: RoleConfig[] = [{ name: 'vip', apply_when: { '%%true': { '%function': { name: 'isVip', arguments: ['%%user.id'] } } }, read: true }];

  it('need the asynchronous entry points', async () => {
    const rules = rulesWith(...roles);
    expect(rules.async).toBe(true);
    const a = rules.forRequest({ user: alice, callFunction: () => true });
    expect(() => a.canReadSync({ a: 1 })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.AsyncEvaluationRequired }));
    expect((await a.canRead({ a: 1 })).allowed).toBe(true);
  });

  it('call a document-independent apply_when function once per request', async () => {
    let calls = 0;
    const a = rulesWith(...roles).forRequest({ user: alice, callFunction: () => ++calls > 0 });
    const visible = await a.visibleDocuments([{ a: 1 }, { a: 2 }, { a: 3 }]);
    expect(visible).toHaveLength(3);
    expect(calls).toBe(1);
  });

  it('keep several functions per decision in order, across documents of a request', async () => {
    const calls: string[] = [];
    const rules = rulesWith(
      { name: 'staff', apply_when: { '%%true': { '%function': { name: 'isStaff', arguments: ['%%user.id'] } } }, read: true },
      { name: 'shared', apply_when: { '%%true': { '%function': { name: 'isShared', arguments: ['%%root._id'] } } }, read: { '%%true': { '%function': { name: 'canSee', arguments: ['%%root._id'] } } } },
    );
    const a = rules.forRequest({
      user: alice,
      callFunction: async (name, args) => {
        calls.push(`${name}(${String(args[0])})`);
        if (name === 'isStaff') return false;
        if (name === 'isShared') return args[0] !== 3;
        return args[0] === 1;
      },
    });
    const decisions = [];
    for (const _id of [1, 2, 3]) decisions.push(await a.canRead({ _id }));
    expect(decisions.map((d) => [d.role, d.allowed])).toEqual([
      ['shared', true],
      ['shared', false],
      [null, false],
    ]);
    expect(calls).toEqual(['isStaff(alice)', 'isShared(1)', 'canSee(1)', 'isShared(2)', 'canSee(2)', 'isShared(3)']);
  });

  it('propagate a failing function as RuleFunctionFailed', async () => {
    const a = rulesWith(...roles).forRequest({
      user: alice,
      callFunction: () => Promise.reject(new Error('down')),
    });
    await expect(a.canRead({ a: 1 })).rejects.toMatchObject({ errorCode: RulesErrorCode.RuleFunctionFailed });
  });
});

describe('request values', () => {
  it('are read afresh for each request, even from an object the caller updates in place', () => {
    const rules = rulesWith({ name: 'flag', apply_when: { '%%values.open': true }, read: true });
    const values: Record<string, unknown> = { open: true };
    expect(rules.forRequest({ user: alice, values }).canReadSync({ a: 1 }).allowed).toBe(true);
    values.open = false;
    expect(rules.forRequest({ user: alice, values }).canReadSync({ a: 1 }).allowed).toBe(false);
  });
});

describe('fields the rules read', () => {
  it('lists the document fields of every role expression, for the store to fetch', () => {
    const rules = rulesWith(
      { name: 'a', apply_when: { owner: '%%user.id', '%%root.meta.team': 'red' }, read: { '%%prevRoot.status': 'open' } },
      { name: 'b', apply_when: { '%%user.id': 'x' }, fields: { title: { read: { '%%root.visible': true } } } },
    );
    expect([...(rules.documentFields as Set<string>)].sort()).toEqual(['meta.team', 'owner', 'status', 'visible']);
  });

  it('asks for the whole document when a rule reads %%root as a whole', () => {
    expect(rulesWith({ name: 'a', read: { '%%root': { $exists: true } } }).documentFields).toBe('all');
  });
});

describe('convenience entry points', () => {
  const rules = rulesWith({ name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true }, { name: 'fields', fields: { title: { read: true } } });
  const ctx = { user: alice };

  it('select the role, read, project and check writes in one call', async () => {
    expect(await rules.selectRole(ctx, { owner: 'alice' })).toBe('owner');
    expect((await rules.canRead(ctx, { owner: 'alice' })).allowed).toBe(true);
    expect(await rules.project(ctx, { _id: 2, owner: 'bob', title: 't' })).toEqual({ _id: 2, title: 't' });
    expect((await rules.checkInsert(ctx, { owner: 'alice' })).allowed).toBe(true);
    expect((await rules.checkUpdate(ctx, { owner: 'bob' }, { owner: 'bob', title: 'x' })).allowed).toBe(false);
    expect((await rules.checkDelete(ctx, { owner: 'alice' })).allowed).toBe(true);
  });
});
