import { Decimal128, Long, ObjectId } from 'bson';
import { decodeEjson, encodeEjson } from './ejson';

describe('EJSON payload helpers', () => {
  it('encodes BSON values as canonical Extended JSON and decodes them without loss', () => {
    const id = new ObjectId('5f0c5e0b9d1e8a2b3c4d5e6f');
    const value = [id, Long.fromString('9007199254740993'), new Date(0), Decimal128.fromString('1.10'), 'text', null];
    const encoded = encodeEjson(value);
    expect(encoded).toEqual([
      { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' },
      { $numberLong: '9007199254740993' },
      { $date: { $numberLong: '0' } },
      { $numberDecimal: '1.10' },
      'text',
      null,
    ]);
    const decoded = decodeEjson(JSON.parse(JSON.stringify(encoded))) as unknown[];
    expect((decoded[0] as ObjectId).equals(id)).toBe(true);
    expect((decoded[1] as Long).toString()).toBe('9007199254740993');
    expect(decoded[2]).toEqual(new Date(0));
    expect(String(decoded[3])).toBe('1.10');
  });

  it('gives plain numbers when asked for relaxed values', () => {
    expect(decodeEjson([{ $numberInt: '7' }, { $numberDouble: '2.5' }], { relaxed: true })).toEqual([7, 2.5]);
  });
});
