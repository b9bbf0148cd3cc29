import { Binary, BSONRegExp, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp } from 'bson';
import { DataApiError } from './data-api.error';
import { responseFormat, toPlainJson } from './data-api-format';
import { toDataApiResponse, toDataSourceCall, withUpsertId } from './data-api-request';

const source = { dataSource: 'mongodb-atlas', database: 'shop', collection: 'items' };

function failure(run: () => unknown): DataApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof DataApiError) return error;
    throw error;
  }
  throw new Error('expected a DataApiError');
}

describe('toDataSourceCall', () => {
  it('gives find its filter as the query, a default limit and the options', () => {
    expect(toDataSourceCall('find', { ...source, filter: { a: 1 }, sort: { a: -1 }, skip: new Int32(2), projection: { a: 1 } })).toEqual({
      dataSource: 'mongodb-atlas',
      action: 'find',
      args: { database: 'shop', collection: 'items', query: { a: 1 }, sort: { a: -1 }, skip: 2, projection: { a: 1 }, limit: 1000 },
    });
  });

  it('turns replaceOne into findOneAndReplace returning the document before', () => {
    expect(toDataSourceCall('replaceOne', { ...source, filter: { a: 1 }, replacement: { b: 2 } })).toMatchObject({ action: 'findOneAndReplace', args: { filter: { a: 1 }, update: { b: 2 }, upsert: false, returnNewDocument: false } });
  });

  it.each([
    ['a delete without a filter', 'deleteMany', { ...source }],
    ['an update without an update', 'updateOne', { ...source, filter: {} }],
    ['an empty insertMany', 'insertMany', { ...source, documents: [] }],
    ['a negative skip', 'find', { ...source, skip: -1 }],
    ['a fractional limit', 'find', { ...source, limit: 1.5 }],
    ['a too large limit', 'find', { ...source, limit: Long.fromNumber(60_000) }],
    ['a non-boolean upsert', 'updateOne', { ...source, filter: {}, update: { $set: { a: 1 } }, upsert: 'yes' }],
    ['a pipeline that is not stages', 'aggregate', { ...source, pipeline: [1] }],
    ['a missing dataSource', 'find', { database: 'shop', collection: 'items' }],
  ] as const)('refuses %s with 400 InvalidParameter', (_name, action, body) => {
    expect(failure(() => toDataSourceCall(action, body as Record<string, unknown>))).toMatchObject({ httpStatus: 400, errorCode: 'InvalidParameter' });
  });
});

describe('withUpsertId', () => {
  it("takes an upserting replaceOne's id from the replacement, the filter, or makes one", () => {
    const id = new ObjectId();
    expect(withUpsertId(toDataSourceCall('replaceOne', { ...source, filter: { _id: id }, replacement: { b: 1 }, upsert: true })).upsertId).toBe(id);
    const made = withUpsertId(toDataSourceCall('replaceOne', { ...source, filter: { b: { $gt: 1 } }, replacement: { b: 1 }, upsert: true }));
    expect(made.upsertId).toBeInstanceOf(ObjectId);
    expect((made.call.args['update'] as { _id: unknown })._id).toBe(made.upsertId);
    expect(withUpsertId(toDataSourceCall('replaceOne', { ...source, filter: {}, replacement: { b: 1 } })).upsertId).toBeUndefined();
  });
});

describe('toDataApiResponse', () => {
  it('shapes every result as App Services did', () => {
    expect(toDataApiResponse('insertOne', { insertedId: 1 })).toEqual({ status: 201, body: { insertedId: 1 } });
    expect(toDataApiResponse('findOne', null)).toEqual({ status: 200, body: { document: null } });
    expect(toDataApiResponse('updateOne', { matchedCount: 0, modifiedCount: 0, upsertedId: 5 })).toEqual({ status: 200, body: { matchedCount: new Int32(0), modifiedCount: new Int32(0), upsertedId: 5 } });
    expect(toDataApiResponse('replaceOne', null, 7)).toEqual({ status: 200, body: { matchedCount: new Int32(0), modifiedCount: new Int32(0), upsertedId: 7 } });
    expect(toDataApiResponse('replaceOne', { _id: 1 }, 7)).toEqual({ status: 200, body: { matchedCount: new Int32(1), modifiedCount: new Int32(1) } });
    expect(toDataApiResponse('deleteMany', { deletedCount: 3 })).toEqual({ status: 200, body: { deletedCount: new Int32(3) } });
  });
});

describe('formats', () => {
  it('chooses EJSON or JSON by Accept, else the configured return type', () => {
    expect(responseFormat('application/ejson', 'JSON')).toBe('EJSON');
    expect(responseFormat('text/html, application/json;q=0.9', 'EJSON')).toBe('JSON');
    expect(responseFormat(undefined, 'EJSON')).toBe('EJSON');
    expect(responseFormat('*/*', 'JSON')).toBe('JSON');
  });

  it("writes the types JSON has no equivalent of as App Services' data formats page shows them", () => {
    const uuidBinary = new Binary(Buffer.from('e67803a39588be8a95731a21e27d7391', 'base64'), 5);
    expect(toPlainJson({ binary: uuidBinary, regex: new BSONRegExp('^H', 'i'), native: /^H/i, ts: new Timestamp({ t: 1565545664, i: 1 }), min: new MinKey(), max: new MaxKey(), decimal: Decimal128.fromString('9823.1297'), year: Long.fromNumber(2022), date: new Date(1641954803067), double: new Double(10.5) })).toEqual({
      binary: { Subtype: 5, Data: 'e67803a39588be8a95731a21e27d7391' },
      regex: { Pattern: '^H', Options: 'i' },
      native: { Pattern: '^H', Options: 'i' },
      ts: { T: 1565545664, I: 1 },
      min: {},
      max: {},
      decimal: '9823.1297',
      year: 2022,
      date: '2022-01-12T02:33:23.067Z',
      double: 10.5,
    });
  });

  it('writes plain JSON without type information', () => {
    const id = new ObjectId('65a000000000000000000001');
    expect(toPlainJson({ id, when: new Date('2024-01-02T00:00:00Z'), n: new Int32(3), big: Long.fromNumber(5), price: Decimal128.fromString('1.10'), raw: new Binary(Buffer.from('hi')), list: [id], nothing: undefined })).toEqual({
      id: '65a000000000000000000001',
      when: '2024-01-02T00:00:00.000Z',
      n: 3,
      big: 5,
      price: '1.10',
      raw: { Subtype: 0, Data: 'aGk=' },
      list: ['65a000000000000000000001'],
    });
  });
});
