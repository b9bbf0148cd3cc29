/**
 * The live sync connections of this process, by app and user, so that what happens elsewhere reaches them:
 * a deployment that terminates or re-enables sync, a user disabled or deleted.
 */
import { Injectable } from '@nestjs/common';
import { type SyncConnection } from '../sessions/sync-connection';

interface Live {
  userId: string;
  connection: SyncConnection;
}

@Injectable()
export class SyncConnections {
  private readonly byApp = new Map<string, Set<Live>>();

  /** Registers a connection; the returned function forgets it. */
  add(appId: string, userId: string, connection: SyncConnection): () => void {
    let live = this.byApp.get(appId);
    if (!live) {
      live = new Set();
      this.byApp.set(appId, live);
    }
    const entry = { userId, connection };
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
    const closing = [...(this.byApp.get(appId) ?? [])].filter((live) => live.userId === userId);
    for (const { connection } of closing) connection.shutDown();
    return closing.length;
  }

  count(appId: string): number {
    return this.byApp.get(appId)?.size ?? 0;
  }
}
