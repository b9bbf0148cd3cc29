/**
 * The one place the embedded engine reaches mingo: query matching, projection and aggregation with every
 * operator registered, and mingo's failures turned into MongoDB-shaped errors.
 */
import 'mingo/init/system';
import { Aggregator, Query } from 'mingo';
import { type CollectionResolver } from 'mingo/core';
import { DatastoreError } from '../api/datastore.error';
import { type Document } from '../bson/values';
import { fastMatcher } from './matcher';

function translate(error: unknown): never {
  if (error instanceof DatastoreError) throw error;
  const message = error instanceof Error ? error.message : String(error);
  const unknown = /unknown (?:query |top level |pipeline |expression |projection )?operator:? ?'?(\$\w+)'?/i.exec(message);
  if (unknown) throw new DatastoreError('BadValue', `unknown operator: ${unknown[1]}`, { cause: error });
  throw new DatastoreError('BadValue', message, { cause: error });
}

export type Matcher = (doc: Document) => boolean;

const matchAll: Matcher = () => true;

/** Compiles a query filter; throws BadValue for unknown operators. */
export function compileFilter(filter: Document | undefined): Matcher {
  if (!filter || Object.keys(filter).length === 0) return matchAll;
  const fast = fastMatcher(filter);
  if (fast) return fast;
  let query: Query;
  try {
    query = new Query(filter);
  } catch (error) {
    translate(error);
  }
  return (doc) => {
    try {
      return query.test(doc);
    } catch (error) {
      translate(error);
    }
  };
}

export function runPipeline(docs: Iterable<Document>, pipeline: Document[], resolver?: CollectionResolver): Document[] {
  try {
    const aggregator = new Aggregator(pipeline, resolver ? { collectionResolver: resolver } : undefined);
    return aggregator.run<Document>(Array.isArray(docs) ? (docs as Document[]) : [...docs]);
  } catch (error) {
    translate(error);
  }
}

/** Applies a validated projection to one document (mingo handles $slice, $elemMatch and the rest). */
export function compileProjection(projection: Document, filter: Document | undefined): (doc: Document) => Document {
  let query: Query;
  try {
    query = new Query(filter ?? {});
  } catch (error) {
    translate(error);
  }
  return (doc) => {
    try {
      return query.find([doc], projection).next() as Document;
    } catch (error) {
      translate(error);
    }
  };
}
