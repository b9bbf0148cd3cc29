import { SyncProtocolError } from '../errors';
import { decodePrimaryKey, encodePrimaryKey, parseRejectedUpdates, refusedWriteReason, type SyncedPrimaryKey } from './compensating-writes';

const hexOf = (base64: string): string => Buffer.from(base64, 'base64').toString('hex');

describe('primary keys of refused writes', () => {
  it.each<[string, SyncedPrimaryKey, string]>([
    ['null', { type: 'Null' }, '00'],
    ['a small int', { type: 'Int', value: 5 }, '0105'],
    ['a negative int', { type: 'Int', value: -1 }, '0140'],
    ['an int over 6 bits', { type: 'Int', value: 123456 }, '01c0c407'],
    ['a 64-bit int', { type: 'Int', value: 9223372036854775807n }, '01ffffffffffffffffff00'],
    ['a string', { type: 'String', value: 'short' }, '030573686f7274'],
    ['an ObjectId', { type: 'ObjectId', value: '65f0a1b2c3d4e5f601234567' }, '0a65f0a1b2c3d4e5f601234567'],
    ['a UUID', { type: 'UUID', value: '0123456789abcdef0123456789abcdef' }, '0b0123456789abcdef0123456789abcdef'],
  ])('encodes %s as payload type then value, base64', (_name, key, hex) => {
    const pk = encodePrimaryKey(key);
    expect(hexOf(pk)).toBe(hex);
    expect(decodePrimaryKey(pk)).toEqual(key);
  });

  it('refuses keys the client would abort on or reject', () => {
    for (const pk of ['QA==', 'Bw==', '', 'not base64!', 'AQ==', Buffer.from([0x0a, 1, 2]).toString('base64'), Buffer.from([0x00, 0x00]).toString('base64')]) {
      expect(() => decodePrimaryKey(pk)).toThrow(SyncProtocolError);
    }
    expect(() => encodePrimaryKey({ type: 'ObjectId', value: 'xyz' })).toThrow(SyncProtocolError);
  });

  it('words refusals as the server did in realm-core tests', () => {
    expect(refusedWriteReason('TopLevel', { type: 'ObjectId', value: '65f0a1b2c3d4e5f601234567' }, 'permission')).toBe('write to ObjectID("65f0a1b2c3d4e5f601234567") in table "TopLevel" not allowed');
    expect(refusedWriteReason('Int PK', { type: 'Int', value: 123456 }, 'permission')).toBe('write to 123456 in table "Int PK" not allowed');
    expect(refusedWriteReason('String PK', { type: 'String', value: 'short' }, 'permission')).toBe('write to "short" in table "String PK" not allowed');
    expect(refusedWriteReason('UUID PK', { type: 'UUID', value: '012345679abc4def90123456789abcde' }, 'permission')).toBe('write to UUID(01234567-9abc-4def-9012-3456789abcde) in table "UUID PK" not allowed');
    expect(refusedWriteReason('TopLevel', { type: 'ObjectId', value: '65f0a1b2c3d4e5f601234567' }, 'outside_view')).toMatch(/not allowed; object is outside of the current query view$/);
  });

  it('reads rejectedUpdates strictly', () => {
    expect(() => parseRejectedUpdates({})).toThrow(/array/);
    expect(() => parseRejectedUpdates([{ table: 'T', reason: 'r' }])).toThrow(/string table, pk and reason/);
    expect(parseRejectedUpdates([{ table: 'T', pk: 'AQU=', reason: 'r' }])).toEqual([{ table: 'T', primaryKey: { type: 'Int', value: 5 }, reason: 'r' }]);
  });
});
