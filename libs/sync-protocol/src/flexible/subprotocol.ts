/**
 * WebSocket subprotocol negotiation for flexible sync (FLX). A flexible-sync client offers
 * `com.mongodb.realm-query-sync#N` for every version it speaks (realm-core v14: 14 down to 2); a
 * partition-sync client offers `com.mongodb.realm-sync#N`. The server answers with one offered token,
 * and that choice fixes the connection's mode: it changes the BIND, IDENT and DOWNLOAD grammars.
 */
import { negotiateSubprotocol, negotiateVersionedToken, parseVersionedToken, type NegotiatedSubprotocol } from '../wire/subprotocol';

export const FLEXIBLE_SUBPROTOCOL_PREFIX = 'com.mongodb.realm-query-sync#';

/** Versions from which a flexible-sync feature exists; the wire grammar itself does not change with them. */
export const FlexibleProtocolFeature = {
  /** BIND carries a JSON object instead of a path. */
  bindJson: 8,
  /** PBS to FLX client migration (`migratedPartition`, error 232). */
  migration: 9,
  /** BIND's `sessionReason`; LOG_MESSAGE from the server. */
  sessionReason: 10,
  /** BIND's `schemaVersion`; errors 235/236 and `previousSchemaVersion`. */
  schemaVersion: 11,
  /** DOWNLOAD's progress estimate (0.0 to 1.0) instead of a zero byte count. */
  progressEstimate: 12,
  /** Collections (lists, dictionaries) inside Mixed. */
  nestedCollections: 13,
  /** Server-initiated bootstraps (role change: ERROR 200 Transient, then a new bootstrap at the same query version). */
  serverInitiatedBootstrap: 14,
} as const;

export type NegotiatedFlexibleSubprotocol = NegotiatedSubprotocol;

/** Parses one offered token; returns its version, or null when it is not a flexible-sync token. */
export function parseFlexibleSubprotocol(token: string): number | null {
  return parseVersionedToken(FLEXIBLE_SUBPROTOCOL_PREFIX, token);
}

/**
 * Picks the highest offered flexible-sync version we speak (2 to 14). `offered` is the
 * `Sec-WebSocket-Protocol` header value (comma separated) or the list of tokens; null when none fits.
 */
export function negotiateFlexibleSubprotocol(offered: string | readonly string[]): NegotiatedFlexibleSubprotocol | null {
  return negotiateVersionedToken(FLEXIBLE_SUBPROTOCOL_PREFIX, offered);
}

export type SyncConnectionMode = 'partition' | 'flexible';

/**
 * Which mode a client asked for and the token to answer with. A client offers tokens of one mode only;
 * should both appear, flexible wins (it is the mode realm-core prefers for apps that have it).
 */
export function negotiateSyncSubprotocol(offered: string | readonly string[]): (NegotiatedFlexibleSubprotocol & { mode: SyncConnectionMode }) | null {
  const flexible = negotiateFlexibleSubprotocol(offered);
  if (flexible) return { ...flexible, mode: 'flexible' };
  const partition = negotiateSubprotocol(offered);
  return partition ? { ...partition, mode: 'partition' } : null;
}
