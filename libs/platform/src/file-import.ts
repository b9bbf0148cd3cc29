import { mkdir, readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Binary } from 'bson';
import type { Document } from '@tessera/datastore';
import { readJsonFile } from './json-file';
import { logDocument } from './log-store';
import type { PlatformDatabase, PlatformCollection } from './platform-database';

/** What an import brought over, for the boot log. */
export interface FileImportSummary {
  /** Where the imported files were moved, so a later start does not import them again. */
  movedTo: string;
  apps: number;
  deployments: number;
  logEntries: number;
}

type Base64Files = Record<string, string>;

/** What the file stores kept under `<dataDir>/platform/`. */
const stateEntries = ['admin.json', 'admin-api-keys.json', 'keys', 'apps'];

/**
 * One-time import of the platform state that releases before the platform database kept in files under
 * `<dataDir>/platform/` (admin.json, admin-api-keys.json, keys/, apps/<id>/{app.json, deployments/,
 * draft.json, secrets.json, sync-state.json, logs.jsonl}). Every document is written by its `_id` with an
 * upsert, so an import interrupted by a crash is simply done again at the next start; once it is complete
 * the imported files move to `<dataDir>/platform-imported/<time>/`. Returns undefined when there is
 * nothing to import.
 */
export async function importFilePlatformState(dataDir: string, db: PlatformDatabase): Promise<FileImportSummary | undefined> {
  const root = join(dataDir, 'platform');
  // `platform/mail/` (the development mail outbox) is not platform state and stays where it is.
  const present = ((await entries(root)) ?? []).filter((name) => stateEntries.includes(name));
  if (present.length === 0) return undefined;
  const put = async (collection: PlatformCollection, document: Document): Promise<void> => {
    await (await db.collection(collection)).replaceOne({ _id: document['_id'] }, document, { upsert: true });
  };
  const summary = { apps: 0, deployments: 0, logEntries: 0 };

  const admin = await readJsonFile<{ groupId: string; users: Document[]; sessions?: Record<string, string> }>(join(root, 'admin.json'));
  if (admin) {
    await put('meta', { _id: 'group', group_id: admin.groupId });
    for (const user of admin.users) await put('admin_users', user);
    for (const [sessionId, userId] of Object.entries(admin.sessions ?? {})) await put('admin_sessions', { _id: sessionId, user_id: userId, created: new Date() });
  }
  for (const key of (await readJsonFile<Document[]>(join(root, 'admin-api-keys.json'))) ?? []) await put('admin_api_keys', key);
  for (const name of (await entries(join(root, 'keys'))) ?? []) {
    const stored = name.endsWith('.json') ? await readJsonFile<{ key: string; created?: string }>(join(root, 'keys', name)) : undefined;
    if (stored) await put('signing_keys', { _id: name.slice(0, -'.json'.length), key: new Binary(Buffer.from(stored.key, 'base64')), created: stored.created ? new Date(stored.created) : new Date() });
  }

  for (const appId of (await entries(join(root, 'apps'))) ?? []) {
    const directory = join(root, 'apps', appId);
    const record = await readJsonFile<Document>(join(directory, 'app.json'));
    if (!record) continue;
    await put('apps', record);
    summary.apps++;

    let live: Document | undefined;
    for (const name of ((await entries(join(directory, 'deployments'))) ?? []).filter((file) => /^\d{8}\.json$/.test(file)).sort()) {
      const deployment = await readJsonFile<Document & { files: Base64Files; version: number }>(join(directory, 'deployments', name));
      if (!deployment) continue;
      await put('deployments', { ...deployment, files: binaryFiles(deployment.files) });
      if (!live || deployment.version > Number(live['version'])) live = deployment;
      summary.deployments++;
    }
    if (live) await put('live_deployments', { _id: appId, version: live['version'], deployment_id: live['_id'] });

    const draft = await readJsonFile<Document & { app: { _id: string }; files?: Base64Files }>(join(directory, 'draft.json'));
    if (draft) {
      const { app: _app, files, ...rest } = draft;
      await put('drafts', { ...rest, app_id: appId, ...(files ? { files: binaryFiles(files) } : {}) });
    }
    for (const secret of (await readJsonFile<Document[]>(join(directory, 'secrets.json'))) ?? []) await put('secrets', { ...secret, app_id: appId });
    const syncState = await readJsonFile<Document>(join(directory, 'sync-state.json'));
    if (syncState) await put('sync_states', { ...syncState, _id: appId });
    summary.logEntries += await importLogs(join(directory, 'logs.jsonl'), appId, put);
  }

  const movedTo = join(dataDir, 'platform-imported', new Date().toISOString().replace(/[:.]/g, '-'));
  // 0700: the moved files (secrets, keys) are readable only by Tessera's user, whatever modes they had.
  await mkdir(movedTo, { recursive: true, mode: 0o700 });
  for (const name of present) {
    try {
      await rename(join(root, name), join(movedTo, name));
    } catch (error) {
      // Another replica sharing this directory imported (by upsert, the same state) and moved it first.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return { movedTo, ...summary };
}

async function importLogs(path: string, appId: string, put: (collection: PlatformCollection, document: Document) => Promise<void>): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let count = 0;
  for (const line of text.split('\n')) {
    let entry: Document;
    try {
      entry = JSON.parse(line) as Document;
    } catch {
      continue; // an empty line, or a torn last line from a crash mid-append
    }
    await put('logs', logDocument(appId, entry));
    count++;
  }
  return count;
}

function binaryFiles(files: Base64Files): { path: string; data: Binary }[] {
  return Object.entries(files)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, base64]) => ({ path, data: new Binary(Buffer.from(base64, 'base64')) }));
}

/** The names in a directory, or undefined when it does not exist. */
async function entries(path: string): Promise<string[] | undefined> {
  try {
    return await readdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}
