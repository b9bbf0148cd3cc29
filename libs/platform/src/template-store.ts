import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readDirectoryFiles as readAppDirectoryFiles } from '@tessera/app-config';
import type { DeployedFiles } from './deployment-store';
import { readJsonFile } from './json-file';

/** A template app (spec 2.12): `client` is the client framework, or `None`. */
export interface TemplateSummary {
  id: string;
  name: string;
  description: string;
  client: string;
}

export interface TemplateFiles {
  /** The backend: an app directory in the current layout. */
  backend: DeployedFiles;
  /** The client app, empty when `client` is `None`. Text files may hold the placeholders below. */
  client: DeployedFiles;
}

/** Replaced in client files by the new app's id and the server's base URL when a client is handed out. */
export const TEMPLATE_APP_ID_PLACEHOLDER = '__TESSERA_APP_ID__';
export const TEMPLATE_BASE_URL_PLACEHOLDER = '__TESSERA_BASE_URL__';

/**
 * Template apps shipped with the server: `<templatesDir>/<id>/template.json` ({id, name, description,
 * client}), `backend/` and, for templates with a client, `frontend/`.
 */
export class FileTemplateStore {
  constructor(private readonly templatesDir: string) {}

  async list(): Promise<TemplateSummary[]> {
    let names: string[];
    try {
      names = await readdir(this.templatesDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const templates: TemplateSummary[] = [];
    for (const name of names.sort()) {
      const meta = await readJsonFile<TemplateSummary>(join(this.templatesDir, name, 'template.json'));
      if (meta) templates.push({ id: meta.id, name: meta.name, description: meta.description, client: meta.client });
    }
    return templates;
  }

  async get(id: string): Promise<TemplateSummary | undefined> {
    return (await this.list()).find((template) => template.id === id);
  }

  async files(id: string): Promise<TemplateFiles | undefined> {
    const directory = (await readdir(this.templatesDir).catch(() => [] as string[])).find((name) => name === id) ?? (await this.directoryOf(id));
    if (!directory) return undefined;
    const root = join(this.templatesDir, directory);
    return { backend: await readDirectoryFiles(join(root, 'backend')), client: await readDirectoryFiles(join(root, 'frontend')) };
  }

  private async directoryOf(id: string): Promise<string | undefined> {
    for (const name of await readdir(this.templatesDir).catch(() => [] as string[])) {
      const meta = await readJsonFile<TemplateSummary>(join(this.templatesDir, name, 'template.json'));
      if (meta?.id === id) return name;
    }
    return undefined;
  }
}

/** Every file under `root` as relative POSIX path -> bytes, in path order; empty when `root` does not exist. */
export async function readDirectoryFiles(root: string): Promise<DeployedFiles> {
  let files: DeployedFiles;
  try {
    files = await readAppDirectoryFiles(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return new Map();
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
