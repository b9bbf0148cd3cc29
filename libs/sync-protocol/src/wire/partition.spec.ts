import { SyncProtocolError } from '../errors';
import { loadConformance } from '../conformance-frames.test';
import { decodeClientMessage } from './messages';
import { formatPartitionValue, parsePartitionValue, partitionMatchesKeyType, type PartitionValue } from './partition';

describe('partition values in BIND', () => {
  it('reads what realm-js sends (relaxed EJSON) and formats it back identically', () => {
    const cases: [string, PartitionValue][] = [
      ['"p1"', { type: 'string', value: 'p1' }],
      ['42', { type: 'int', value: 42n }],
      ['-9007199254740993', { type: 'int', value: -9007199254740993n }],
      ['{"$oid":"65f0a1b2c3d4e5f601020304"}', { type: 'objectId', value: '65f0a1b2c3d4e5f601020304' }],
      ['{"$binary":{"base64":"ABEiM0RVZneImaq7zN3u/w==","subType":"04"}}', { type: 'uuid', value: '00112233445566778899aabbccddeeff' }],
      ['null', { type: 'null' }],
    ];
    for (const [path, value] of cases) {
      expect(parsePartitionValue(path)).toEqual(value);
      expect(formatPartitionValue(value)).toBe(path);
    }
  });

  it('reads canonical EJSON and $uuid from other SDKs', () => {
    expect(parsePartitionValue('{"$numberInt":"42"}')).toEqual({ type: 'int', value: 42n });
    expect(parsePartitionValue('{"$numberLong":"9223372036854775807"}')).toEqual({ type: 'int', value: 9223372036854775807n });
    expect(parsePartitionValue('{"$uuid":"00112233-4455-6677-8899-aabbccddeeff"}')).toEqual({ type: 'uuid', value: '00112233445566778899aabbccddeeff' });
    expect(parsePartitionValue('{"$binary":"ABEiM0RVZneImaq7zN3u/w==","$type":"04"}')).toEqual({ type: 'uuid', value: '00112233445566778899aabbccddeeff' });
  });

  it.each(['not a bson serialized string', '4.5', '{"$oid":"zz"}', '{"$numberInt":"3000000000"}', '{"a":1}', '[1]', 'true', '{"$binary":{"base64":"AAE=","subType":"04"}}', '{"$oid":"65f0a1b2c3d4e5f601020304","x":1}', '99999999999999999999'])(
    'rejects %s',
    (path) => {
      expect(() => parsePartitionValue(path)).toThrow(SyncProtocolError);
    },
  );

  it('checks a value against the configured partition key type', () => {
    expect(partitionMatchesKeyType({ type: 'string', value: 'p' }, 'string')).toBe(true);
    expect(partitionMatchesKeyType({ type: 'int', value: 1n }, 'string')).toBe(false);
    expect(partitionMatchesKeyType({ type: 'null' }, 'objectId')).toBe(true);
    expect(partitionMatchesKeyType({ type: 'null' }, 'objectId', true)).toBe(false);
  });
});

describe('recorded BIND paths', () => {
  it('parses every partition the recorded clients bound to', () => {
    const paths = loadConformance()
      .frames.filter((f) => f.header.startsWith('bind '))
      .map((f) => decodeClientMessage(f.bytes))
      .map((m) => (m.type === 'bind' ? m.path : ''));
    const values = new Set(paths.map((p) => formatPartitionValue(parsePartitionValue(p))));
    expect([...values].sort()).toEqual(['"p-conflict"', '"p-large"', '"p-restart"', '"p1"', '42']);
  });
});
