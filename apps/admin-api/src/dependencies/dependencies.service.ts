import { Injectable } from '@nestjs/common';
import { DependencyStore, type AppRecord, type DependenciesRecord } from '@tessera/platform';
import { AppStateService } from '../deploy/app-state.service';
import { readDependencyArchive } from './dependency-archive';
import { buildDependencyBundle } from './dependency-bundle';
import { DependenciesError, DependenciesErrorCode } from './dependencies.exception';

/** App Services' DependenciesSummary. */
export interface DependenciesSummary {
  _id: string;
  location: string;
  user_id: string;
  last_modified: number;
  dependencies_list: Array<{ name: string; version: string }>;
}

/**
 * An app's function dependencies: an upload is checked (size, pure JavaScript, complete tree) and bundled
 * here, stored for every runtime replica, and made live with a new deployment of the app's current
 * configuration, so runtimes retire their warm sandboxes and load the new modules. A refused upload
 * changes nothing but the status it reports.
 */
@Injectable()
export class DependenciesService {
  constructor(
    private readonly store: DependencyStore,
    private readonly state: AppStateService,
  ) {}

  async upload(record: AppRecord, archive: Uint8Array, archiveName: string, userId: string | undefined): Promise<void> {
    let built;
    try {
      built = buildDependencyBundle(readDependencyArchive(archive));
    } catch (error) {
      if (error instanceof DependenciesError) await this.store.markFailed(record._id, error.message);
      throw error;
    }
    const bundle = new TextEncoder().encode(JSON.stringify(built.bundle));
    await this.state.exclusive(record._id, async () => {
      await this.store.put(record._id, { list: built.list, bundle, archive, archiveName, ...(userId ? { userId } : {}) });
      await this.redeploy(record, userId);
    });
  }

  /** The packages of the upload in use (an empty list when there is none). */
  async summary(record: AppRecord): Promise<DependenciesSummary> {
    const found = await this.store.get(record._id);
    return {
      _id: record._id,
      location: record.location,
      user_id: found?.user_id ?? '',
      last_modified: found?.last_modified ?? 0,
      dependencies_list: found?.dependencies_list ?? [],
    };
  }

  async status(record: AppRecord): Promise<{ status: string; status_message: string }> {
    const found: DependenciesRecord | undefined = await this.store.get(record._id);
    return found ? { status: found.status, status_message: found.status_message } : { status: 'successful', status_message: '' };
  }

  async archive(record: AppRecord): Promise<{ name: string; bytes: Uint8Array }> {
    const found = await this.store.archive(record._id);
    if (!found) throw new DependenciesError(DependenciesErrorCode.DependenciesNotFound, 'the app has no dependencies');
    return found;
  }

  async remove(record: AppRecord, userId: string | undefined): Promise<void> {
    await this.state.exclusive(record._id, async () => {
      if (!(await this.store.remove(record._id))) throw new DependenciesError(DependenciesErrorCode.DependenciesNotFound, 'the app has no dependencies');
      await this.redeploy(record, userId);
    });
  }

  /** A new deployment of the live configuration: every runtime drops its sandboxes of the app and loads the dependencies anew. */
  private async redeploy(record: AppRecord, userId: string | undefined): Promise<void> {
    const prepared = await this.state.prepare(record, await this.state.liveFiles(record), 'edit');
    await this.state.commit(prepared, 'edit', userId);
  }
}
