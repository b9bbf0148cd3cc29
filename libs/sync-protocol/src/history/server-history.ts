/**
 * The server side of a partition's sync history, as realm-core's reference server keeps it: server
 * versions with salts, origin file idents, client versions and cumulative sizes; the client-file registry
 * with upload progress, reciprocal-history base and locked versions; integration of uploads through the
 * merge with per-client reciprocal transforms; download batching with `downloadable_bytes`; compaction.
 * Storage goes through `HistoryStorage`. Errors a client must hear about come back as results carrying a
 * protocol error code; only programming errors throw.
 */
import { randomBytes } from 'node:crypto';
import { encodeChangeset, parseChangeset } from '../changeset/codec';
import type { Changeset, Instruction } from '../changeset/types';
import { SyncProtocolError } from '../errors';
import { mergeChangesets, type TransformableChangeset } from '../merge/transform';
import type { DownloadChangeset, UploadChangeset } from '../wire/body';
import type { SendableErrorCode } from '../wire/error-codes';
import type { DownloadProgress, IdentProgress } from '../wire/frame';
import type { DownloadMessage } from '../wire/messages';
import { compactChangesets } from './compaction';
import type { ClientFileRecord, HistoryEntry, HistoryStorage } from './storage';

/** The reference server's own file ident; server-originated changes carry it. */
export const SERVER_FILE_IDENT = 1;
/** realm-core's default download batch limit. */
export const DEFAULT_MAX_DOWNLOAD_SIZE = 16 * 1024 * 1024;
/** History entries read from storage at a time while building a DOWNLOAD. */
const DOWNLOAD_READ_SLICE = 256;

export type HistoryResult<T> = ({ ok: true } & T) | { ok: false; code: SendableErrorCode; message: string };

/** What a client's IDENT says about its file: identity, salt and download progress. */
export type ClientIdent = Omit<IdentProgress, 'sessionIdent'>;

export interface UploadProgress {
  progressClientVersion: number;
  progressServerVersion: number;
  lockedServerVersion: number;
}

export interface DownloadCursor {
  serverVersion: number;
  clientVersion: number;
}

/** Everything a DOWNLOAD message needs besides the session ident. */
export interface DownloadBatch extends Omit<DownloadProgress, 'sessionIdent'> {
  downloadableBytes: number;
  changesets: DownloadChangeset[];
}

export interface ServerHistoryOptions {
  /** Draws salts (client files and new server versions): uniform in [1, 2^63 - 1] by default. */
  randomSalt?: () => bigint;
  /** The salt for versions this instance creates; drawn with `randomSalt` when absent. */
  versionSalt?: bigint;
}

function defaultSalt(): bigint {
  for (;;) {
    const v = randomBytes(8).readBigUInt64BE() >> 1n;
    if (v !== 0n) return v;
  }
}

function fail<T>(code: SendableErrorCode, message: string): HistoryResult<T> {
  return { ok: false, code, message };
}

interface CachedReciprocal {
  cs: TransformableChangeset;
  strings: string[];
}

/** Re-encodes a merged changeset the way realm-core's server does: every interned string first. */
function encodeMerged(instructions: readonly (Instruction | null)[], strings: readonly string[]): Uint8Array {
  const survivors = instructions.filter((i): i is Instruction => i !== null);
  if (survivors.length === 0) return new Uint8Array(0);
  const cs: Changeset = { instructions: survivors, layout: { strings: [...strings], before: strings.map(() => 0) } };
  return encodeChangeset(cs, { interning: 'front' });
}

export class ServerHistory {
  private readonly randomSalt: () => bigint;
  /** The salt stamped on versions this instance creates (a new one each time a partition is opened). */
  readonly saltForNewVersions: bigint;

  constructor(
    private readonly storage: HistoryStorage,
    readonly partition: string,
    options: ServerHistoryOptions = {},
  ) {
    this.randomSalt = options.randomSalt ?? defaultSalt;
    this.saltForNewVersions = options.versionSalt ?? this.randomSalt();
  }

  /** Registers a new client file (answer to BIND with need_client_file_ident=1). */
  async registerClientFile(): Promise<{ ident: number; salt: bigint }> {
    const ident = await this.storage.allocateClientFileIdent(this.partition);
    const salt = this.randomSalt();
    await this.storage.putClientFile(this.partition, {
      ident,
      salt,
      lastIntegratedClientVersion: 0,
      reciprocalBaseVersion: 0,
      lockedServerVersion: 0,
      downloadServerVersion: 0,
      uploadProgressServerVersion: 0,
      expired: false,
    });
    return { ident, salt };
  }

  async latestVersion(): Promise<number> {
    return (await this.storage.head(this.partition)).version;
  }

