// Internal helper of both servers' graceful close; not part of the public entry.

/** Waits for `work` to settle, at most `timeoutMs`. */
export async function drain(work: Set<Promise<void>>, timeoutMs: number): Promise<void> {
  if (work.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled([...work]), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}
