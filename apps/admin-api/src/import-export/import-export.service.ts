import { Injectable } from '@nestjs/common';
import { hostingDirectoryFiles, readAppFiles, type AppFiles, type ConfigViolation } from '@tessera/app-config';
import { DeploymentStore, DraftStore, type AppRecord, type DeploymentRecord } from '@tessera/platform';
import { AppStateService } from '../deploy/app-state.service';
import { HostingAssetsService } from '../hosting/hosting-assets.service';
import { appDataToFiles } from './app-data';
import { writeExportFiles } from './export-layout';

/**
 * Moving whole apps in and out: export (20210101 layout, for realm-cli), pull and push (current layout,
 * for the tessera CLI), import of realm-cli's AppData JSON, drafts and their deployment.
 */
@Injectable()
export class ImportExportService {
  constructor(
    private readonly state: AppStateService,
    private readonly drafts: DraftStore,
    private readonly deployments: DeploymentStore,
    private readonly hosting: HostingAssetsService,
  ) {}

  /** The export layout, hosted files included (App Services' export carried them under hosting/). */
  async exportFiles(record: AppRecord, sourceControl: boolean): Promise<AppFiles> {
    const files = writeExportFiles(await this.state.liveApp(record), { sourceControl, clientAppId: record.client_app_id });
    return new Map([...files, ...(await this.hosting.directoryFiles(record))].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** The live configuration; with `includeHosting`, the hosted files too (`pull --include-hosting`). */
  async pullFiles(record: AppRecord, includeHosting = false): Promise<AppFiles> {
    const files = await this.state.liveFiles(record);
    return includeHosting ? new Map([...files, ...(await this.hosting.directoryFiles(record))]) : files;
  }

  /** The diff a push of these files would make; throws with every violation when they are invalid. */
  async diff(record: AppRecord, files: AppFiles): Promise<string[]> {
    return (await this.preview(record, files)).diffs;
  }

  /** The diff a push would make and the warnings it would give (a function given the default config). */
  async preview(record: AppRecord, files: AppFiles): Promise<{ diffs: string[]; warnings: ConfigViolation[] }> {
    const prepared = await this.state.prepare(record, files, 'import');
    return { diffs: prepared.diff, warnings: prepared.warnings };
  }

  async push(record: AppRecord, files: AppFiles, userId: string | undefined, name?: string): Promise<DeploymentRecord> {
    return (await this.state.deploy(record, files, 'import', userId, name)).deployment;
  }

  importAppData(data: unknown): AppFiles {
    return appDataToFiles(data);
  }

  /** realm-cli's import: staged into the open draft when there is one, live at once otherwise. */
  async import(record: AppRecord, files: AppFiles, userId: string | undefined): Promise<void> {
    const draft = await this.drafts.get(record._id);
    if (!draft) {
      await this.push(record, files, userId);
      return;
    }
    await this.state.exclusive(record._id, async () => {
      const prepared = await this.state.prepare(record, files, 'import');
      // The hosted files the import carries go live with the draft.
      await this.drafts.stage(record._id, draft._id, prepared.hosting ? new Map([...prepared.files, ...hostingDirectoryFiles(prepared.hosting)]) : prepared.files);
    });
  }

  async draftDiff(record: AppRecord, draftId: string): Promise<string[]> {
    const staged = await this.drafts.files(record._id, draftId);
    return staged ? (await this.state.prepare(record, staged, 'import')).diff : [];
  }

  /** Deploys a draft: the whole staged app is checked again against the live one, then goes live. */
  async deployDraft(record: AppRecord, draftId: string, userId: string | undefined): Promise<DeploymentRecord> {
    const staged = await this.drafts.files(record._id, draftId);
    const deployment = staged ? await this.push(record, staged, userId) : await this.push(record, await this.state.liveFiles(record), userId);
    await this.drafts.remove(record._id, draftId);
    return deployment;
  }

  async deploymentsOf(record: AppRecord): Promise<DeploymentRecord[]> {
    return this.deployments.list(record._id);
  }

  /** The name realm-cli derives its local directory from (the text before the last `_`). */
  exportName(record: AppRecord, files: AppFiles): string {
    const name = readAppFiles(files).app.settings.name || record.name;
    const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
    return `${name}_${stamp}.zip`;
  }
}
