import { Binary, Decimal128, Int32, Long, ObjectId, UUID } from 'bson';
import { RulesError, RulesErrorCode } from '../errors/rules.error';
import { compileExpression, type ExpressionKind } from './compile';
import { type EvaluationContext } from './context';
import { evaluateExpression } from './evaluate';

const user = { id: 'u1', type: 'normal', data: { email: 'a@x', name: 'Ann' }, custom_data: { roles: ['editor'], team: 't1' }, identities: [{ id: 'i1', providerType: 'local-userpass' }] };

function sync(expression: unknown, ctx: EvaluationContext = {}, kind: ExpressionKind = 'document'): boolean {
  return compileExpression(expression, { kind }).evaluateSync({ user, ...ctx });
}

function compileError(expression: unknown, kind: ExpressionKind = 'document'): RulesError {
  try {
    compileExpression(expression, { kind });
  } catch (error) {
    if (error instanceof RulesError) return error;
    throw error;
  }
  throw new Error('expected a compile error');
}

describe('expression grammar', () => {
  it('treats boolean literals and the empty object as constants', () => {
    expect(sync(true)).toBe(true);
    expect(sync(false)).toBe(false);
    expect(sync({})).toBe(true);
  });

  it('ANDs the keys of an object', () => {
    expect(sync({ a: 1, b: 2 }, { root: { a: 1, b: 2 } })).toBe(true);
    expect(sync({ a: 1, b: 2 }, { root: { a: 1, b: 3 } })).toBe(false);
  });

  it('reads plain field names from %%root in document rules and from %%args in service rules', () => {
    expect(sync({ owner: 'u1' }, { root: { owner: 'u1' }, args: { owner: 'x' } })).toBe(true);
    expect(sync({ owner: 'u1' }, { root: { owner: 'x' }, args: { owner: 'u1' } }, 'service')).toBe(true);
  });

  it('follows dotted field paths into embedded documents and arrays of documents', () => {
    expect(sync({ 'a.b': 1 }, { root: { a: { b: 1 } } })).toBe(true);
    expect(sync({ 'a.b': 2 }, { root: { a: [{ b: 1 }, { b: 2 }] } })).toBe(true);
    expect(sync({ 'a.1': 'y' }, { root: { a: ['x', 'y'] } })).toBe(true);
    expect(sync({ 'a.b.c': { $exists: true } }, { root: { a: 5 } })).toBe(false);
  });

  it('treats a boolean value as equality, not as $exists', () => {
    expect(sync({ flag: true }, { root: { flag: 'yes' } })).toBe(false);
    expect(sync({ flag: true }, { root: { flag: true } })).toBe(true);
  });

  it('treats an object of plain keys as an embedded document to compare', () => {
    expect(sync({ address: { city: 'Rome', zip: '1' } }, { root: { address: { zip: '1', city: 'Rome' } } })).toBe(true);
    expect(sync({ address: { city: 'Rome' } }, { root: { address: { city: 'Rome', zip: '1' } } })).toBe(false);
  });
});

describe('array "contains" equality', () => {
  it('holds when the left array contains the right value', () => {
    expect(sync({ '%%user.custom_data.roles': 'editor' })).toBe(true);
    expect(sync({ '%%user.custom_data.roles': 'admin' })).toBe(false);
  });

  it('holds when the right array contains the left value', () => {
    expect(sync({ email: '%%user.custom_data.list' }, { user: { ...user, custom_data: { list: ['a@x', 'b@x'] } }, root: { email: 'a@x' } })).toBe(true);
  });

  it('holds for equal arrays', () => {
    expect(sync({ tags: ['a', 'b'] }, { root: { tags: ['a', 'b'] } })).toBe(true);
    expect(sync({ tags: ['a', 'b'] }, { root: { tags: ['b', 'a'] } })).toBe(false);
  });
});

