import { Injectable } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { hostingSettings } from '@tessera/app-config';
import { HostingStore, type DeployedApp, type HostedAsset } from '@tessera/platform';
import { encodeResourcePath, hostedPath } from './hosted-path';
import { hostedReply, REDIRECT_ATTRIBUTE, type HostedFile } from './hosted-response';
import { HostingMetrics } from './hosting-metrics';

/** A complete HTTP answer of the hosting edge. */
export interface HostingAnswer {
  status: number;
  headers: Record<string, string>;
  body?: Buffer | string;
}

type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

const errorAnswer = (status: number, errorCode: string, error: string): HostingAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ error, error_code: errorCode }),
});

const toFile = (asset: HostedAsset): HostedFile => ({ hash: asset.hash, size: asset.size, lastModified: asset.last_modified, attrs: asset.attrs });

/**
 * Static hosting as App Services served it: the file at the request's resource path (a directory's
 * index.html), its attributes as headers, ETag and conditional requests, a single byte range; for a path
 * that names no file, the page `default_error_path` names with `default_response_code` (the custom 404
 * page, or the single-page app's root with 200), otherwise 404. Files come from HostingStore on every
 * request (no copy is kept here, so a change is served at once by every replica). Never a listing.
 */
@Injectable()
export class HostingService {
  constructor(
    private readonly store: HostingStore,
    private readonly metrics: HostingMetrics,
  ) {}

  /**
   * Answers a GET or HEAD for `rawPath` (percent-encoded, no query) of `app`; `mount` is the URL prefix the
   * site is served under ('/hosting/<client app id>', or '' on the app's own domain), for redirects.
   */
  async serve(app: DeployedApp, rawPath: string, query: string, mount: string, headers: RequestHeaders): Promise<HostingAnswer> {
    const answer = await this.answer(app, rawPath, query, mount, headers);
    this.metrics.requests.add(1, { 'http.response.status_code': answer.status });
    return answer;
  }

  private async answer(app: DeployedApp, rawPath: string, query: string, mount: string, headers: RequestHeaders): Promise<HostingAnswer> {
    const settings = hostingSettings(app.config.settings.hosting);
    if (!settings.enabled) return errorAnswer(404, 'HostingNotEnabled', 'static hosting is not enabled for this app');
    const parsed = hostedPath(rawPath);
    if (!parsed.ok) return errorAnswer(400, 'InvalidParameter', 'invalid resource path');
    const appId = app.record._id;
    trace.getActiveSpan()?.setAttributes({ 'tessera.app_id': appId, 'tessera.hosting.path': parsed.path });
    const target = parsed.directory ? `${parsed.path === '/' ? '' : parsed.path}/index.html` : parsed.path;
    const asset = await this.store.get(appId, target);
    if (asset) return this.file(appId, asset, 200, headers);
    // A directory named without its slash: send the browser to it, so its relative links resolve.
    if (!parsed.directory && (await this.store.get(appId, `${parsed.path}/index.html`))) {
      return { status: 301, headers: { location: `${mount}${encodeResourcePath(parsed.path)}/${query}` } };
    }
    if (settings.errorPath) {
      const page = await this.store.get(appId, settings.errorPath);
      if (page) return this.file(appId, page, settings.errorStatus, headers);
    }
    return errorAnswer(404, 'NotFound', `no hosted file at ${parsed.path}`);
  }

  private async file(appId: string, asset: HostedAsset, status: number, headers: RequestHeaders): Promise<HostingAnswer> {
    const redirect = asset.attrs.find((attr) => attr.name === REDIRECT_ATTRIBUTE)?.value;
    if (redirect) return { status: 301, headers: { location: redirect } };
    const reply = hostedReply(toFile(asset), status, headers);
    if (reply.failedPrecondition) return errorAnswer(412, 'PreconditionFailed', `the precondition of the request does not hold for ${asset.path}`);
    if (!reply.withBody) return { status: reply.status, headers: reply.headers };
    const read = await this.store.read(appId, asset.path);
    // Replaced between the two reads: answer with the file as it is now.
    if (!read) return errorAnswer(404, 'NotFound', `no hosted file at ${asset.path}`);
    const current = read.asset.hash === asset.hash ? reply : hostedReply(toFile(read.asset), status, headers);
    if (current.failedPrecondition) return errorAnswer(412, 'PreconditionFailed', `the precondition of the request does not hold for ${asset.path}`);
    if (!current.withBody) return { status: current.status, headers: current.headers };
    const bytes = Buffer.from(read.bytes.buffer, read.bytes.byteOffset, read.bytes.byteLength);
    return { status: current.status, headers: current.headers, body: current.range ? bytes.subarray(current.range.start, current.range.end + 1) : bytes };
  }
}
