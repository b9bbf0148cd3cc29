// Test helper (not a spec, not built): text frames and the one assertion every codec spec makes.
import { SyncProtocolError } from './errors';

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

/** `fn` fails with a SyncProtocolError (whose message matches `pattern`, when given), and with nothing else. */
export function expectProtocolError(fn: () => unknown, pattern?: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SyncProtocolError);
    if (pattern) expect((err as Error).message).toMatch(pattern);
    return;
  }
  throw new Error('expected a SyncProtocolError');
}

/** Runs every decoder on `bytes`: each may accept it or refuse it with a SyncProtocolError, never throw anything else. */
export function decodesOrRefuses(bytes: Uint8Array, decoders: ReadonlyArray<(bytes: Uint8Array) => unknown>): void {
  for (const decode of decoders) {
    try {
      decode(bytes);
    } catch (err) {
      if (!(err instanceof SyncProtocolError)) throw err;
    }
  }
}