describe('comparison operators', () => {
  const cases: [string, unknown, unknown, boolean][] = [
    ['$eq', 5, 5, true],
    ['%eq', 5, 6, false],
    ['$ne', 5, 6, true],
    ['%ne', 'a', 'a', false],
    ['$gt', 5, 4, true],
    ['%gt', 5, 5, false],
    ['$gte', 5, 5, true],
    ['%gte', 4, 5, false],
    ['$lt', 4, 5, true],
    ['%lt', 5, 5, false],
    ['$lte', 5, 5, true],
    ['%lte', 6, 5, false],
    ['$in', 'b', ['a', 'b'], true],
    ['%in', 'c', ['a', 'b'], false],
    ['$nin', 'c', ['a', 'b'], true],
    ['%nin', 'a', ['a', 'b'], false],
    ['$exists', 1, true, true],
    ['%exists', 1, false, false],
  ];
  it.each(cases)('%s: %j against %j is %s', (op, left, operand, expected) => {
    expect(sync({ x: { [op]: operand } }, { root: { x: left } })).toBe(expected);
  });

  it('$exists false holds for a missing value and null counts as present', () => {
    expect(sync({ x: { $exists: false } }, { root: {} })).toBe(true);
    expect(sync({ x: { $exists: true } }, { root: { x: null } })).toBe(true);
    expect(sync({ '%%prevRoot': { '%exists': false } }, { root: { a: 1 } })).toBe(true);
  });

  it('compares only within a type class, like MongoDB', () => {
    expect(sync({ x: { $gt: 1 } }, { root: { x: '5' } })).toBe(false);
    expect(sync({ x: { $lt: 'b' } }, { root: { x: 'a' } })).toBe(true);
    expect(sync({ x: { $gt: new Date(0) } }, { root: { x: new Date(1000) } })).toBe(true);
  });

  it('compares BSON numbers by value across types', () => {
    expect(sync({ x: 5 }, { root: { x: new Int32(5) } })).toBe(true);
    expect(sync({ x: { $gte: Long.fromNumber(5) } }, { root: { x: 5.5 } })).toBe(true);
    expect(sync({ x: { $lt: 10 } }, { root: { x: Decimal128.fromString('9.5') } })).toBe(true);
  });

  it('applies ordered comparisons to any element of an array', () => {
    expect(sync({ scores: { $gt: 90 } }, { root: { scores: [10, 95] } })).toBe(true);
    expect(sync({ scores: { $gt: 90 } }, { root: { scores: [10, 20] } })).toBe(false);
  });

  it('matches $in with an array left value when any element is listed', () => {
    expect(sync({ '%%user.custom_data.roles': { $in: ['admin', 'editor'] } })).toBe(true);
  });

  it('takes the $in list from an expansion and fails closed when it is not an array', () => {
    expect(sync({ '%%user.id': { $in: '%%values.admins' } }, { values: { admins: ['u1'] } })).toBe(true);
    expect(sync({ '%%user.id': { $in: '%%values.admins' } }, { values: {} })).toBe(false);
    expect(sync({ '%%user.id': { $nin: '%%values.admins' } }, { values: {} })).toBe(false);
  });

  it('ANDs several operators on one value', () => {
    expect(sync({ x: { $gt: 1, $lt: 3 } }, { root: { x: 2 } })).toBe(true);
    expect(sync({ x: { $gt: 1, $lt: 3 } }, { root: { x: 3 } })).toBe(false);
  });

  it('compares ObjectIds by value', () => {
    const id = new ObjectId();
    expect(sync({ _id: '%%values.id' }, { root: { _id: id }, values: { id: ObjectId.createFromHexString(id.toHexString()) } })).toBe(true);
    expect(sync({ _id: id.toHexString() }, { root: { _id: id } })).toBe(false);
  });
});

