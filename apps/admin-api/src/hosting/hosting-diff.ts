import { type HostedFileInput, type HostingStore } from '@tessera/platform';

/** The lines a push's diff gets for the hosted files it would change. */
export async function hostingDiffLines(store: HostingStore, appId: string, files: readonly HostedFileInput[]): Promise<string[]> {
  const diff = await store.diff(appId, files);
  return [...diff.added.map((path) => `+ added hosted file ${path}`), ...diff.modified.map((path) => `~ modified hosted file ${path}`), ...diff.deleted.map((path) => `- removed hosted file ${path}`)];
}
