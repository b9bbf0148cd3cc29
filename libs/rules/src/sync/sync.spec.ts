import { Long, ObjectId } from 'bson';
import { RulesErrorCode } from '../errors/rules.error';
import { compileRules } from '../roles/compiled-rules';
import { type RoleConfig } from '../roles/rule-config';
import { checkSyncCompatibility, openSyncSession } from './flexible-sync';
import { compilePartitionPermissions, syncPermissions } from './partition-permissions';

const compatible: RoleConfig = {
  name: 'owner',
  apply_when: {},
  document_filters: { read: { owner_id: '%%user.id' }, write: { owner_id: '%%user.id' } },
  read: true,
  write: true,
};

function reasons(role: RoleConfig, queryableFields?: string[]): string[] {
  const rules = compileRules({ roles: [role] });
  return checkSyncCompatibility(rules.roles[0], { queryableFields }).reasons;
}

describe('Flexible Sync compatibility', () => {
  it('accepts a role with both document filters and boolean permissions', () => {
    expect(reasons(compatible)).toEqual([]);
  });

  it('requires both document filters', () => {
    expect(reasons({ ...compatible, document_filters: { read: true } })).toEqual([expect.stringContaining('document_filters.write must be defined')]);
  });

  it('refuses %function and %%request in document filters', () => {
    expect(reasons({ ...compatible, document_filters: { read: { '%%true': { '%function': { name: 'f' } } }, write: true } })).toEqual([
      expect.stringContaining('%function'),
    ]);
    expect(reasons({ ...compatible, document_filters: { read: { '%%request.remoteIPAddress': 'x' }, write: true } })).toEqual([
      expect.stringContaining('%%request'),
    ]);
  });

  it('refuses non-boolean read/write and field permissions, and field rules on _id', () => {
    const found = reasons({ ...compatible, read: { owner_id: '%%user.id' }, fields: { _id: { read: true }, title: { write: { a: 1 } } } });
    expect(found).toEqual([
      expect.stringContaining('.read must be a boolean literal'),
      expect.stringContaining('_id'),
      expect.stringContaining('title.write must be a boolean literal'),
    ]);
  });

  it('refuses document filters on non-queryable fields when the queryable fields are known', () => {
    expect(reasons(compatible, ['owner_id'])).toEqual([]);
    expect(reasons(compatible, ['team'])).toEqual([expect.stringContaining('non-queryable field "owner_id"'), expect.stringContaining('non-queryable')]);
  });

  it('refuses an apply_when that reads the document', () => {
    expect(reasons({ ...compatible, apply_when: { owner_id: '%%user.id' } })).toEqual([expect.stringContaining('apply_when reads document fields')]);
  });
});

describe('Flexible Sync sessions', () => {
  it('give the queries that select what syncs down and what may be written', async () => {
    const session = await openSyncSession(compileRules({ roles: [compatible] }), { user: { id: 'u1' } });
    expect(session.readQuery).toEqual({ $or: [{ owner_id: 'u1' }, { owner_id: 'u1' }] });
    expect(session.writeQuery).toEqual({ owner_id: 'u1' });
  });

  it('deny everything when no role applies', async () => {
    const session = await openSyncSession(compileRules({ roles: [{ ...compatible, apply_when: false }] }), { user: { id: 'u1' }, explain: true });
    expect(session).toMatchObject({ role: null, denied: true, readQuery: false });
    expect(session.canRead({ owner_id: 'u1' })).toBe(false);
    expect(session.trace?.evaluations).toHaveLength(1);
  });

  it('evaluate an apply_when that calls %function once per session', async () => {
    let calls = 0;
    const rules = compileRules({ roles: [{ ...compatible, apply_when: { '%%true': { '%function': { name: 'ok' } } } }] });
    const session = await openSyncSession(rules, { user: { id: 'u1' }, callFunction: () => ++calls > 0 });
    expect(session.role).toBe('owner');
    expect([session.canRead({ owner_id: 'u1' }), session.canRead({ owner_id: 'u2' })]).toEqual([true, false]);
    expect(calls).toBe(1);
  });

  it('apply field permissions to what syncs down', async () => {
    const role: RoleConfig = { name: 'fields', apply_when: {}, document_filters: { read: true, write: false }, fields: { title: { read: true }, secret: { read: false } } };
    const session = await openSyncSession(compileRules({ roles: [role] }), { user: { id: 'u1' } });
    expect(session.read({ _id: 1, title: 't', secret: 's' })).toEqual({ _id: 1, title: 't' });
    expect(session.canWrite({ _id: 1 })).toBe(false);
  });

  it('check client writes against the write filter before and after (compensating writes)', async () => {
    const session = await openSyncSession(compileRules({ roles: [compatible] }), { user: { id: 'u1' } });
    expect(session.checkWrite('insert', undefined, { _id: 1, owner_id: 'u1' }).allowed).toBe(true);
    expect(session.checkWrite('insert', undefined, { _id: 1, owner_id: 'u2' }).allowed).toBe(false);
    expect(session.checkWrite('update', { _id: 1, owner_id: 'u1', a: 1 }, { _id: 1, owner_id: 'u1', a: 2 }).allowed).toBe(true);
    expect(session.checkWrite('update', { _id: 1, owner_id: 'u1' }, { _id: 1, owner_id: 'u2' }).allowed).toBe(false);
    expect(session.checkWrite('delete', { _id: 1, owner_id: 'u2' }, undefined).allowed).toBe(false);
  });

  it('do not let write true on a read-only role', async () => {
    const session = await openSyncSession(compileRules({ roles: [{ ...compatible, write: false }] }), { user: { id: 'u1' } });
    expect(session.canRead({ owner_id: 'u1' })).toBe(true);
    expect(session.canWrite({ owner_id: 'u1' })).toBe(false);
    expect(session.writeQuery).toBe(false);
  });
});

