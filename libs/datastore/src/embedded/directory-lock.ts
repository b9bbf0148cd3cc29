/**
 * One process per embedded data directory: an exclusive `LOCK` file naming its owner (pid, host, boot id,
 * pid namespace, process start), refreshed by the owner every few seconds. A restart must not be blocked
 * forever by a lock its owner can no longer release, so an existing lock is judged:
 * - owner on this machine and in this pid namespace: stale if the pid is gone, a zombie, or now another
 *   process (its start time differs); /proc says so for certain;
 * - owner elsewhere (another container or host, or this machine before a reboot): its pid means nothing
 *   here, so it is stale once it has not been refreshed for `staleAfterMs`.
 * A live owner is refused with who it is and how to clear the lock. Nothing here decides on a pid alone
 * across machines, and a stale lock is moved aside by rename, so two processes cannot both take it over.
 */
import { closeSync, fsyncSync, openSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DatastoreError } from '../api/datastore.error';
import { describeError, reportDatastore } from './embedded-reporting';
import { FILE_MODE } from './log-files';

export interface LockOwnerInfo {
  pid: number;
  host?: string;
  bootId?: string;
  pidNamespace?: string;
  /** Start of the process in clock ticks since boot (/proc/<pid>/stat field 22): tells a reused pid apart. */
  startTicks?: number;
  startedAt?: string;
  token?: string;
}

export interface DirectoryLockOptions {
  /** How often the owner refreshes the lock (ms). */
  heartbeatMs?: number;
  /** A lock whose owner is out of sight and has not refreshed it for this long is stale (ms). */
  staleAfterMs?: number;
}

/** Tokens of the locks this process holds: a lock carrying one is live, whatever its pid says. */
const held = new Set<string>();

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** State and start time of a process from /proc/<pid>/stat (undefined where there is no /proc or no such pid). */
function procStat(pid: number): { state: string; startTicks: number } | undefined {
  const stat = readOptional(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], startTicks: Number(fields[19]) };
}

