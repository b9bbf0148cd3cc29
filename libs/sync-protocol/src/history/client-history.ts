/**
 * The client side of a partition's history, as realm-core's client keeps it where convergence depends on
 * it: local changesets stay with the server version they were made on until the server has integrated
 * them; each downloaded changeset is transformed against the local changesets after its
 * `last_integrated_client_version` (whose transformed form, the reciprocal, is what later downloads meet);
 * the download cursor moves with each DOWNLOAD. Pure: the caller applies the instructions to its state and
 * does the transport.
 */
import { encodeChangeset, parseChangeset } from '../changeset/codec';
import type { Instruction } from '../changeset/types';
import { cloneInstructions, mergeChangesets, type TransformableChangeset } from '../merge/transform';
import type { DownloadChangeset, UploadChangeset } from '../wire/body';
import type { DownloadCursor } from './server-history';

export interface LocalChangeset {
  version: number;
  /** The server version the change was made on. */
  base: number;
  timestamp: number;
  original: Instruction[];
  /** The change as it stands after the server changesets integrated since. */
  reciprocal: (Instruction | null)[];
}

export class ClientHistory {
  /** The newest local version (realm files start at 1). */
  version = 1;
  cursor: DownloadCursor = { serverVersion: 0, clientVersion: 0 };
  private local: LocalChangeset[] = [];

  /** Records a local change made on the current download cursor. */
  commit(instructions: Instruction[], timestamp: number): LocalChangeset {
    this.version++;
    const change: LocalChangeset = { version: this.version, base: this.cursor.serverVersion, timestamp, original: instructions, reciprocal: cloneInstructions(instructions) };
    this.local.push(change);
    return change;
  }

  /** Local changes after `version` (the server acknowledged everything up to it), oldest first. */
  after(version: number): LocalChangeset[] {
    return this.local.filter((change) => change.version > version);
  }

  /** The UPLOAD entries of `changes`: the original changesets with the version each was based on. */
  static uploadChangesets(changes: readonly LocalChangeset[]): UploadChangeset[] {
    return changes.map((c) => ({ clientVersion: c.version, lastIntegratedServerVersion: c.base, originTimestamp: c.timestamp, originFileIdent: 0, changeset: encodeChangeset({ instructions: c.original }) }));
  }

  /**
   * Transforms the changesets of a DOWNLOAD against the local changes they did not see and moves the cursor;
   * answers the instructions to apply, in order. `ident` is this client's file ident.
   */
  integrate(ident: number, changesets: readonly DownloadChangeset[], cursor: DownloadCursor): (Instruction | null)[][] {
    const out: (Instruction | null)[][] = [];
    for (const c of changesets) {
      const incoming: TransformableChangeset = { originTimestamp: c.originTimestamp, originFileIdent: c.originFileIdent, instructions: parseChangeset(c.changeset).instructions };
      const ours = this.after(c.lastIntegratedClientVersion).map((l): TransformableChangeset => ({ originTimestamp: l.timestamp, originFileIdent: ident, instructions: l.reciprocal }));
      if (ours.length > 0) mergeChangesets(ours, [incoming]);
      out.push(incoming.instructions);
    }
    this.cursor = cursor;
    // Local changes the server integrated before everything still to come meet nothing any more.
    this.local = this.after(cursor.clientVersion);
    return out;
  }
}
