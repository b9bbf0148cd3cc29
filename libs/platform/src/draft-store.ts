import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TesseraError } from '@tessera/domain';
import type { DeployedFiles } from './deployment-store';
import { newObjectIdHex } from './ids';
import { readJsonFile, writeJsonFile } from './json-file';

export interface DraftRecord {
  _id: string;
  user_id: string;
  app: { _id: string };
  /** Seconds since the epoch. */
  created: number;
}

interface StoredDraft extends DraftRecord {
  /** The staged app directory (base64 per file), or absent while nothing was staged. */
  files?: Record<string, string>;
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
 * The one pending draft an app may have (`<dataDir>/platform/apps/<appId>/draft.json`): imports made
 * while a draft is open are staged here and go live together when the draft is deployed.
 */
export class FileDraftStore {
  constructor(private readonly dataDir: string) {}

  private path(appId: string): string {
    return join(this.dataDir, 'platform', 'apps', appId, 'draft.json');
  }

  async create(appId: string, userId: string): Promise<DraftRecord> {
    if (await this.get(appId)) throw new DraftStoreError(DraftStoreErrorCode.DraftAlreadyExists, 'a draft already exists for this app');
    const draft: StoredDraft = { _id: newObjectIdHex(), user_id: userId, app: { _id: appId }, created: Math.floor(Date.now() / 1000) };
    await writeJsonFile(this.path(appId), draft);
    return strip(draft);
  }

  async get(appId: string): Promise<DraftRecord | undefined> {
    const draft = await readJsonFile<StoredDraft>(this.path(appId));
    return draft ? strip(draft) : undefined;
  }

  /** The staged files of the app's draft, or undefined when nothing was staged. */
  async files(appId: string, draftId: string): Promise<DeployedFiles | undefined> {
    const draft = await this.require(appId, draftId);
    return draft.files ? new Map(Object.entries(draft.files).map(([path, base64]) => [path, Buffer.from(base64, 'base64')])) : undefined;
  }

  async stage(appId: string, draftId: string, files: DeployedFiles): Promise<void> {
    const draft = await this.require(appId, draftId);
    draft.files = Object.fromEntries([...files].map(([path, bytes]) => [path, Buffer.from(bytes).toString('base64')]));
    await writeJsonFile(this.path(appId), draft);
  }

  async remove(appId: string, draftId: string): Promise<void> {
    await this.require(appId, draftId);
    await rm(this.path(appId), { force: true });
  }

  private async require(appId: string, draftId: string): Promise<StoredDraft> {
    const draft = await readJsonFile<StoredDraft>(this.path(appId));
    if (!draft || draft._id !== draftId) throw new DraftStoreError(DraftStoreErrorCode.DraftNotFound, `draft not found: '${draftId}'`);
    return draft;
  }
}

function strip(draft: StoredDraft): DraftRecord {
  const { files: _files, ...record } = draft;
  return record;
}