describe('Partition-Based Sync permissions', () => {
  it('deny when a permission is not defined', () => {
    expect(compilePartitionPermissions({}).evaluateSync({ user: { id: 'u1' }, partition: 'p' })).toEqual({ read: false, write: false });
  });

  it('accept true and false as global permissions', () => {
    expect(compilePartitionPermissions({ read: true, write: false }).evaluateSync({ user: { id: 'u1' }, partition: 'p' })).toEqual({ read: true, write: false });
  });

  it('let write imply read without evaluating read', () => {
    const decision = compilePartitionPermissions({ read: false, write: { '%%partition': '%%user.id' } }).evaluateSync({
      user: { id: 'u1' },
      partition: 'u1',
      explain: true,
    });
    expect(decision).toMatchObject({ read: true, write: true });
    expect(decision.trace?.evaluations.map((e) => e.at)).toEqual(['partition.permissions.write']);
  });

  it('compare %%partition against a list of user ids', () => {
    const permissions = compilePartitionPermissions({ read: { '%%user.id': { $in: ['u1', 'u2'] } } });
    expect(permissions.evaluateSync({ user: { id: 'u2' }, partition: 'x' }).read).toBe(true);
    expect(permissions.evaluateSync({ user: { id: 'u3' }, partition: 'x' }).read).toBe(false);
  });

  it('compare ObjectId and number partition values', () => {
    const hex = '5f4863d1b2f3a1b2c3d4e623';
    const byOid = compilePartitionPermissions({ write: { '%%partition': { '%stringToOid': '%%user.id' } } });
    expect(byOid.evaluateSync({ user: { id: hex }, partition: ObjectId.createFromHexString(hex) })).toEqual({ read: true, write: true });
    expect(byOid.evaluateSync({ user: { id: hex }, partition: hex })).toEqual({ read: false, write: false });
    const byNumber = compilePartitionPermissions({ read: { '%%partition': { $gte: 100 } } });
    expect(byNumber.evaluateSync({ user: { id: 'u' }, partition: Long.fromNumber(150) }).read).toBe(true);
  });

  it('call function rules through the callback (syncPermissions)', async () => {
    const decision = await syncPermissions(
      { read: true, write: { '%%true': { '%function': { name: 'canWrite', arguments: ['%%partition', '%%user.id'] } } } },
      { user: { id: 'u1' }, partition: 'team=7', callFunction: (_n, [partition, id]) => partition === 'team=7' && id === 'u1' },
    );
    expect(decision).toMatchObject({ read: true, write: true });
  });

  it('reject document expansions', () => {
    expect(() => compilePartitionPermissions({ read: { owner: '%%user.id' } })).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.InvalidRule }));
    expect(() => compilePartitionPermissions({ read: { '%%root.a': 1 } })).toThrow(/partition\.permissions\.read/);
  });
});