/** When a process started (ms since the epoch), from its start in ticks after boot (Linux: 100 ticks a second). */
function processStartMs(startTicks: number): number | undefined {
  const btime = /^btime (\d+)$/m.exec(readOptional('/proc/stat') ?? '')?.[1];
  return btime === undefined ? undefined : Number(btime) * 1000 + startTicks * 10;
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Who this process is, as written into its lock. */
export function currentOwner(): LockOwnerInfo {
  return {
    pid: process.pid,
    host: hostname(),
    bootId: readOptional('/proc/sys/kernel/random/boot_id'),
    pidNamespace: pidNamespace(),
    startTicks: procStat(process.pid)?.startTicks,
    startedAt: new Date(Date.now() - Math.round(process.uptime() * 1000)).toISOString(),
    token: randomUUID(),
  };
}

/** A lock file's content: JSON, or a bare pid as releases before issue 14 wrote it. */
function parseOwner(text: string): LockOwnerInfo | undefined {
  if (/^\d+$/.test(text)) return { pid: Number(text) };
  try {
    const parsed = JSON.parse(text) as LockOwnerInfo;
    return typeof parsed.pid === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function describeOwner(owner: LockOwnerInfo | undefined): string {
  if (!owner) return 'an unreadable owner';
  const where = owner.host ? ` on host "${owner.host}"` : '';
  const started = owner.startedAt ? `, started ${owner.startedAt}` : '';
  return `process ${owner.pid}${where}${started}`;
}

/** Why a lock's owner can no longer hold it, or undefined while it may. */
function staleReason(owner: LockOwnerInfo | undefined, ageMs: number, me: LockOwnerInfo, staleAfterMs: number): string | undefined {
  const quiet = `it has not been refreshed for ${Math.round(ageMs / 1000)} s`;
  if (!owner) return ageMs > staleAfterMs ? `its content is unreadable and ${quiet}` : undefined;
  if (owner.token && held.has(owner.token)) return undefined;
  // Legacy locks name only a pid, written on this machine by the release that could not tell more.
  const local = owner.bootId === undefined && owner.pidNamespace === undefined ? owner.host === undefined || owner.host === me.host : owner.bootId === me.bootId && owner.pidNamespace === me.pidNamespace;
  if (!local) {
    const where = owner.bootId !== me.bootId && owner.host === me.host ? 'this machine before a restart' : 'another container or machine';
    return ageMs > staleAfterMs ? `its owner ran in ${where} and ${quiet}` : undefined;
  }
  if (owner.pid === process.pid) return 'it names this process, which does not hold it (an earlier run with the same pid)';
  if (!processAlive(owner.pid)) return `process ${owner.pid} no longer exists`;
  const stat = procStat(owner.pid);
  if (stat?.state === 'Z' || stat?.state === 'X') return `process ${owner.pid} is a zombie (exited, not yet reaped)`;
  if (stat && owner.startTicks !== undefined && stat.startTicks !== owner.startTicks) return `pid ${owner.pid} now belongs to another process`;
  // A lock without a start time (written by a release before issue 14, never refreshed): a process that
  // started after the lock was written did not write it.
  const started = stat && owner.startTicks === undefined ? processStartMs(stat.startTicks) : undefined;
  if (started !== undefined && started > Date.now() - ageMs + 2_000) return `pid ${owner.pid} belongs to a process started after the lock was written`;
  return undefined;
}

export class DirectoryLock {
  private timer?: NodeJS.Timeout;

  private constructor(
    readonly path: string,
    readonly owner: LockOwnerInfo,
  ) {}

  /** Takes the lock of `dir`, taking over a stale one; throws naming a live owner and how to clear it. */
  static acquire(dir: string, options: DirectoryLockOptions = {}): DirectoryLock {
    const heartbeatMs = options.heartbeatMs ?? 2_000;
    const staleAfterMs = options.staleAfterMs ?? 10_000;
    const path = join(dir, 'LOCK');
    const me = currentOwner();
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const fd = openSync(path, 'wx', FILE_MODE);
        try {
          writeSync(fd, JSON.stringify(me));
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        const lock = new DirectoryLock(path, me);
        held.add(me.token as string);
        lock.timer = setInterval(() => lock.refresh(), heartbeatMs);
        lock.timer.unref();
        return lock;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let text: string;
      let ageMs: number;
      try {
        text = readFileSync(path, 'utf8').trim();
        ageMs = Date.now() - statSync(path).mtimeMs;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const owner = parseOwner(text);
      const reason = staleReason(owner, ageMs, me, staleAfterMs);
      if (reason === undefined) {
        throw new DatastoreError(
          'IllegalOperation',
          `the data directory ${dir} is in use by ${describeOwner(owner)} (its lock ${path} was refreshed ${Math.round(ageMs / 1000)} s ago). ` +
            `Only one Tessera process may use a data directory. If that process is gone (a crashed container, another machine), stop it for sure, ` +
            `then delete ${path} and start again; a lock whose owner runs elsewhere is taken over by itself once it is ${Math.round(staleAfterMs / 1000)} s old.`,
        );
      }
      // Moved aside, not deleted: of two processes taking over at once only one rename finds the file, and
      // one that finds another lock than the one it judged puts it back.
      const aside = `${path}.stale-${me.token}`;
      try {
        renameSync(path, aside);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      if (readOptional(aside) !== text) {
        try {
          renameSync(aside, path);
        } catch {
          // Whoever took it meanwhile holds the directory now; the next attempt sees their lock.
        }
        continue;
      }
      unlinkSync(aside);
      reportDatastore('warn', `took over the lock of the data directory ${dir} from ${describeOwner(owner)}: ${reason}`);
    }
    throw new DatastoreError('IllegalOperation', `could not lock the data directory ${dir}: its LOCK file keeps changing (another process is starting on it)`);
  }

  /** The owner's heartbeat: a lock that stops being refreshed can be taken over from another machine. */
  private refresh(): void {
    try {
      const now = new Date();
      utimesSync(this.path, now, now);
      const owner = parseOwner(readFileSync(this.path, 'utf8').trim());
      if (owner?.token !== this.owner.token) reportDatastore('error', `the lock ${this.path} was taken over by ${describeOwner(owner)} while this process held it: two processes may now write the same data directory`);
    } catch (error) {
      reportDatastore('error', `refreshing the lock ${this.path} failed: ${describeError(error)}`);
    }
  }

  release(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    held.delete(this.owner.token as string);
    try {
      if (parseOwner(readFileSync(this.path, 'utf8').trim())?.token === this.owner.token) unlinkSync(this.path);
    } catch {
      // Already gone.
    }
  }
}
