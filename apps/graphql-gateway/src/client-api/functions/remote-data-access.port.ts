import type { AppConfig } from '@tessera/app-config';
import type { CallerUser } from '@tessera/contracts';

/** The app a data-access call is for. */
export interface DataAccessApp {
  /** The app's `_id`. */
  appId: string;
  clientAppId: string;
  /** The live deployment's id: compiled rules are cached per deployment. */
  deploymentId: string | undefined;
  config: AppConfig;
}

/**
 * Remote data access of the data-source service as a client calls it (`functions/call` with `service`),
 * applying the app's rules as `user` (its `%%user` derived by `ruleUserOf`). The lead's libs/data-access implements it; the host provides it.
 *
 * - `serviceName` is what the client sent (`mongodb-atlas` or the service's own name).
 * - `action` is the wire name: find, findOne, count, aggregate, insertOne, insertMany, updateOne,
 *   updateMany, deleteOne, deleteMany, findOneAndUpdate, findOneAndReplace, findOneAndDelete, watch.
 *   The gateway has already turned realm-web's `findOneAndReplace` without `update` into findOneAndDelete.
 * - `args` is the client's single arguments object (`database`, `collection`, `query`, `filter`, `update`,
 *   `document`, `documents`, `pipeline`, `project`/`projection`, `sort`, `limit`, `upsert`,
 *   `returnNewDocument`, `arrayFilters`, `ids`), values as BSON values; option numbers are JS numbers.
 * - The result is the plain value (documents, `{ insertedId }`, counts as numbers); the gateway writes the
 *   integer widths the SDKs require. For `watch` the result is an `AsyncIterable` of change events already
 *   filtered by `ids`/`filter` and by the rules; the gateway closes it (`return()`) when the client leaves.
 * - Failures are TesseraErrors (MongoDBError, NoMatchingRuleFound, ...), which reach the client as is.
 */
export abstract class RemoteDataAccess {
  abstract execute(app: DataAccessApp, serviceName: string, action: string, args: Record<string, unknown>, user: CallerUser): Promise<unknown>;
}
