/**
 * An ordered multiset kept as a list of sorted chunks (a flat B-tree of depth two): inserts and removals
 * touch one chunk of at most MAX_CHUNK entries, lookups are two binary searches, and range scans walk
 * chunks in order. Used for every index of the embedded engine.
 */
const MAX_CHUNK = 1024;

export type Position = { chunk: number; index: number };

export class SortedList<E> {
  private chunks: E[][] = [];
  private count = 0;

  constructor(private readonly compare: (a: E, b: E) => number) {}

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.chunks = [];
    this.count = 0;
  }

  /** Builds from entries in any order (faster than inserting one by one). */
  load(entries: E[]): void {
    entries.sort(this.compare);
    this.chunks = [];
    for (let i = 0; i < entries.length; i += MAX_CHUNK / 2) this.chunks.push(entries.slice(i, i + MAX_CHUNK / 2));
    this.count = entries.length;
  }

  insert(entry: E): void {
    this.count++;
    if (this.chunks.length === 0) {
      this.chunks.push([entry]);
      return;
    }
    const ci = this.chunkFor((e) => this.compare(e, entry) <= 0);
    const chunk = this.chunks[ci];
    let lo = 0;
    let hi = chunk.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(chunk[mid], entry) <= 0) lo = mid + 1;
      else hi = mid;
    }
    chunk.splice(lo, 0, entry);
    if (chunk.length > MAX_CHUNK) this.chunks.splice(ci, 1, chunk.slice(0, chunk.length >> 1), chunk.slice(chunk.length >> 1));
  }

  /** Removes the entry comparing equal to `entry` (the comparator must identify entries uniquely). */
  remove(entry: E): boolean {
    const pos = this.lowerBound((e) => this.compare(e, entry) < 0);
    if (pos.chunk >= this.chunks.length) return false;
    const chunk = this.chunks[pos.chunk];
    if (this.compare(chunk[pos.index], entry) !== 0) return false;
    chunk.splice(pos.index, 1);
    if (chunk.length === 0) this.chunks.splice(pos.chunk, 1);
    this.count--;
    return true;
  }

  /**
   * First position whose entry does not satisfy `before` (entries satisfying it must form a prefix).
   * A position past the end has chunk === chunks.length.
   */
  lowerBound(before: (e: E) => boolean): Position {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const last = chunks[mid][chunks[mid].length - 1];
      if (before(last)) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return { chunk: lo, index: 0 };
    const chunk = chunks[lo];
    let a = 0;
    let b = chunk.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (before(chunk[mid])) a = mid + 1;
      else b = mid;
    }
    return { chunk: lo, index: a };
  }

  private chunkFor(notAfter: (e: E) => boolean): number {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (notAfter(chunks[mid][chunks[mid].length - 1])) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Entries from `from` onwards (or backwards from just before `from` when reverse). */
  *scan(from: Position, reverse = false): Generator<E> {
    const chunks = this.chunks;
    if (!reverse) {
      for (let c = from.chunk, i = from.index; c < chunks.length; c++, i = 0) {
        const chunk = chunks[c];
        for (; i < chunk.length; i++) yield chunk[i];
      }
      return;
    }
    let c = from.chunk;
    let i = from.index - 1;
    if (c >= chunks.length) {
      c = chunks.length - 1;
      i = c >= 0 ? chunks[c].length - 1 : -1;
    }
    for (; c >= 0; c--, i = c >= 0 ? chunks[c].length - 1 : -1) {
      const chunk = chunks[c];
      for (; i >= 0; i--) yield chunk[i];
    }
  }

  /** Entries from the first one not `before`, as long as `keep` holds (no generator: point lookups are hot). */
  takeWhile(before: (e: E) => boolean, keep: (e: E) => boolean): E[] {
    const out: E[] = [];
    const pos = this.lowerBound(before);
    const chunks = this.chunks;
    for (let c = pos.chunk, i = pos.index; c < chunks.length; c++, i = 0) {
      const chunk = chunks[c];
      for (; i < chunk.length; i++) {
        if (!keep(chunk[i])) return out;
        out.push(chunk[i]);
      }
    }
    return out;
  }

  start(): Position {
    return { chunk: 0, index: 0 };
  }

  end(): Position {
    return { chunk: this.chunks.length, index: 0 };
  }
}
