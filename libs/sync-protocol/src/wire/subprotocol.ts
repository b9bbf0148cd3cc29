/**
 * WebSocket subprotocol negotiation for partition-based sync: clients offer
 * `com.mongodb.realm-sync#N` for every version they speak; the server answers with one of them.
 */
export const SUBPROTOCOL_PREFIX = 'com.mongodb.realm-sync#';
export const OLDEST_PROTOCOL_VERSION = 2;
export const CURRENT_PROTOCOL_VERSION = 14;

export interface NegotiatedSubprotocol {
  protocol: string;
  version: number;
}

/** Parses one offered token; returns its version, or null when it is not a PBS sync token. */
export function parseSubprotocol(token: string): number | null {
  return parseVersionedToken(SUBPROTOCOL_PREFIX, token);
}

/** `<prefix><N>` with N a canonical decimal: N, else null. Shared with flexible sync's prefix. */
export function parseVersionedToken(prefix: string, token: string): number | null {
  if (!token.startsWith(prefix)) return null;
  const digits = token.slice(prefix.length);
  if (!/^(0|[1-9][0-9]{0,8})$/.test(digits)) return null;
  return Number(digits);
}

/**
 * Picks the highest offered version we speak (at most 14, at least 2), i.e. min(14, offered max) for a
 * client offering the usual contiguous range. `offered` is the `Sec-WebSocket-Protocol` header value
 * (comma separated) or the list of tokens. Returns null when nothing acceptable was offered.
 */
export function negotiateSubprotocol(offered: string | readonly string[]): NegotiatedSubprotocol | null {
  return negotiateVersionedToken(SUBPROTOCOL_PREFIX, offered);
}

/** The highest offered `<prefix><N>` with N in 2..14, as the token to answer with. */
export function negotiateVersionedToken(prefix: string, offered: string | readonly string[]): NegotiatedSubprotocol | null {
  const tokens = typeof offered === 'string' ? offered.split(',') : offered;
  let best = -1;
  for (const raw of tokens) {
    const version = parseVersionedToken(prefix, raw.trim());
    if (version === null || version < OLDEST_PROTOCOL_VERSION || version > CURRENT_PROTOCOL_VERSION) continue;
    if (version > best) best = version;
  }
  if (best < 0) return null;
  return { protocol: `${prefix}${best}`, version: best };
}
