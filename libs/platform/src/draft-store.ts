import { type Document, isDuplicateKeyError } from '@tessera/datastore';
import { TesseraError } from '@tessera/domain';
import type { DeployedFiles } from './deployment-store';
import { newObjectIdHex } from './ids';
import { decodeFiles, encodeFiles, type PlatformDatabase } from './platform-database';

export interface DraftRecord {
  _id: string;
  user_id: string;
  app: { _id: string };
  /** Seconds since the epoch. */
  created: number;
}

export enum DraftStoreErrorCode {
  DraftAlreadyExists = 'DraftAlreadyExists',
  DraftNotFound = 'DraftNotFound',
}

export class DraftStoreError extends TesseraError {
  readonly httpStatus: number;
  constructor(
    readonly errorCode: DraftStoreErrorCode,
    message: string,
  ) {
    super(message);
    this.httpStatus = errorCode === DraftStoreErrorCode.DraftAlreadyExists ? 409 : 404;
  }
}

/**
 * The one pending draft an app may have (`drafts`, unique per app): imports made while a draft is open are
 * staged here and go live together when the draft is deployed.
 */
export class DraftStore {
  constructor(private readonly db: PlatformDatabase) {}

  async create(appId: string, userId: string): Promise<DraftRecord> {
    const draft: DraftRecord = { _id: newObjectIdHex(), user_id: userId, app: { _id: appId }, created: Math.floor(Date.now() / 1000) };
    try {
      await (await this.db.collection('drafts')).insertOne({ _id: draft._id, app_id: appId, user_id: userId, created: draft.created });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new DraftStoreError(DraftStoreErrorCode.DraftAlreadyExists, 'a draft already exists for this app');
      throw error;
    }
    return draft;
  }

  async get(appId: string): Promise<DraftRecord | undefined> {
    const stored = await (await this.db.collection('drafts')).findOne({ app_id: appId }, { files: 0 });
    return stored ? toRecord(stored) : undefined;
  }

  /** The staged files of the app's draft, or undefined when nothing was staged. */
  async files(appId: string, draftId: string): Promise<DeployedFiles | undefined> {
    const draft = await this.require(appId, draftId);
    return draft['files'] ? decodeFiles(draft['files']) : undefined;
  }

  async stage(appId: string, draftId: string, files: DeployedFiles): Promise<void> {
    const staged = await (await this.db.collection('drafts')).updateOne({ _id: draftId, app_id: appId }, { $set: { files: encodeFiles(files) } });
    if (staged.matchedCount === 0) throw notFound(draftId);
  }

  async remove(appId: string, draftId: string): Promise<void> {
    const removed = await (await this.db.collection('drafts')).deleteOne({ _id: draftId, app_id: appId });
    if (removed.deletedCount === 0) throw notFound(draftId);
  }

  private async require(appId: string, draftId: string): Promise<Document> {
    const draft = await (await this.db.collection('drafts')).findOne({ _id: draftId, app_id: appId });
    if (!draft) throw notFound(draftId);
    return draft;
  }
}

function notFound(draftId: string): DraftStoreError {
  return new DraftStoreError(DraftStoreErrorCode.DraftNotFound, `draft not found: '${draftId}'`);
}

function toRecord(stored: Document): DraftRecord {
  return { _id: String(stored['_id']), user_id: String(stored['user_id']), app: { _id: String(stored['app_id']) }, created: Number(stored['created']) };
}