describe('logical operators', () => {
  it('%or / $or hold when any branch holds', () => {
    expect(sync({ '%or': [{ a: 1 }, { b: 1 }] }, { root: { b: 1 } })).toBe(true);
    expect(sync({ $or: [{ a: 1 }, { b: 1 }] }, { root: { c: 1 } })).toBe(false);
  });

  it('%and / $and hold when every branch holds', () => {
    expect(sync({ '%and': [{ a: 1 }, { b: 1 }] }, { root: { a: 1, b: 1 } })).toBe(true);
    expect(sync({ $and: [{ a: 1 }, { b: 1 }] }, { root: { a: 1 } })).toBe(false);
  });

  it('%nor holds when no branch holds', () => {
    expect(sync({ '%nor': [{ a: 1 }, { b: 1 }] }, { root: { c: 1 } })).toBe(true);
    expect(sync({ '%nor': [{ a: 1 }, { b: 1 }] }, { root: { a: 1 } })).toBe(false);
  });

  it('%not negates an expression', () => {
    expect(sync({ '%not': { a: 1 } }, { root: { a: 2 } })).toBe(true);
    expect(sync({ '%not': { a: 1 } }, { root: { a: 1 } })).toBe(false);
  });

  it('applies %and, %or, %nor and %not of operator objects to the same value', () => {
    expect(sync({ x: { '%or': [{ $lt: 0 }, { $gt: 10 }] } }, { root: { x: 11 } })).toBe(true);
    expect(sync({ x: { '%nor': [{ $lt: 0 }, { $gt: 10 }] } }, { root: { x: 5 } })).toBe(true);
    expect(sync({ x: { '%not': { $gt: 10 } } }, { root: { x: 11 } })).toBe(false);
  });

  it('evaluates a nested expression under %%true and %%false', () => {
    expect(sync({ '%%true': { '%%user.id': 'u1' } })).toBe(true);
    expect(sync({ '%%false': { '%%user.id': 'u1' } })).toBe(false);
    expect(sync({ '%%false': { '%%user.id': 'u2' } })).toBe(true);
    expect(sync({ '%%true': { owner: '%%user.id' } }, { root: { owner: 'u1' } })).toBe(true);
  });
});

