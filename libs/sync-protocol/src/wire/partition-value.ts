/**
 * Spec 7: a client that opens a synced store with a partition value whose type differs from the app's
 * partition.type gets ErrorIllegalStorePath. Clients send the partition value as Extended JSON text
 * (`"abc"`, `{"$oid": "..."}`, `{"$numberLong": "7"}`, `{"$uuid": "..."}`, `null`); this tells its type
 * and builds the error the sync service answers with. Pure: no I/O.
 */

export type PartitionValueType = 'string' | 'objectId' | 'long' | 'uuid' | 'null' | 'unsupported';

export interface IllegalPartition {
  errorCode: 'ErrorIllegalStorePath';
  message: string;
}

const expectedNames: Record<string, PartitionValueType> = { string: 'string', objectid: 'objectId', long: 'long', int: 'long', int64: 'long', uuid: 'uuid' };

/** The type of a partition value sent as Extended JSON text; `unsupported` when it is no valid key value. */
export function partitionValueType(text: string): PartitionValueType {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'unsupported';
  }
  if (value === null) return 'null';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'long' : 'unsupported';
  if (typeof value !== 'object' || Array.isArray(value)) return 'unsupported';
  const keys = Object.keys(value);
  const only = keys.length === 1 ? keys[0] : undefined;
  const inner = only ? (value as Record<string, unknown>)[only] : undefined;
  if (only === '$oid' && typeof inner === 'string' && /^[0-9a-fA-F]{24}$/.test(inner)) return 'objectId';
  if ((only === '$numberLong' || only === '$numberInt') && typeof inner === 'string' && /^-?\d+$/.test(inner)) return 'long';
  if (only === '$uuid' && typeof inner === 'string' && /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(inner)) return 'uuid';
  if (only === '$binary' && typeof inner === 'object' && inner !== null && (inner as { subType?: unknown }).subType === '04') return 'uuid';
  return 'unsupported';
}

/**
 * Undefined when `partitionText` may be bound under a partition key of type `expectedType` (a sync
 * configuration's partition.type: String, ObjectID, Long or UUID, any case); the spec 7 error otherwise.
 * A null value is allowed only when the key is optional (`required` false).
 */
export function checkPartitionValue(expectedType: string, partitionText: string, options: { required?: boolean } = {}): IllegalPartition | undefined {
  const expected = expectedNames[expectedType.toLowerCase()];
  const actual = partitionValueType(partitionText);
  if (expected && (actual === expected || (actual === 'null' && options.required !== true))) return undefined;
  return {
    errorCode: 'ErrorIllegalStorePath',
    message: `attempted to bind on illegal partition, expected partition to have type ${expected ?? expectedType} but found ${actual}`,
  };
}
