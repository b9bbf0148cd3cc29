import { EJSON } from 'bson';

/**
 * The admin API answers values in canonical Extended JSON (`{"$numberInt":"105"}`); people and scripts read
 * them as realm-cli printed them, in relaxed Extended JSON (`105`, `{"$oid":"..."}`, `{"$date":"..."}`).
 * Decoding keeps 64-bit integers exact until the relaxed form is written.
 */
export function relaxedEjson(value: unknown): unknown {
  if (value === undefined) return undefined;
  const decoded: unknown = EJSON.deserialize(value as Parameters<typeof EJSON.deserialize>[0], { relaxed: false });
  return EJSON.serialize(decoded, { relaxed: true });
}
