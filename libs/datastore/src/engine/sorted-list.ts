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
    const chunks = this.chunks;
    if (chunks.length === 0) {
      chunks.push([entry]);
      return;
    }
    const compare = this.compare;
    // Ascending keys (an _id counter, a timestamp) go after the last entry: one comparison, no search.
    const lastChunk = chunks[chunks.length - 1];
    let ci: number;
    if (compare(lastChunk[lastChunk.length - 1], entry) <= 0) ci = chunks.length - 1;
    else {
      // The first chunk whose last entry sorts after `entry` (no closure: this runs per key per write).
      let lo = 0;
      let hi = chunks.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const chunk = chunks[mid];
        if (compare(chunk[chunk.length - 1], entry) <= 0) lo = mid + 1;
        else hi = mid;
      }
      ci = lo;
    }
    const chunk = chunks[ci];
    let lo = 0;
    let hi = chunk.length;
    if (compare(chunk[hi - 1], entry) <= 0) lo = hi;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(chunk[mid], entry) <= 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunk.length) chunk.push(entry);
    else chunk.splice(lo, 0, entry);
    if (chunk.length > MAX_CHUNK) chunks.splice(ci, 1, chunk.slice(0, chunk.length >> 1), chunk.slice(chunk.length >> 1));
  }

  /** Removes the entry comparing equal to `entry` (the comparator must identify entries uniquely). */
  remove(entry: E): boolean {
    const pos = this.lowerBoundKey(entry, this.compare);
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
    return this.lowerBoundKey(before, byPredicate);
  }

  /**
   * First position whose entry is not below `key` by `cmp` (entry vs key); like lowerBound without a
   * closure per call, for the lookups every write makes.
   */
  lowerBoundKey<K>(key: K, cmp: (e: E, key: K) => number): Position {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid];
      if (cmp(chunk[chunk.length - 1], key) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return { chunk: lo, index: 0 };
    const chunk = chunks[lo];
    let a = 0;
    let b = chunk.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (cmp(chunk[mid], key) < 0) a = mid + 1;
      else b = mid;
    }
    return { chunk: lo, index: a };
  }

  /** The entry at `pos`, or undefined past the end. */
  at(pos: Position): E | undefined {
    return this.chunks[pos.chunk]?.[pos.index];
  }

  /** Moves `pos` one entry forward in place. */
  advance(pos: Position): void {
    if (++pos.index >= this.chunks[pos.chunk].length) {
      pos.chunk++;
      pos.index = 0;
    }
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

  start(): Position {
    return { chunk: 0, index: 0 };
  }

  end(): Position {
    return { chunk: this.chunks.length, index: 0 };
  }
}

/** `lowerBound`'s predicate as a comparison: entries it calls "before" sort below the key. */
function byPredicate<E>(entry: E, before: (e: E) => boolean): number {
  return before(entry) ? -1 : 0;
}
