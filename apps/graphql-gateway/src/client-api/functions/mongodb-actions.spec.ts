import { Int32, Long, ObjectId } from 'bson';
import { ClientApiError } from '../client-api.error';
import { normalizeDataSourceCall, withWireWidths } from './mongodb-actions';

describe('normalizeDataSourceCall', () => {
  it('turns realm-web findOneAndDelete (findOneAndReplace without update) into findOneAndDelete', () => {
    expect(normalizeDataSourceCall('findOneAndReplace', [{ database: 'd', collection: 'c', filter: { a: 1 } }]).action).toBe('findOneAndDelete');
    expect(normalizeDataSourceCall('findOneAndReplace', [{ database: 'd', collection: 'c', filter: {}, update: { a: 2 } }]).action).toBe('findOneAndReplace');
  });

  it('gives numbers as JS numbers and keeps other BSON values', () => {
    const id = new ObjectId();
    const { args } = normalizeDataSourceCall('find', [{ database: 'd', collection: 'c', query: { n: new Int32(5), _id: id }, limit: new Int32(2), sort: { n: new Int32(-1) } }]);
    expect(args).toEqual({ database: 'd', collection: 'c', query: { n: 5, _id: id }, limit: 2, sort: { n: -1 } });
  });

  it.each([
    ['an unknown action', 'dropDatabase', [{ database: 'd', collection: 'c' }], 'ServiceCommandNotFound'],
    ['no arguments object', 'find', [], 'InvalidParameter'],
    ['two arguments', 'find', [{ database: 'd', collection: 'c' }, {}], 'InvalidParameter'],
    ['a missing collection', 'find', [{ database: 'd' }], 'InvalidParameter'],
    ['a non-numeric limit', 'find', [{ database: 'd', collection: 'c', limit: 'ten' }], 'InvalidParameter'],
  ])('refuses %s', (_case, action, args, code) => {
    let caught: unknown;
    try {
      normalizeDataSourceCall(action, args);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ClientApiError);
    expect((caught as ClientApiError).errorCode).toBe(code);
  });
});

describe('withWireWidths', () => {
  it('writes Int32 write counts, Int64 counts, and drops the counts the clients do not read', () => {
    expect(withWireWidths('count', 3)).toEqual(Long.fromNumber(3));
    expect(withWireWidths('deleteMany', { deletedCount: 2 })).toEqual({ deletedCount: new Int32(2) });
    expect(withWireWidths('updateOne', { matchedCount: 1, modifiedCount: 0, upsertedCount: 0, upsertedId: undefined })).toEqual({ matchedCount: new Int32(1), modifiedCount: new Int32(0) });
    expect(withWireWidths('insertMany', { insertedIds: [1, 2], insertedCount: 2 })).toEqual({ insertedIds: [1, 2] });
    expect(withWireWidths('count', Long.fromNumber(4))).toEqual(Long.fromNumber(4));
  });
});