describe('expansions', () => {
  it('%%user and its fields', () => {
    expect(sync({ '%%user.id': 'u1' })).toBe(true);
    expect(sync({ '%%user.type': 'normal' })).toBe(true);
    expect(sync({ '%%user.data.email': 'a@x' })).toBe(true);
    expect(sync({ '%%user.custom_data.team': 't1' })).toBe(true);
    expect(sync({ '%%user.identities.providerType': 'local-userpass' })).toBe(true);
    expect(sync({ '%%user': { $exists: true } })).toBe(true);
  });

  it('%%user.type defaults to normal and identities to an empty list', () => {
    expect(evaluateExpression({ '%%user.type': 'normal', '%%user.identities': [] }, { user: { id: 'x' } })).toBe(true);
  });

  it('%%root, %%prevRoot, %%this and %%prev', () => {
    expect(sync({ '%%root.a': 1, '%%prevRoot.a': 0 }, { root: { a: 1 }, prevRoot: { a: 0 } })).toBe(true);
    expect(sync({ '%%this': 'b', '%%prev': 'a' }, { this: 'b', prev: 'a' })).toBe(true);
    expect(sync({ '%%root': { $exists: true } }, { root: { a: 1 } })).toBe(true);
  });

  it('%%request, %%values and %%environment', () => {
    const ctx: EvaluationContext = {
      request: { httpMethod: 'POST', requestHeaders: { 'X-Api': ['1'] } },
      values: { admins: ['u1'], config: { on: true } },
      environment: { tag: 'qa', values: { region: 'eu' } },
    };
    expect(sync({ '%%request.httpMethod': 'POST', '%%request.requestHeaders.X-Api': '1' }, ctx)).toBe(true);
    expect(sync({ '%%values.admins': '%%user.id', '%%values.config.on': true }, ctx)).toBe(true);
    expect(sync({ '%%environment.tag': 'qa', '%%environment.values.region': 'eu' }, ctx)).toBe(true);
  });

  it('%%partition in partition permissions', () => {
    expect(sync({ '%%partition': '%%user.id' }, { partition: 'u1' }, 'partition')).toBe(true);
  });

  it('%%args in service rules', () => {
    expect(sync({ '%%args.to': 'x' }, { args: { to: 'x' } }, 'service')).toBe(true);
  });

  it('%%true and %%false are constants', () => {
    expect(sync({ '%%true': true, '%%false': false })).toBe(true);
    expect(sync({ '%%true': false })).toBe(false);
  });

  it('does not resolve inherited properties such as constructor or __proto__', () => {
    expect(sync({ '%%user.custom_data.constructor': { $exists: true } })).toBe(false);
    expect(sync({ 'a.toString': { $exists: true } }, { root: { a: {} } })).toBe(false);
    expect(sync(JSON.parse('{"__proto__": {"$exists": true}}'), { root: { x: 1 } })).toBe(false);
    expect(sync(JSON.parse('{"__proto__": {"$exists": true}}'), { root: JSON.parse('{"__proto__": 1}') })).toBe(true);
  });

  it('an unresolvable path is missing, not its literal text, and missing equals nothing', () => {
    expect(sync({ '%%user.custom_data.nope': '%%user.custom_data.nope' })).toBe(false);
    expect(sync({ team: '%%user.custom_data.nope' }, { root: {} })).toBe(false);
    expect(sync({ team: { $ne: '%%user.custom_data.nope' } }, { root: {} })).toBe(true);
    expect(sync({ owner: '%%user.custom_data.nope' }, { root: { owner: '%%user.custom_data.nope' } })).toBe(false);
    expect(sync({ '%%user.custom_data.nope': { $exists: false } })).toBe(true);
  });
});

describe('conversions', () => {
  const hex = '5f4863d1b2f3a1b2c3d4e623';

  it('%stringToOid compares an ObjectId with a string id', () => {
    expect(sync({ _id: { '%stringToOid': '%%user.id' } }, { user: { ...user, id: hex }, root: { _id: ObjectId.createFromHexString(hex) } })).toBe(true);
    expect(sync({ _id: { '%stringToOid': hex } }, { root: { _id: new ObjectId() } })).toBe(false);
  });

  it('%stringToOid of something that is not an id gives a missing value', () => {
    expect(sync({ '%%values.x': { '%stringToOid': 'not-an-id' } }, { values: { x: 'not-an-id' } })).toBe(false);
    expect(sync({ _id: { '%stringToOid': 'not-an-id' } }, { root: { _id: new ObjectId() } })).toBe(false);
  });

  it('%oidToString gives the hex string', () => {
    expect(sync({ s: { '%oidToString': '%%root._id' } }, { root: { _id: ObjectId.createFromHexString(hex), s: hex } })).toBe(true);
  });

  it('%stringToUuid and %uuidToString convert UUIDs', () => {
    const uuid = new UUID();
    expect(sync({ u: { '%stringToUuid': uuid.toString() } }, { root: { u: new Binary(uuid.toBinary().buffer, Binary.SUBTYPE_UUID) } })).toBe(true);
    expect(sync({ s: { '%uuidToString': '%%root.u' } }, { root: { u: uuid, s: uuid.toString() } })).toBe(true);
  });
});

