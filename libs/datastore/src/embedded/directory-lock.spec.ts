import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, makeTempDir } from '@tessera/testing';
import { currentOwner, DirectoryLock, type LockOwnerInfo } from './directory-lock';
import { openEmbeddedClient } from './embedded-client';
import { configureEmbeddedDatastore } from './embedded-reporting';

// Issue 14, item 4: a LOCK whose owner was a zombie or a process of another container blocked restarts
// forever, with a message that did not say who held it or how to clear it.
describe('the data directory lock', () => {
  const lines: string[] = [];
  let dir: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    lines.length = 0;
    configureEmbeddedDatastore({ log: (level, message) => lines.push(`${level}: ${message}`) });
    dir = makeTempDir('tessera-lock-');
  });
  afterEach(() => {
    configureEmbeddedDatastore({});
    dir.remove();
  });

  const lockPath = () => join(dir.path, 'LOCK');
  const writeLock = (owner: LockOwnerInfo, ageSeconds = 0) => {
    writeFileSync(lockPath(), JSON.stringify(owner));
    const when = new Date(Date.now() - ageSeconds * 1000);
    utimesSync(lockPath(), when, when);
  };
  /** The parent of this test process: alive, on this machine, in this pid namespace. */
  const parent = (): LockOwnerInfo => {
    const stat = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
    return { ...currentOwner(), pid: process.ppid, startTicks: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]), startedAt: '2026-01-01T00:00:00.000Z', token: 'parent' };
  };

  it('writes who holds it, 0600, refreshes it, and removes it on close', async () => {
    const client = openEmbeddedClient(dir.path, { lock: { heartbeatMs: 50 } });
    const owner = JSON.parse(readFileSync(lockPath(), 'utf8')) as LockOwnerInfo;
    expect(owner).toMatchObject({ pid: process.pid, host: expect.any(String), startedAt: expect.any(String), bootId: expect.any(String), pidNamespace: expect.stringMatching(/^pid:/) });
    expect(statSync(lockPath()).mode & 0o777).toBe(0o600);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath(), old, old);
    await eventually(() => expect(Date.now() - statSync(lockPath()).mtimeMs).toBeLessThan(30_000));
    await client.close();
    expect(existsSync(lockPath())).toBe(false);
  });

  it('refuses a live owner on this machine, saying who it is and how to clear the lock', () => {
    writeLock(parent());
    expect(() => openEmbeddedClient(dir.path)).toThrow(
      new RegExp(`in use by process ${process.ppid} on host ".+", started 2026-01-01T00:00:00.000Z .*delete ${lockPath().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} and start again`),
    );
    expect(JSON.parse(readFileSync(lockPath(), 'utf8'))).toMatchObject({ token: 'parent' });
  });

  it('takes over from a dead process and from a pid reused by another process', async () => {
    writeLock({ ...parent(), pid: 2147483646 });
    let client = openEmbeddedClient(dir.path);
    await client.close();
    expect(lines).toContainEqual(expect.stringMatching(/took over the lock .* from process 2147483646 .*: process 2147483646 no longer exists/));
    writeLock({ ...parent(), startTicks: 1 });
    client = openEmbeddedClient(dir.path);
    await client.close();
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`pid ${process.ppid} now belongs to another process`)));
  });

  it('takes over a lock of an earlier release (a bare pid) whose pid now belongs to a younger process', async () => {
    writeFileSync(lockPath(), String(process.ppid));
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lockPath(), hourAgo, hourAgo);
    const client = openEmbeddedClient(dir.path);
    await client.close();
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`from process ${process.ppid}: pid ${process.ppid} belongs to a process started after the lock was written`)));
  });

  it('takes over from a zombie', async () => {
    // `sleep 60` inherits a child it never reaps: once that child exits it stays a zombie.
    const shell = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = Number(await new Promise<string>((resolve) => shell.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()))));
      await eventually(() => expect(readFileSync(`/proc/${zombie}/stat`, 'utf8')).toMatch(/\) Z /));
      const stat = readFileSync(`/proc/${zombie}/stat`, 'utf8');
      writeLock({ ...currentOwner(), pid: zombie, startTicks: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]), token: 'zombie' });
      const client = openEmbeddedClient(dir.path);
      await client.close();
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`process ${zombie} is a zombie`)));
    } finally {
      shell.kill('SIGKILL');
    }
  });

  it('waits out a fresh lock of another container, and takes it over once its owner stopped refreshing it', async () => {
    // Another container: its pid (here one that is alive in ours) means nothing in this pid namespace.
    const foreign = { ...parent(), host: 'tessera-7d9f-old', pidNamespace: 'pid:[4026532999]', token: 'foreign' };
    writeLock(foreign, 1);
    expect(() => openEmbeddedClient(dir.path, { lock: { staleAfterMs: 10_000 } })).toThrow(/in use by process \d+ on host "tessera-7d9f-old".*taken over by itself once it is 10 s old/);
    writeLock(foreign, 30);
    const client = openEmbeddedClient(dir.path, { lock: { staleAfterMs: 10_000 } });
    await client.db('app').collection('c').insertOne({ _id: 1 });
    await client.close();
    expect(lines).toContainEqual(expect.stringMatching(/from process \d+ on host "tessera-7d9f-old".*: its owner ran in another container or machine and it has not been refreshed for 30 s/));
    expect(readdirSync(dir.path).filter((name) => name.startsWith('LOCK'))).toEqual([]);
  });

  it('refuses a second holder once the stale lock was taken over', () => {
    writeLock({ ...parent(), pid: 2147483646 });
    const first = DirectoryLock.acquire(dir.path);
    expect(() => DirectoryLock.acquire(dir.path)).toThrow(/in use by process/);
    first.release();
  });
});
