import { RulesErrorCode } from '../errors/rules.error';
import { compileRules } from '../roles/compiled-rules';
import { evaluateRules } from './evaluate-rules';

const collection = {
  database: 'db',
  collection: 'notes',
  roles: [
    { name: 'owner', apply_when: { owner: '%%user.id' }, read: true, write: true },
    { name: 'reader', apply_when: {}, fields: { title: { read: true } } },
  ],
};
const user = { id: 'u1' };

describe('evaluateRules (admin evaluate endpoint)', () => {
  it('explains a read with inline rules and returns the visible document', async () => {
    const result = await evaluateRules({ user, operation: 'read', rules: { collection }, document: { _id: 1, owner: 'u2', title: 't', body: 'b' } });
    expect(result).toMatchObject({ allowed: true, role: 'reader', document: { _id: 1, title: 't' } });
    expect(result.trace.withheldFields).toEqual(['owner', 'body']);
  });

  it('explains a refused update with the error body a client would get', async () => {
    const result = await evaluateRules({
      user,
      operation: 'update',
      rules: compileRules(collection),
      preImage: { _id: 1, owner: 'u2', title: 't' },
      document: { _id: 1, owner: 'u2', title: 'x' },
    });
    expect(result).toMatchObject({ allowed: false, role: 'reader', error: { error: 'update not permitted', error_code: 'SchemaValidationFailedWrite' } });
    expect(result.trace.decidedBy).toBe('roles[1](reader).fields');
  });

  it('explains inserts and deletes', async () => {
    expect((await evaluateRules({ user, operation: 'insert', rules: { collection }, document: { owner: 'u1' } })).allowed).toBe(true);
    expect((await evaluateRules({ user, operation: 'delete', rules: { collection }, document: { owner: 'u2' } })).allowed).toBe(false);
  });

  it('explains partition reads and writes', async () => {
    const partitionPermissions = { read: true, write: { '%%partition': '%%user.id' } };
    const read = await evaluateRules({ user, operation: 'partitionRead', partition: 'team', partitionPermissions });
    const write = await evaluateRules({ user, operation: 'partitionWrite', partition: 'team', partitionPermissions });
    expect([read.allowed, write.allowed]).toEqual([true, false]);
    expect(write.trace.evaluations.map((e) => e.at)).toEqual(['partition.permissions.write', 'partition.permissions.read']);
  });

  it('rejects incomplete input', async () => {
    await expect(evaluateRules({ user, operation: 'update', rules: { collection }, document: {} })).rejects.toMatchObject({ errorCode: RulesErrorCode.InvalidRule });
    await expect(evaluateRules({ user, operation: 'read', document: {} })).rejects.toMatchObject({ errorCode: RulesErrorCode.InvalidRule });
    await expect(evaluateRules({ user, operation: 'partitionRead', partition: 'p' })).rejects.toMatchObject({ errorCode: RulesErrorCode.InvalidRule });
    await expect(evaluateRules({ user, operation: 'read', rules: {}, document: {} })).rejects.toMatchObject({ errorCode: RulesErrorCode.NoMatchingRuleFound });
  });
});