  private async saltOf(version: number): Promise<bigint> {
    if (version === 0) return 0n;
    const [entry] = await this.storage.readEntries(this.partition, version - 1, version);
    return entry?.salt ?? 0n;
  }

  /** Validates a client's IDENT as realm-core's `do_bootstrap_client_session` does. */
  async bootstrapClient(ident: ClientIdent): Promise<HistoryResult<{ client: ClientFileRecord }>> {
    const client = await this.storage.getClientFile(this.partition, ident.clientFileIdent);
    if (!client) return fail(208, `unknown client file ident ${ident.clientFileIdent}`);
    if (client.salt !== ident.clientFileIdentSalt) return fail(211, 'client file ident salt mismatch');
    if (client.expired) return fail(222, 'client file expired: the history was compacted past its position');
    const head = await this.storage.head(this.partition);
    if (ident.downloadServerVersion < client.reciprocalBaseVersion || ident.downloadServerVersion > head.version) {
      return fail(209, `bad download server version ${ident.downloadServerVersion}`);
    }
    if (ident.downloadClientVersion > client.lastIntegratedClientVersion) {
      return fail(210, `bad download client version ${ident.downloadClientVersion}`);
    }
    if (ident.latestServerVersion < ident.downloadServerVersion || ident.latestServerVersion > head.version) {
      return fail(209, `bad latest server version ${ident.latestServerVersion}`);
    }
    if ((await this.saltOf(ident.latestServerVersion)) !== ident.latestServerVersionSalt) {
      return fail(211, `salt mismatch for server version ${ident.latestServerVersion}`);
    }
    client.downloadServerVersion = Math.max(client.downloadServerVersion, ident.downloadServerVersion);
    await this.storage.putClientFile(this.partition, client);
    return { ok: true, client };
  }

  /**
   * Integrates an UPLOAD from client `ident`: skips changesets already integrated, transforms the rest
   * against the foreign history entries after their base (using and updating this client's reciprocal
   * transforms) and appends them as new server versions.
   */
  async integrateUpload(
    ident: number,
    changesets: readonly UploadChangeset[],
    progress: UploadProgress,
  ): Promise<HistoryResult<{ versions: number[]; client: ClientFileRecord }>> {
    const client = await this.storage.getClientFile(this.partition, ident);
    if (!client) return fail(208, `unknown client file ident ${ident}`);
    if (client.expired) return fail(222, 'client file expired');
    const head = await this.storage.head(this.partition);
    if (progress.lockedServerVersion > head.version || progress.progressServerVersion > head.version) {
      return fail(209, 'upload progress beyond the latest server version');
    }
    if (progress.progressClientVersion < client.lastIntegratedClientVersion || progress.progressServerVersion < client.reciprocalBaseVersion) {
      return fail(210, 'upload progress went backwards');
    }
    if (changesets.some((c) => c.clientVersion > client.lastIntegratedClientVersion)) await this.recoverProgress(client, head.version);
    const fresh: UploadChangeset[] = [];
    let lastClientVersion = client.lastIntegratedClientVersion;
    let lastBase = client.reciprocalBaseVersion;
    for (const c of changesets) {
      if (c.clientVersion <= client.lastIntegratedClientVersion) continue; // integrated in an earlier session
      if (c.clientVersion <= lastClientVersion) return fail(210, 'client versions must increase');
      if (c.lastIntegratedServerVersion < lastBase || c.lastIntegratedServerVersion > head.version) {
        return fail(209, `bad last integrated server version ${c.lastIntegratedServerVersion}`);
      }
      lastClientVersion = c.clientVersion;
      lastBase = c.lastIntegratedServerVersion;
      fresh.push(c);
    }

    const cache = new Map<number, CachedReciprocal>();
    const entries: HistoryEntry[] = [];
    let cumulative = head.cumulativeSize;
    try {
      for (let start = 0; start < fresh.length; ) {
        const base = fresh[start]?.lastIntegratedServerVersion ?? 0;
        let end = start;
        while (end < fresh.length && fresh[end]?.lastIntegratedServerVersion === base) end++;
        const group = fresh.slice(start, end);
        start = end;

        const parsed = group.map((c) => parseChangeset(c.changeset));
        const theirs = parsed.map(
          (p, i): TransformableChangeset => ({
            originTimestamp: group[i]?.originTimestamp ?? 0,
            originFileIdent: group[i]?.originFileIdent || ident,
            instructions: p.instructions,
          }),
        );
        const ours: TransformableChangeset[] = [];
        for (const e of await this.storage.readEntries(this.partition, base, head.version)) {
          if (e.originFileIdent === ident || e.changeset.length === 0) continue;
          let r = cache.get(e.version);
          if (!r) {
            const bytes = (await this.storage.getReciprocal(this.partition, ident, e.version)) ?? e.changeset;
            const p = parseChangeset(bytes);
            r = { cs: { originTimestamp: e.originTimestamp, originFileIdent: e.originFileIdent, instructions: p.instructions }, strings: p.layout?.strings ?? [] };
            cache.set(e.version, r);
          }
          ours.push(r.cs);
        }
        if (ours.length > 0) mergeChangesets(ours, theirs);
        theirs.forEach((t, i) => {
          const c = group[i];
          if (!c) return;
          const bytes = encodeMerged(t.instructions, parsed[i]?.layout?.strings ?? []);
          cumulative += bytes.length;
          entries.push({
            version: head.version + entries.length + 1,
            originFileIdent: c.originFileIdent || ident,
            clientVersion: c.clientVersion,
            originTimestamp: c.originTimestamp,
            salt: this.saltForNewVersions,
            changeset: bytes,
            originalSize: bytes.length,
            cumulativeSize: cumulative,
          });
        });
      }
    } catch (err) {
      if (err instanceof SyncProtocolError) return fail(212, `bad changeset: ${err.message}`);
      throw err;
    }

    if (entries.length > 0) await this.storage.appendEntries(this.partition, entries, head.version);
    for (const [version, r] of cache) {
      if (r.cs.dirty) await this.storage.putReciprocal(this.partition, ident, version, encodeMerged(r.cs.instructions, r.strings));
    }
    // The upload cursor in the header covers client versions with nothing to upload too.
    client.lastIntegratedClientVersion = Math.max(lastClientVersion, progress.progressClientVersion);
    client.reciprocalBaseVersion = Math.max(lastBase, progress.progressServerVersion);
    client.lockedServerVersion = Math.max(client.lockedServerVersion, progress.lockedServerVersion);
    client.uploadProgressServerVersion = Math.max(client.uploadProgressServerVersion, progress.progressServerVersion);
    await this.storage.trimReciprocals(this.partition, ident, client.reciprocalBaseVersion);
    await this.storage.putClientFile(this.partition, client);
    return { ok: true, versions: entries.map((e) => e.version), client };
  }

