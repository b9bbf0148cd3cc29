/**
 * realm-core compares String, Binary and Link payloads in one merge rule (SetErase against SetErase) by
 * where they sit in their changeset (string buffer offset and size, intern indices), not by content. The
 * parser records that position here so the merge can reproduce the comparison; payloads built in code
 * have none and are compared by content.
 */
import type { Payload } from './types';

export const payloadPositions = new WeakMap<Payload, string>();