describe('%function', () => {
  it('passes expanded arguments and compares the result', async () => {
    const seen: unknown[][] = [];
    const compiled = compileExpression({ '%%true': { '%function': { name: 'check', arguments: ['%%user.id', { team: '%%user.custom_data.team' }, 3] } } });
    expect(compiled.async).toBe(true);
    const result = await compiled.evaluate({
      user,
      callFunction: async (name, args) => {
        seen.push([name, ...args]);
        return true;
      },
    });
    expect(result).toBe(true);
    expect(seen).toEqual([['check', 'u1', { team: 't1' }, 3]]);
  });

  it('can give a value to compare with something else than true', async () => {
    const result = await evaluateExpression({ owner: { '%function': { name: 'ownerOf', arguments: [] } } }, { root: { owner: 'bob' }, callFunction: () => 'bob' });
    expect(result).toBe(true);
  });

  it('short-circuits: the function is not called when an earlier AND branch fails', async () => {
    let calls = 0;
    const result = await evaluateExpression(
      { '%and': [{ '%%user.id': 'nobody' }, { '%%true': { '%function': { name: 'f' } } }] },
      { user, callFunction: () => ++calls > 0 },
    );
    expect(result).toBe(false);
    expect(calls).toBe(0);
  });

  it('fails with RuleFunctionFailed without a function runner, or when the function throws', async () => {
    const expression = { '%%true': { '%function': { name: 'f' } } };
    await expect(evaluateExpression(expression, { user })).rejects.toMatchObject({ errorCode: RulesErrorCode.RuleFunctionFailed });
    await expect(
      evaluateExpression(expression, {
        user,
        callFunction: () => {
          throw new Error('boom');
        },
      }),
    ).rejects.toMatchObject({ errorCode: RulesErrorCode.RuleFunctionFailed, reason: 'boom' });
  });

  it('refuses synchronous evaluation with AsyncEvaluationRequired', () => {
    const compiled = compileExpression({ '%%true': { '%function': { name: 'f' } } });
    expect(() => compiled.evaluateSync({})).toThrow(expect.objectContaining({ errorCode: RulesErrorCode.AsyncEvaluationRequired }));
  });

  it('keeps expressions without %function synchronous', () => {
    const compiled = compileExpression({ '%or': [{ a: 1 }, { '%%user.id': { $in: ['u1'] } }] });
    expect(compiled.async).toBe(false);
    expect(evaluateExpression({ a: 1 }, { root: { a: 1 } })).toBe(true);
  });
});

describe('expression errors', () => {
  const invalid: [string, unknown, ExpressionKind][] = [
    ['an unknown operator', { x: { $regex: 'a' } }, 'document'],
    ['an unknown %-operator', { x: { '%foo': 1 } }, 'document'],
    ['an unknown expansion', { '%%ctx.user': 1 }, 'document'],
    ['fields on %%true', { '%%true.x': 1 }, 'document'],
    ['a comparison operator at expression level', { $gt: 1 }, 'document'],
    ['%or without an array', { '%or': { a: 1 } }, 'document'],
    ['$in with a literal that is not an array', { x: { $in: 'abc' } }, 'document'],
    ['a non-boolean, non-object expression', 'yes', 'document'],
    ['%function without a name', { '%%true': { '%function': { arguments: [] } } }, 'document'],
    ['%function with non-array arguments', { '%%true': { '%function': { name: 'f', arguments: 'x' } } }, 'document'],
    ['a conversion of an object', { x: { '%stringToOid': { a: 1 } } }, 'document'],
    ['a conversion mixed with operators', { x: { '%stringToOid': 'a', $eq: 1 } }, 'document'],
    ['%%root in a filter', { '%%root.owner': '%%user.id' }, 'filter'],
    ['a plain field in a filter', { owner: '%%user.id' }, 'filter'],
    ['%%partition outside partition permissions', { '%%partition': 'p' }, 'document'],
    ['%%request in partition permissions', { '%%request.httpMethod': 'GET' }, 'partition'],
    ['%%root in partition permissions', { '%%root.a': 1 }, 'partition'],
  ];
  it.each(invalid)('rejects %s with InvalidExpression', (_name, expression, kind) => {
    const error = compileError(expression, kind);
    expect(error.errorCode).toBe(RulesErrorCode.InvalidExpression);
    expect(error.httpStatus).toBe(400);
  });
});