  /**
   * A process that stored an append of this client's changesets may have died before it recorded the
   * client's progress (two writes, no transaction): those changesets are in the history, and the client,
   * never acknowledged, uploads them again. They were appended after the client's recorded base, so that
   * part of the history says how far the client really is.
   */
  private async recoverProgress(client: ClientFileRecord, head: number): Promise<void> {
    for (const e of await this.storage.readEntries(this.partition, client.reciprocalBaseVersion, head)) {
      if (e.originFileIdent === client.ident && e.clientVersion > client.lastIntegratedClientVersion) client.lastIntegratedClientVersion = e.clientVersion;
    }
  }

  /** Appends a change made on the server itself (it is based on the latest version, so needs no merge). */
  async appendServerChangeset(instructions: readonly Instruction[], originTimestamp: number): Promise<number> {
    const head = await this.storage.head(this.partition);
    const bytes = encodeChangeset({ instructions: [...instructions] }, { interning: 'front' });
    const version = head.version + 1;
    await this.storage.appendEntries(
      this.partition,
      [
        {
          version,
          originFileIdent: SERVER_FILE_IDENT,
          clientVersion: 0,
          originTimestamp,
          salt: this.saltForNewVersions,
          changeset: bytes,
          originalSize: bytes.length,
          cumulativeSize: head.cumulativeSize + bytes.length,
        },
      ],
      head.version,
    );
    return version;
  }

