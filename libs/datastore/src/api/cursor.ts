/**
 * The cursor both engines hand out: it collects skip, limit, sort and projection until the first document
 * is asked for, then runs the query once. Changing it after that fails as MongoDB's drivers do.
 */
import { DatastoreError } from './datastore.error';
import { type Document, type FindCursor, type SortSpec } from './data-source';

export interface CursorState {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  projection?: Document;
}

export class LazyCursor implements FindCursor {
  private buffer?: Document[];
  private position = 0;
  private running?: Promise<Document[]>;

  constructor(
    private readonly run: (state: CursorState) => Promise<Document[]>,
    private readonly state: CursorState = {},
    private readonly kind: 'find' | 'aggregate' = 'find',
  ) {}

  private assertOpen(method: string): void {
    if (this.running) {
      throw new DatastoreError('CursorInUse', `Cursor is already initialized: ${method}() must be called before documents are retrieved`, { clientError: true });
    }
  }

  skip(n: number): this {
    this.assertOpen('skip');
    if (!Number.isInteger(n) || n < 0) throw new DatastoreError('BadValue', 'skip requires a non-negative integer', { clientError: true });
    this.state.skip = n;
    return this;
  }

  limit(n: number): this {
    this.assertOpen('limit');
    if (this.kind !== 'find') throw new DatastoreError('IllegalOperation', 'limit is not available on aggregate cursors', { clientError: true });
    if (!Number.isInteger(n)) throw new DatastoreError('BadValue', 'limit requires an integer', { clientError: true });
    this.state.limit = n;
    return this;
  }

  sort(spec: SortSpec): this {
    this.assertOpen('sort');
    if (this.kind !== 'find') throw new DatastoreError('IllegalOperation', 'sort is not available on aggregate cursors', { clientError: true });
    this.state.sort = spec;
    return this;
  }

  project(projection: Document): this {
    this.assertOpen('project');
    this.state.projection = projection;
    return this;
  }

  private async load(): Promise<Document[]> {
    this.running ??= this.run(this.state);
    this.buffer ??= await this.running;
    return this.buffer;
  }

  async next(): Promise<Document | null> {
    const docs = await this.load();
    if (this.position >= docs.length) return null;
    return docs[this.position++];
  }

  async toArray(): Promise<Document[]> {
    const docs = await this.load();
    const rest = this.position === 0 ? docs : docs.slice(this.position);
    this.position = docs.length;
    return rest;
  }

  async close(): Promise<void> {
    this.running ??= Promise.resolve([]);
    this.buffer = [];
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Document> {
    for (;;) {
      const doc = await this.next();
      if (doc === null) return;
      yield doc;
    }
  }
}
