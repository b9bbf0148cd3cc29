import { Injectable } from '@nestjs/common';
import { HOSTING_LIMITS, hostedFileAttributes, hostingAttributeName, hostingDirectoryFiles, hostingSettings, isSafeRelativePath, type AppFiles } from '@tessera/app-config';
import { HostingStore, md5, type AppRecord, type HostedAsset, type HostedAttribute, type HostedFileInput } from '@tessera/platform';
import { AppStateService } from '../deploy/app-state.service';
import { HostingError, HostingErrorCode } from './hosting.exception';

/** A hosted asset as the admin API lists it (realm-cli's `HostingAsset`). */
export interface HostedAssetBody {
  appId: string;
  path: string;
  hash: string;
  size: number;
  last_modified: number;
  attrs: HostedAttribute[];
  url: string;
}

/** A resource path: '/' then plain segments (no '.', '..', empty segment, backslash or control character). */
export function checkResourcePath(path: unknown, what = 'path'): string {
  if (typeof path !== 'string' || !path.startsWith('/') || path.length > 1024 || !isSafeRelativePath(path.slice(1))) {
    throw new HostingError(HostingErrorCode.InvalidParameter, `${what} must be a resource path such as /index.html (no "." or ".." segments, no backslashes)`);
  }
  return path;
}

/** Attributes from a request body: App Services' file metadata attributes only, Content-Type completed from the extension. */
export function checkAttributes(path: string, attrs: unknown): HostedAttribute[] {
  if (attrs === undefined || attrs === null) return hostedFileAttributes(path, []);
  if (!Array.isArray(attrs)) throw new HostingError(HostingErrorCode.InvalidParameter, 'attrs must be an array of {name, value}');
  const checked = attrs.map((attr: unknown) => {
    const a = attr as { name?: unknown; value?: unknown } | null;
    if (typeof a?.name !== 'string' || typeof a.value !== 'string') throw new HostingError(HostingErrorCode.InvalidParameter, 'each attribute needs name and value strings');
    if (!hostingAttributeName(a.name)) throw new HostingError(HostingErrorCode.InvalidParameter, `"${a.name}" is not a file metadata attribute`);
    if (/[\r\n\0]/.test(a.value)) throw new HostingError(HostingErrorCode.InvalidParameter, `the value of ${a.name} may not contain line breaks`);
    return { name: a.name, value: a.value };
  });
  return hostedFileAttributes(path, checked);
}

/**
 * The hosting asset endpoints' work (list, upload, attributes, move, copy, delete) and the hosted files'
 * part of pull, export and push: the files live in HostingStore, apart from the app's configuration.
 */
@Injectable()
export class HostingAssetsService {
  constructor(
    private readonly store: HostingStore,
    private readonly state: AppStateService,
  ) {}

  async list(record: AppRecord, baseUrl: string, prefix: string, recursive: boolean): Promise<HostedAssetBody[]> {
    const dir = prefix.endsWith('/') ? prefix : `${prefix}/`;
    const assets = await this.store.list(record._id, dir);
    return assets.filter((asset) => recursive || !asset.path.slice(dir.length).includes('/')).map((asset) => toBody(record, asset, baseUrl));
  }

  async get(record: AppRecord, baseUrl: string, path: string): Promise<HostedAssetBody> {
    return toBody(record, await this.require(record, path), baseUrl);
  }

  /** Under the app's lock, as deployments are: a push replacing the hosted files and an upload apply one after the other. */
  upload(record: AppRecord, path: string, bytes: Uint8Array, attrs: HostedAttribute[], hash: string | undefined): Promise<void> {
    return this.state.exclusive(record._id, () => this.uploadNow(record, path, bytes, attrs, hash));
  }

