/**
 * The data directory is Tessera's alone: created 0700, and directories an earlier release created
 * world-readable (0755) are tightened at boot. Files under it are created 0600 by whoever writes them (the
 * embedded datastore, the mail outbox). A directory this process may not chmod (a volume mounted with
 * another owner) is reported, not fatal.
 */
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const DATA_DIR_MODE = 0o700;

export function prepareDataDirectory(dataDir: string, warn: (message: string) => void): void {
  mkdirSync(dataDir, { recursive: true, mode: DATA_DIR_MODE });
  for (const dir of [dataDir, join(dataDir, 'clusters'), join(dataDir, 'platform'), join(dataDir, 'platform-imported')]) {
    if (!existsSync(dir) || (statSync(dir).mode & 0o077) === 0) continue;
    try {
      chmodSync(dir, DATA_DIR_MODE);
    } catch (error) {
      warn(`could not make ${dir} private to its owner (mode 0700): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
