/**
 * The live sync connections of this process, by app and user, so that what happens elsewhere reaches them:
 * a deployment that terminates or re-enables sync, a user disabled or deleted, an app deleted; and so that
 * operations can list them.
 */
import { Injectable } from '@nestjs/common';
import { type SyncConnection } from '../sessions/sync-connection';

/** What the registry needs of a connection of either mode (partition or flexible). */
export type RegisteredConnection = Pick<SyncConnection, 'syncChanged' | 'shutDown' | 'boundPaths'>;

interface Live {
  userId: string;
  connection: RegisteredConnection;
  connectedAt: Date;
}

/** One connection as operations see it. */
export interface LiveConnection {
  userId: string;
  /** The partitions of its live sessions, as the client wrote them. */
  partitions: string[];
  connectedAt: Date;
}

@Injectable()
export class SyncConnections {
  private readonly byApp = new Map<string, Set<Live>>();

  /** Registers a connection; the returned function forgets it. */
  add(appId: string, userId: string, connection: RegisteredConnection, connectedAt = new Date()): () => void {
    let live = this.byApp.get(appId);
    if (!live) {
      live = new Set();
      this.byApp.set(appId, live);
    }
    const entry = { userId, connection, connectedAt };
    live.add(entry);
    return () => {
      live.delete(entry);
      if (live.size === 0 && this.byApp.get(appId) === live) this.byApp.delete(appId);
    };
  }

  /** The app's sync configuration may have changed: every connection checks its sessions. */
  syncChanged(appId: string): void {
    for (const { connection } of this.byApp.get(appId) ?? []) connection.syncChanged();
  }

  /** Closes the user's connections; returns how many there were. */
  closeUser(appId: string, userId: string): number {
    return this.closeWhere(appId, (live) => live.userId === userId);
  }

  /** Closes every connection of the app (it was deleted); returns how many there were. */
  closeApp(appId: string): number {
    return this.closeWhere(appId, () => true);
  }

  private closeWhere(appId: string, selected: (live: Live) => boolean): number {
    const closing = [...(this.byApp.get(appId) ?? [])].filter(selected);
    for (const { connection } of closing) connection.shutDown();
    return closing.length;
  }

  count(appId: string): number {
    return this.byApp.get(appId)?.size ?? 0;
  }

  /** The apps with connections here. */
  appIds(): string[] {
    return [...this.byApp.keys()];
  }

  /** The app's connections here, oldest first, at most `limit`. */
  list(appId: string, limit: number): LiveConnection[] {
    return [...(this.byApp.get(appId) ?? [])]
      .sort((a, b) => a.connectedAt.getTime() - b.connectedAt.getTime())
      .slice(0, limit)
      .map((live) => ({ userId: live.userId, partitions: live.connection.boundPaths, connectedAt: live.connectedAt }));
  }
}
