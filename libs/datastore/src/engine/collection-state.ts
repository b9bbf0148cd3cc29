/**
 * One collection of the embedded engine held in memory: documents by canonical `_id` key (insertion
 * ordered, which is the natural order), and the indexes over them. Enforces uniqueness; knows nothing
 * about durability or transactions (the service store does that). An index with a collation orders and
 * deduplicates its string keys by it, whatever comparison the operation running has.
 */
import { DatastoreError } from '../api/datastore.error';
import { type IndexDescription, type SortDirection } from '../api/data-source';
import { type Document, collectPathValues, compareValues, compareValuesUnder, formatValue, getPath, holdsString, idKey } from '../bson/values';
import { type Collation, type StringComparison, compileCollation } from './collation';
import { SortedList } from './sorted-list';

export interface StoredRecord {
  /** Record id: insertion sequence, the tie-breaker inside an index. */
  rid: number;
  key: string;
  doc: Document;
}

export interface IndexEntry {
  key: unknown;
  rec: StoredRecord;
}

function compareEntries(a: IndexEntry, b: IndexEntry): number {
  return compareValues(a.key, b.key) || a.rec.rid - b.rec.rid;
}

/** What IndexState.singleKey returns when a document has no key or several. */
const NO_SINGLE_KEY: unique symbol = Symbol('no single key');

function entryVsKey(e: IndexEntry, key: unknown): number {
  return compareValues(e.key, key);
}

export class IndexState {
  readonly fields: string[];
  private readonly parts: string[][];
  readonly list: SortedList<IndexEntry>;
  /** True once some document had an array under an indexed field: the index then can't give sort order. */
  multikey = false;
  /** One field, not a dotted path. */
  private readonly topLevel: boolean;
  /** The index's collation (absent: simple), and its string comparison (undefined: binary). */
  readonly collation?: Collation;
  readonly comparison: StringComparison;
  /** Keys compared by the index's own comparison, and an entry against a key. */
  private readonly compareKeys: (a: unknown, b: unknown) => number;
  private readonly entryVsKey: (e: IndexEntry, key: unknown) => number;

  constructor(
    readonly name: string,
    readonly spec: Record<string, SortDirection>,
    readonly unique: boolean,
    readonly sparse: boolean,
    collation?: Collation,
  ) {
    this.fields = Object.keys(spec);
    this.parts = this.fields.map((f) => f.split('.'));
    this.topLevel = this.parts.length === 1 && this.parts[0].length === 1;
    const comparison = compileCollation(collation);
    this.comparison = comparison;
    if (comparison) {
      this.collation = collation;
      this.compareKeys = (a, b) => compareValuesUnder(comparison, a, b);
      this.entryVsKey = (e, key) => compareValuesUnder(comparison, e.key, key);
      this.list = new SortedList<IndexEntry>((a, b) => compareValuesUnder(comparison, a.key, b.key) || a.rec.rid - b.rec.rid);
    } else {
      // Binary keys, compared as they always were: writes never run under an operation's collation.
      this.compareKeys = compareValues;
      this.entryVsKey = entryVsKey;
      this.list = new SortedList<IndexEntry>(compareEntries);
    }
  }

  get single(): string | undefined {
    return this.fields.length === 1 ? this.fields[0] : undefined;
  }

  describe(): IndexDescription {
    const out: IndexDescription = { name: this.name, key: this.spec };
    if (this.unique && this.name !== '_id_') out.unique = true;
    if (this.sparse) out.sparse = true;
    if (this.collation) out.collation = this.collation;
    return out;
  }

