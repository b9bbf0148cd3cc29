import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Document, idKey, openEmbeddedClient, type ResumeToken } from '@tessera/datastore';

const libRoot = resolve(__dirname, '../..');
const worker = join(libRoot, 'dist/crash/durability-worker.js');

interface Round {
  acked: string[];
  deleting: Set<string>;
  gone: string[];
}

/** Runs the worker until it is ready, kills it with SIGKILL at a random moment, returns what it reported. */
async function runAndKill(dir: string, round: number): Promise<Round> {
  const child: ChildProcess = spawn(process.execPath, [worker, dir, String(round)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const report: Round = { acked: [], deleting: new Set(), gone: [] };
  let partial = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolveKilled, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const [kind, id] = line.split(' ');
        if (kind === 'ready') setTimeout(() => child.kill('SIGKILL'), 30 + Math.random() * 220);
        else if (kind === 'ack') report.acked.push(id);
        else if (kind === 'del') report.deleting.add(id);
        else if (kind === 'gone') report.gone.push(id);
      }
    });
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolveKilled() : reject(new Error(`worker exited without being killed: ${stderr}`))));
  });
  return report;
}

describe('durability under SIGKILL', () => {
  beforeAll(() => {
    // The worker runs the compiled library in a separate node process.
    execFileSync(process.execPath, [join(libRoot, '../../node_modules/typescript/bin/tsc'), '-b', libRoot], { stdio: 'inherit' });
  }, 120_000);

  it('keeps every acknowledged write and resumes the change feed without gap or duplicate, over 20 kills', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-crash-'));
    // The collection as rebuilt from the change feed alone, across every restart.
    const replayed = new Map<string, Document>();
    const deleting = new Set<string>();
    let token: ResumeToken | undefined;
    let acks = 0;
    let events = 0;
    try {
      for (let round = 0; round < 20; round++) {
        const report = await runAndKill(dir, round);
        acks += report.acked.length + report.gone.length;
        for (const id of report.deleting) deleting.add(id);
        const client = openEmbeddedClient(dir);
        try {
          const coll = client.db('crash').collection('acks');
          const docs = await coll.find({}).toArray();
          const present = new Set(docs.map((d) => String(d._id)));
          const lost = report.acked.filter((id) => !present.has(id) && !deleting.has(id));
          expect(lost, `round ${round}: acknowledged inserts lost`).toEqual([]);
          const resurrected = report.gone.filter((id) => present.has(id));
          expect(resurrected, `round ${round}: acknowledged deletes undone`).toEqual([]);

          // The first round reads the feed from the start of the log (a token before the first record).
          const stream = coll.watch([], { resumeAfter: token ?? { _data: '0000000000000000ffffffff' }, fullDocument: 'whenAvailable' });
          for (let event = await stream.tryNext(); event; event = await stream.tryNext()) {
            expect(event._id._data > (token?._data ?? ''), `round ${round}: event out of order or repeated`).toBe(true);
            token = event._id;
            events++;
            const key = idKey(event.documentKey?._id);
            if (event.operationType === 'delete') replayed.delete(key);
            else replayed.set(key, event.fullDocument as Document);
          }
          await stream.close();
          expect(replayed.size, `round ${round}: the feed misses or repeats changes`).toBe(docs.length);
          for (const doc of docs) expect(replayed.get(idKey(doc._id))).toEqual(doc);
        } finally {
          await client.close();
        }
      }
      expect(acks).toBeGreaterThan(200);
      expect(events).toBeGreaterThan(acks);
      // The worker snapshots every 128 KB of log, so kills also landed around compactions.
      expect(readdirSync(dir).some((name) => name.endsWith('.snap'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
