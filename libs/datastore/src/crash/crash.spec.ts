import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type ResumeToken } from '../api/data-source';
import { openEmbeddedClient } from '../embedded/embedded-client';

const libRoot = resolve(__dirname, '../..');
const worker = join(libRoot, 'dist/crash/durability-worker.js');

/** Runs the worker until it has acknowledged some writes, kills it with SIGKILL at a random moment. */
async function runAndKill(dir: string, round: number): Promise<string[]> {
  const child: ChildProcess = spawn(process.execPath, [worker, dir, String(round)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acked: string[] = [];
  let partial = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolveExit) => child.on('exit', () => resolveExit()));
  await new Promise<void>((resolveReady, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line === 'ready') setTimeout(() => child.kill('SIGKILL'), 30 + Math.random() * 220);
        else if (line.startsWith('ack ')) acked.push(line.slice(4));
      }
    });
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolveReady() : reject(new Error(`worker exited without being killed: ${stderr}`))));
  });
  await exited;
  return acked;
}

describe('durability under SIGKILL', () => {
  beforeAll(() => {
    // The worker runs the compiled library in a separate node process.
    execFileSync(process.execPath, [join(libRoot, '../../node_modules/typescript/bin/tsc'), '-b', libRoot], { stdio: 'inherit' });
  }, 120_000);

  it('keeps every acknowledged write and resumes the change feed without gap or duplicate, over 20 kills', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-crash-'));
    const seen = new Set<string>();
    let token: ResumeToken | undefined;
    let totalAcked = 0;
    try {
      for (let round = 0; round < 20; round++) {
        const acked = await runAndKill(dir, round);
        totalAcked += acked.length;
        const client = openEmbeddedClient(dir);
        try {
          const coll = client.db('crash').collection('acks');
          const present = new Set((await coll.find({}, { _id: 1 }).toArray()).map((d) => String(d._id)));
          const lost = acked.filter((id) => !present.has(id));
          expect(lost, `round ${round}: acknowledged writes lost`).toEqual([]);

          // The first round reads the feed from the start of the log (a token before the first record).
          const events = coll.watch([], { resumeAfter: token ?? { _data: '0000000000000000ffffffff' } });
          const duplicates: string[] = [];
          for (let event = await events.tryNext(); event; event = await events.tryNext()) {
            expect(event.operationType).toBe('insert');
            const id = String(event.documentKey?._id);
            if (seen.has(id)) duplicates.push(id);
            seen.add(id);
            token = event._id;
          }
          await events.close();
          expect(duplicates, `round ${round}: events delivered twice`).toEqual([]);
          const missing = [...present].filter((id) => !seen.has(id));
          expect(missing, `round ${round}: documents without a change event`).toEqual([]);
          expect(seen.size).toBe(present.size);
        } finally {
          await client.close();
        }
      }
      expect(totalAcked).toBeGreaterThan(200);
      // The worker snapshots every 128 KB of log, so kills also landed around compactions.
      expect(readdirSync(dir).some((name) => name.endsWith('.snap'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