  /** The keys a document contributes (several for an array field). */
  keysOf(doc: Document): unknown[] {
    if (this.parts.length > 1) {
      const values = this.fields.map((f) => getPath(doc, f));
      if (this.sparse && values.every((v) => v === undefined)) return [];
      // Compound keys hold arrays whole: such an index keeps uniqueness but cannot answer queries.
      if (values.some((v) => Array.isArray(v))) this.multikey = true;
      return [values.map((v) => (v === undefined ? null : v))];
    }
    if (this.parts[0].length === 1) {
      const value = doc[this.fields[0]];
      if (value === undefined) return this.sparse ? [] : [null];
      if (!Array.isArray(value)) return [value];
    }
    const values = collectPathValues(doc, this.parts[0]);
    if (values.length === 0) return this.sparse ? [] : [null];
    const keys: unknown[] = [];
    for (const value of values) {
      if (Array.isArray(value)) {
        this.multikey = true;
        for (const item of value) keys.push(item);
        if (value.length === 0) keys.push(undefined);
        keys.push(value);
      } else {
        keys.push(value === undefined ? null : value);
      }
    }
    if (keys.length === 1) return keys;
    if (values.length > 1) this.multikey = true;
    keys.sort(this.compareKeys);
    return keys.filter((k, i) => i === 0 || this.compareKeys(keys[i - 1], k) !== 0);
  }

  /**
   * The one key of `doc` when the index is on a single top-level field that holds no array (the usual
   * case), without building the array keysOf returns; NO_SINGLE_KEY otherwise.
   */
  singleKey(doc: Document): unknown {
    if (!this.topLevel) return NO_SINGLE_KEY;
    const value = doc[this.fields[0]];
    if (value === undefined) return this.sparse ? NO_SINGLE_KEY : null;
    return Array.isArray(value) ? NO_SINGLE_KEY : value;
  }

  add(rec: StoredRecord, keys?: unknown[]): void {
    if (keys === undefined) {
      const key = this.singleKey(rec.doc);
      if (key !== NO_SINGLE_KEY) {
        this.list.insert({ key, rec });
        return;
      }
      keys = this.keysOf(rec.doc);
    }
    for (const key of keys) this.list.insert({ key, rec });
  }

  remove(rec: StoredRecord, keys?: unknown[]): void {
    if (keys === undefined) {
      const key = this.singleKey(rec.doc);
      if (key !== NO_SINGLE_KEY) {
        this.list.remove({ key, rec });
        return;
      }
      keys = this.keysOf(rec.doc);
    }
    for (const key of keys) this.list.remove({ key, rec });
  }

  /** A record other than `self` already holding `key`, if the index is unique. */
  conflict(key: unknown, self: StoredRecord | undefined): StoredRecord | undefined {
    const list = this.list;
    const pos = list.lowerBoundKey(key, this.entryVsKey);
    for (let e = list.at(pos); e !== undefined && this.entryVsKey(e, key) === 0; list.advance(pos), e = list.at(pos)) {
      if (e.rec !== self) return e.rec;
    }
    return undefined;
  }

  /** The entries whose key equals `key`. */
  equal(key: unknown): IndexEntry[] {
    const out: IndexEntry[] = [];
    const list = this.list;
    const pos = list.lowerBoundKey(key, this.entryVsKey);
    for (let e = list.at(pos); e !== undefined && this.entryVsKey(e, key) === 0; list.advance(pos), e = list.at(pos)) out.push(e);
    return out;
  }
}

export interface ViewDefinition {
  viewOn: string;
  pipeline: Document[];
}

export class CollectionState {
  readonly records = new Map<string, StoredRecord>();
  readonly indexes = new Map<string, IndexState>();
  private nextRid = 1;
  /** The collection's UUID (change events' `collectionUUID`), given when it is created, kept in the log. */
  uuid?: string;
  /**
   * `changeStreamPreAndPostImages.enabled` once a collMod or create set it. Unset, change events get the
   * images they ask for (Tessera keeps every pre-image); set false, none, as MongoDB's default is.
   */
  changeStreamImages?: boolean;

  /**
   * `collation` is the collection's (or view's) default (createCollection's `collation`): operations naming
   * none use it, indexes naming none get it, and the `_id` index has it, as in MongoDB.
   */
  constructor(
    readonly dbName: string,
    readonly name: string,
    readonly view?: ViewDefinition,
    readonly collation?: Document,
  ) {
    if (!view) this.indexes.set('_id_', new IndexState('_id_', { _id: 1 }, true, false, collation));
  }

  get idIndex(): IndexState {
    return this.indexes.get('_id_') as IndexState;
  }

  get(id: unknown): StoredRecord | undefined {
    return this.records.get(idKey(id));
  }

