import { checkPartitionValue, partitionValueType } from './partition-value';

describe('partition values (spec 7)', () => {
  it('tells the type of an Extended JSON partition value', () => {
    expect(partitionValueType('"user-1"')).toBe('string');
    expect(partitionValueType('{"$oid":"65a000000000000000000001"}')).toBe('objectId');
    expect(partitionValueType('{"$numberLong":"42"}')).toBe('long');
    expect(partitionValueType('42')).toBe('long');
    expect(partitionValueType('{"$uuid":"3b241101-e2bb-4255-8caf-4136c566a962"}')).toBe('uuid');
    expect(partitionValueType('null')).toBe('null');
    expect(partitionValueType('1.5')).toBe('unsupported');
    expect(partitionValueType('{"$oid":"nope"}')).toBe('unsupported');
    expect(partitionValueType('not json')).toBe('unsupported');
  });

  it('accepts a value of the configured type, whatever the spelling of partition.type', () => {
    expect(checkPartitionValue('String', '"a"')).toBeUndefined();
    expect(checkPartitionValue('objectId', '{"$oid":"65a000000000000000000001"}')).toBeUndefined();
    expect(checkPartitionValue('Long', '{"$numberLong":"7"}')).toBeUndefined();
    expect(checkPartitionValue('UUID', '{"$uuid":"3b241101-e2bb-4255-8caf-4136c566a962"}')).toBeUndefined();
  });

  it('answers ErrorIllegalStorePath naming the expected and the actual type', () => {
    expect(checkPartitionValue('objectId', '"user-1"')).toEqual({
      errorCode: 'ErrorIllegalStorePath',
      message: 'attempted to bind on illegal partition, expected partition to have type objectId but found string',
    });
    expect(checkPartitionValue('string', '{"$numberLong":"7"}')?.message).toBe('attempted to bind on illegal partition, expected partition to have type string but found long');
  });

  it('allows the null partition only for an optional key', () => {
    expect(checkPartitionValue('string', 'null')).toBeUndefined();
    expect(checkPartitionValue('string', 'null', { required: true })?.errorCode).toBe('ErrorIllegalStorePath');
  });
});