  private async uploadNow(record: AppRecord, path: string, bytes: Uint8Array, attrs: HostedAttribute[], hash: string | undefined): Promise<void> {
    if (bytes.length > HOSTING_LIMITS.fileBytes) throw new HostingError(HostingErrorCode.RequestTooLarge, `a hosted file may be at most ${HOSTING_LIMITS.fileBytes} bytes; this one is ${bytes.length}`);
    if (hash && hash !== md5(bytes)) throw new HostingError(HostingErrorCode.InvalidParameter, `the file's MD5 is ${md5(bytes)}, not the hash given (${hash})`);
    const others = (await this.store.list(record._id)).filter((asset) => asset.path !== path);
    if (others.length + 1 > HOSTING_LIMITS.files) throw new HostingError(HostingErrorCode.HostingLimitExceeded, `an app may host at most ${HOSTING_LIMITS.files} files`);
    const total = others.reduce((sum, asset) => sum + asset.size, 0) + bytes.length;
    if (total > HOSTING_LIMITS.totalBytes) throw new HostingError(HostingErrorCode.HostingLimitExceeded, `an app may host at most ${HOSTING_LIMITS.totalBytes} bytes; this upload would make ${total}`);
    await this.store.put(record._id, { path, bytes, attrs });
  }

  setAttributes(record: AppRecord, path: string, attrs: HostedAttribute[]): Promise<void> {
    return this.state.exclusive(record._id, async () => {
      if (!(await this.store.setAttributes(record._id, path, attrs))) throw notFound(path);
    });
  }

  remove(record: AppRecord, path: string): Promise<void> {
    return this.state.exclusive(record._id, async () => {
      if (!(await this.store.remove(record._id, path))) throw notFound(path);
    });
  }

  moveOrCopy(record: AppRecord, from: string, to: string, move: boolean): Promise<void> {
    return this.state.exclusive(record._id, () => this.moveOrCopyNow(record, from, to, move));
  }

  private async moveOrCopyNow(record: AppRecord, from: string, to: string, move: boolean): Promise<void> {
    const source = await this.require(record, from);
    if (from === to) return;
    const others = (await this.store.list(record._id)).filter((asset) => asset.path !== to);
    if (!move && others.reduce((sum, asset) => sum + asset.size, 0) + source.size > HOSTING_LIMITS.totalBytes) throw new HostingError(HostingErrorCode.HostingLimitExceeded, `an app may host at most ${HOSTING_LIMITS.totalBytes} bytes`);
    if (!move && others.length + 1 > HOSTING_LIMITS.files) throw new HostingError(HostingErrorCode.HostingLimitExceeded, `an app may host at most ${HOSTING_LIMITS.files} files`);
    await this.store.copy(record._id, from, to);
    if (move) await this.store.remove(record._id, from);
  }

  /** `GET .../hosting/config`: enabled, and the default domain (App Services called its state `setup_ok` once ready). */
  async config(record: AppRecord): Promise<object> {
    const settings = hostingSettings((await this.state.liveApp(record)).settings.hosting);
    return { enabled: settings.enabled, status: 'setup_ok', default_domain: { provider_type: 'tessera', config: { app_default_domain: settings.appDefaultDomain ?? '' } } };
  }

  /** `PATCH .../hosting/config`: turns hosting on or off (a deployment of the app's settings). */
  async setEnabled(record: AppRecord, userId: string | undefined, enabled: boolean): Promise<void> {
    await this.state.edit(record, userId, (app) => {
      app.settings.hosting = { ...(app.settings.hosting ?? {}), enabled };
    });
  }

  /** The app's hosted files as hosting/metadata.json and hosting/files/<path>, for pull and export. */
  async directoryFiles(record: AppRecord): Promise<AppFiles> {
    const files: HostedFileInput[] = [];
    for (const asset of await this.store.list(record._id)) {
      const read = await this.store.read(record._id, asset.path);
      if (read) files.push({ path: asset.path, attrs: read.asset.attrs, bytes: read.bytes });
    }
    return files.length ? hostingDirectoryFiles(files) : new Map();
  }

  private async require(record: AppRecord, path: string): Promise<HostedAsset> {
    const asset = await this.store.get(record._id, path);
    if (!asset) throw notFound(path);
    return asset;
  }
}

function notFound(path: string): HostingError {
  return new HostingError(HostingErrorCode.AssetNotFound, `hosted asset not found: '${path}'`);
}

function toBody(record: AppRecord, asset: HostedAsset, baseUrl: string): HostedAssetBody {
  return {
    appId: record._id,
    path: asset.path,
    hash: asset.hash,
    size: asset.size,
    last_modified: asset.last_modified,
    attrs: asset.attrs,
    url: `${baseUrl}/hosting/${record.client_app_id}${asset.path.split('/').map(encodeURIComponent).join('/')}`,
  };
}
