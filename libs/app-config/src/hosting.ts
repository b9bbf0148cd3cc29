// Static hosting (spec 2.10) as App Services defined it: the settings in config.json's `hosting` (or
// hosting/config.json of an export), the metadata attributes a hosted file may carry, the limits App
// Services enforced, and the file set <-> directory conversion. Pure: no store, no HTTP.

import { stringifyJson, textToBytes } from './json';
import { type AppFiles, type Hosting, type HostingAttribute, type HostingFileMetadata } from './model';
import { contentTypeFor } from './normalize';

export const HOSTING_METADATA_PATH = 'hosting/metadata.json';
export const HOSTING_FILES_DIR = 'hosting/files/';

/** The file metadata attributes App Services supported; each maps to the response header of the same name. */
export const HOSTING_ATTRIBUTE_NAMES = ['Content-Type', 'Content-Disposition', 'Content-Encoding', 'Content-Language', 'Cache-Control', 'Website-Redirect-Location'] as const;

/** App Services' static hosting constraints (per app). */
export const HOSTING_LIMITS = {
  fileBytes: 25 * 1024 * 1024,
  totalBytes: 1024 * 1024 * 1024,
  files: 20_000,
} as const;

/** The hosting settings of an app, with App Services' defaults applied. */
export interface HostingSettings {
  enabled: boolean;
  customDomain?: string;
  appDefaultDomain?: string;
  /** Served, with `errorStatus`, for a path that names no file: the custom 404 page, or the SPA root with 200. */
  errorPath?: string;
  errorStatus: number;
}

/** The canonical attribute name (`cache-control` -> `Cache-Control`), or undefined when App Services had no such attribute. */
export function hostingAttributeName(name: string): string | undefined {
  return HOSTING_ATTRIBUTE_NAMES.find((known) => known.toLowerCase() === name.toLowerCase());
}

/** A file's attributes with Content-Type added from the extension when absent, as App Services added it on upload. */
export function hostedFileAttributes(path: string, attrs: readonly HostingAttribute[]): HostingAttribute[] {
  const out = attrs.map((a) => ({ name: hostingAttributeName(a.name) ?? a.name, value: a.value }));
  if (!out.some((a) => a.name === 'Content-Type')) out.push({ name: 'Content-Type', value: contentTypeFor(path) });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The status code a `default_response_code` (number or numeric string) stands for, or undefined when it is not one. */
export function hostingResponseCode(value: unknown): number | undefined {
  const code = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof code === 'number' && Number.isInteger(code) && code >= 200 && code <= 599 ? code : undefined;
}

/** The settings an app's `hosting` object stands for (`default_error_code` is the admin API's name of `default_response_code`). */
export function hostingSettings(hosting: unknown): HostingSettings {
  const h = (typeof hosting === 'object' && hosting !== null ? hosting : {}) as Record<string, unknown>;
  const domain = (v: unknown) => (typeof v === 'string' && v !== '' ? v.toLowerCase() : undefined);
  const errorPath = typeof h['default_error_path'] === 'string' && h['default_error_path'].startsWith('/') ? h['default_error_path'] : undefined;
  const customDomain = domain(h['custom_domain']);
  const appDefaultDomain = domain(h['app_default_domain']);
  return {
    enabled: h['enabled'] === true,
    ...(customDomain ? { customDomain } : {}),
    ...(appDefaultDomain ? { appDefaultDomain } : {}),
    ...(errorPath ? { errorPath } : {}),
    errorStatus: hostingResponseCode(h['default_response_code'] ?? h['default_error_code']) ?? 404,
  };
}

/** Whether a directory path belongs to the hosted content (the files and their metadata), not the configuration. */
export function isHostingContentPath(path: string): boolean {
  return path === HOSTING_METADATA_PATH || path.startsWith(HOSTING_FILES_DIR);
}

/** The directory form of a hosted file set: hosting/metadata.json (sorted by path) and hosting/files/<path>. */
export function hostingDirectoryFiles(files: ReadonlyArray<{ path: string; attrs: readonly HostingAttribute[]; bytes: Uint8Array }>): AppFiles {
  const out: AppFiles = new Map();
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const metadata: HostingFileMetadata[] = sorted.map((f) => ({ path: f.path, attrs: [...f.attrs] }));
  out.set(HOSTING_METADATA_PATH, textToBytes(stringifyJson(metadata)));
  for (const f of sorted) out.set(`${HOSTING_FILES_DIR}${f.path.replace(/^\/+/, '')}`, f.bytes);
  return out;
}

/** The files of a parsed hosting section with their complete attributes (Content-Type added where missing). */
export function hostedFiles(hosting: Hosting): Array<{ path: string; attrs: HostingAttribute[]; bytes: Uint8Array }> {
  const attrsOf = new Map<string, HostingAttribute[]>();
  for (const item of hosting.metadata) if (typeof item.path === 'string' && Array.isArray(item.attrs)) attrsOf.set(item.path, item.attrs.filter((attr) => !isEmptyAttribute(attr)));
  return [...hosting.files].map(([path, bytes]) => ({ path, bytes, attrs: hostedFileAttributes(path, attrsOf.get(path) ?? []) }));
}

/** `{}` in a file's `attrs`: App Services' deployments wrote it for a file whose attributes were all removed; it sets nothing. */
export function isEmptyAttribute(attr: unknown): boolean {
  return typeof attr === 'object' && attr !== null && !Array.isArray(attr) && Object.keys(attr).length === 0;
}