  duplicateError(index: IndexState, key: unknown): DatastoreError {
    const keyText = index.fields.length === 1 ? `{ ${index.fields[0]}: ${formatValue(key)} }` : `{ ${index.fields.map((f, i) => `${f}: ${formatValue((key as unknown[])[i])}`).join(', ')} }`;
    const error = new DatastoreError('DuplicateKey', `E11000 duplicate key error collection: ${this.dbName}.${this.name} index: ${index.name} dup key: ${keyText}`);
    const keyValue = Object.fromEntries(index.fields.map((f, i) => [f, index.fields.length === 1 ? key : (key as unknown[])[i]]));
    error.errorResponse = { keyPattern: { ...index.spec }, keyValue };
    return error;
  }

  /** Throws E11000 if `doc` would break a unique index (as a new document, or replacing `self`). */
  checkUnique(doc: Document, self?: StoredRecord, key?: string): void {
    if (!self) {
      const existing = this.records.get(key ?? idKey(doc._id));
      if (existing) throw this.duplicateError(this.idIndex, doc._id);
      // Records are keyed by binary `_id`; a collated `_id` index also refuses an `_id` equal by the collation.
      if (this.idIndex.comparison && holdsString(doc._id) && this.idIndex.conflict(doc._id, undefined)) throw this.duplicateError(this.idIndex, doc._id);
    }
    for (const index of this.indexes.values()) {
      if (!index.unique || index.name === '_id_') continue;
      const single = index.singleKey(doc);
      if (single !== NO_SINGLE_KEY) {
        if (index.conflict(single, self)) throw this.duplicateError(index, single);
        continue;
      }
      for (const key of index.keysOf(doc)) if (index.conflict(key, self)) throw this.duplicateError(index, key);
    }
  }

  insert(doc: Document, key = idKey(doc._id)): StoredRecord {
    const rec: StoredRecord = { rid: this.nextRid++, key, doc };
    this.records.set(rec.key, rec);
    for (const index of this.indexes.values()) index.add(rec);
    return rec;
  }

  replace(rec: StoredRecord, doc: Document): void {
    for (const index of this.indexes.values()) {
      if (index.name === '_id_') continue;
      const before = index.keysOf(rec.doc);
      const after = index.keysOf(doc);
      if (before.length === after.length && before.every((k, i) => compareValues(k, after[i]) === 0)) continue;
      index.remove(rec, before);
      index.add(rec, after);
    }
    rec.doc = doc;
  }

  delete(rec: StoredRecord): void {
    this.records.delete(rec.key);
    for (const index of this.indexes.values()) index.remove(rec);
  }

  /** Loads documents without per-document index maintenance (recovery), then builds the indexes. */
  bulkLoad(docs: Document[]): void {
    for (const doc of docs) {
      const rec: StoredRecord = { rid: this.nextRid++, key: idKey(doc._id), doc };
      this.records.set(rec.key, rec);
    }
    for (const [name, index] of this.indexes) this.indexes.set(name, this.createIndex(name, index.spec, index.unique, index.sparse, index.collation));
  }

  /** Re-adds a deleted record under its old record id (transaction rollback). */
  restore(rec: StoredRecord): void {
    this.records.set(rec.key, rec);
    for (const index of this.indexes.values()) index.add(rec);
  }

  createIndex(name: string, spec: Record<string, SortDirection>, unique: boolean, sparse: boolean, collation?: Collation): IndexState {
    const index = new IndexState(name, spec, unique, sparse, collation);
    const entries: IndexEntry[] = [];
    for (const rec of this.records.values()) for (const key of index.keysOf(rec.doc)) entries.push({ key, rec });
    index.list.load(entries);
    // `_id`s are unique by their binary key already; one a collated `_id` index calls equal to another is only
    // refused on insert (data written before `_id` indexes had the collection's collation must still load).
    if (unique && name !== '_id_') {
      let prev: IndexEntry | undefined;
      for (const e of index.list.scan(index.list.start())) {
        if (prev && prev.rec !== e.rec && compareValuesUnder(index.comparison, prev.key, e.key) === 0) throw this.duplicateError(index, e.key);
        prev = e;
      }
    }
    return index;
  }
}