  /**
   * The next DOWNLOAD for client `ident` from `cursor`: foreign, non-empty changesets in order, cut once
   * `maxBytes` of changesets have been collected; the client's own changesets only move the cursor.
   */
  async download(ident: number, cursor: DownloadCursor, maxBytes: number = DEFAULT_MAX_DOWNLOAD_SIZE): Promise<DownloadBatch> {
    const client = await this.storage.getClientFile(this.partition, ident);
    if (!client) throw new SyncProtocolError('bad_history', `unknown client file ident ${ident}`);
    const head = await this.storage.head(this.partition);
    let lastIntegratedClientVersion = cursor.clientVersion;
    let scanned = cursor.serverVersion;
    let scannedCumulative = -1;
    let size = 0;
    const changesets: DownloadChangeset[] = [];
    // Read the history in slices so that a batch never loads more than it sends.
    for (let from = cursor.serverVersion; from < head.version && size < maxBytes; from += DOWNLOAD_READ_SLICE) {
      const entries = await this.storage.readEntries(this.partition, from, Math.min(head.version, from + DOWNLOAD_READ_SLICE));
      for (const e of entries) {
        if (size >= maxBytes) break;
        scanned = e.version;
        scannedCumulative = e.cumulativeSize;
        if (e.originFileIdent === ident) {
          lastIntegratedClientVersion = e.clientVersion;
          continue;
        }
        if (e.changeset.length === 0) continue;
        changesets.push({
          serverVersion: e.version,
          lastIntegratedClientVersion,
          originTimestamp: e.originTimestamp,
          originFileIdent: e.originFileIdent,
          originalChangesetSize: e.originalSize,
          changeset: e.changeset,
        });
        size += e.changeset.length;
      }
    }
    if (scannedCumulative < 0) {
      const [at] = cursor.serverVersion > 0 ? await this.storage.readEntries(this.partition, cursor.serverVersion - 1, cursor.serverVersion) : [];
      scannedCumulative = at?.cumulativeSize ?? 0;
    }
    const latestSalt = head.salt ?? (await this.saltOf(head.version));
    return {
      downloadServerVersion: scanned,
      downloadClientVersion: lastIntegratedClientVersion,
      latestServerVersion: head.version,
      latestServerVersionSalt: latestSalt,
      uploadClientVersion: client.lastIntegratedClientVersion,
      uploadServerVersion: client.reciprocalBaseVersion,
      // Never negative: a replica compacting this history meanwhile may have shrunk the head's size first.
      downloadableBytes: Math.max(0, head.cumulativeSize - scannedCumulative),
      changesets,
    };
  }

  /** Records download progress a client reported (IDENT or UPLOAD header). */
  async noteDownloadProgress(ident: number, serverVersion: number): Promise<void> {
    const client = await this.storage.getClientFile(this.partition, ident);
    if (!client || client.downloadServerVersion >= serverVersion) return;
    client.downloadServerVersion = serverVersion;
    await this.storage.putClientFile(this.partition, client);
  }

  /** The highest version every live client has moved past: compacting up to it expires nobody. */
  async safeCompactionHorizon(): Promise<number> {
    const head = await this.storage.head(this.partition);
    let horizon = head.version;
    for (const c of await this.storage.listClientFiles(this.partition)) {
      if (!c.expired) horizon = Math.min(horizon, clientPosition(c));
    }
    return horizon;
  }

  /**
   * Compacts versions 1..`untilVersion`. Clients whose position is behind it are expired (their next
   * IDENT gets 222 client_file_expired and they reset), because their unsynced changes would be merged
   * against instructions that no longer exist.
   */
  async compact(untilVersion: number): Promise<{ removedInstructions: number; rewrittenVersions: number[]; expiredClients: number[] }> {
    const head = await this.storage.head(this.partition);
    const until = Math.min(untilVersion, head.version);
    const entries = await this.storage.readEntries(this.partition, 0, until);
    const parsed = entries.map((e) => parseChangeset(e.changeset).instructions);
    const result = compactChangesets(parsed);
    const changed = new Set(result.changed);
    const rewritten: HistoryEntry[] = [];
    let cumulative = 0;
    entries.forEach((e, i) => {
      const bytes = changed.has(i) ? encodeChangeset({ instructions: result.changesets[i] ?? [] }, { interning: 'front' }) : e.changeset;
      cumulative += bytes.length;
      if (changed.has(i) || cumulative !== e.cumulativeSize) rewritten.push({ ...e, changeset: bytes, cumulativeSize: cumulative });
    });
    // Cumulative sizes after the compacted range shift by what was saved.
    const delta = (entries[entries.length - 1]?.cumulativeSize ?? 0) - cumulative;
    if (delta !== 0) {
      for (const e of await this.storage.readEntries(this.partition, until, head.version)) rewritten.push({ ...e, cumulativeSize: e.cumulativeSize - delta });
    }
    await this.storage.rewriteEntries(this.partition, rewritten, until);
    const expired: number[] = [];
    for (const c of await this.storage.listClientFiles(this.partition)) {
      if (!c.expired && clientPosition(c) < until) {
        c.expired = true;
        expired.push(c.ident);
        await this.storage.putClientFile(this.partition, c);
      }
    }
    return { removedInstructions: result.removedInstructions, rewrittenVersions: result.changed.map((i) => entries[i]?.version ?? 0), expiredClients: expired };
  }
}

/** The DOWNLOAD message for a batch (compression is decided when it is encoded). */
export function downloadMessage(sessionIdent: number, batch: DownloadBatch): DownloadMessage {
  return { type: 'download', sessionIdent, ...batch };
}

/** How far a client is known to be: nothing before this can still meet its unsynced changes. */
function clientPosition(c: ClientFileRecord): number {
  return Math.min(c.downloadServerVersion, c.uploadProgressServerVersion, c.lockedServerVersion);
}


