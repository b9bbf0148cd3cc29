/**
 * Polls `probe` until it returns without throwing (and, when it returns a boolean, returns true), or the
 * deadline passes; then rethrows the last failure. Tests wait for conditions this way, never by sleeping.
 */
export async function eventually<T>(probe: () => T | Promise<T>, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const interval = options.intervalMs ?? 25;
  let lastError: unknown = new Error('condition never held');
  for (;;) {
    try {
      const value = await probe();
      if (value !== false) return value;
      lastError = new Error('condition returned false');
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) throw lastError;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
