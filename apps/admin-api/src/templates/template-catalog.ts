import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { FileTemplateStore, TEMPLATE_APP_ID_PLACEHOLDER, TEMPLATE_BASE_URL_PLACEHOLDER, type DeployedFiles } from '@tessera/platform';
import type { Settings } from '@tessera/settings';

/**
 * Where the template apps are: `examples/templates` next to the example app directory the settings name
 * (the repository layout `npm start` and the container image use), else found from this module's place
 * in the repository. A dedicated setting would be cleaner; settings belong to another project.
 */
export function templatesDirectory(settings: Settings): string {
  const nextToExample = resolve(dirname(settings.exampleAppDir), 'templates');
  if (existsSync(nextToExample)) return nextToExample;
  return resolve(__dirname, '..', '..', '..', '..', 'examples', 'templates');
}

export function createTemplateStore(settings: Settings): FileTemplateStore {
  return new FileTemplateStore(templatesDirectory(settings));
}

const textual = /\.(js|jsx|ts|tsx|json|html|css|md|txt|mjs|cjs)$/;

/** The template's client with the new app's id and the server's URL written in. */
export function presetClient(files: DeployedFiles, appId: string, baseUrl: string): DeployedFiles {
  const out: DeployedFiles = new Map();
  for (const [path, bytes] of files) {
    if (!textual.test(path)) {
      out.set(path, bytes);
      continue;
    }
    const text = Buffer.from(bytes).toString('utf8').split(TEMPLATE_APP_ID_PLACEHOLDER).join(appId).split(TEMPLATE_BASE_URL_PLACEHOLDER).join(baseUrl);
    out.set(path, Buffer.from(text, 'utf8'));
  }
  return out;
}

