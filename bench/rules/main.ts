/**
 * Rules benchmark: `find` of 1,000 documents as a user under a three-role configuration, beside the same
 * `find` as system, through the same data-access API over the embedded datastore, in one run.
 * Target: the user path keeps at least 70% of the system path's throughput.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyApp } from '@tessera/app-config';
import { DataAccess, type DataAccessCaller } from '@tessera/data-access';
import { DataSources } from '@tessera/platform';
import { loadSettings } from '@tessera/settings';

const DOCS = 1_000;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 200);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-bench-rules-'));
  const dataSources = new DataSources(loadSettings({ TESSERA_DATA_DIR: dataDir }));
  const dataAccess = new DataAccess(dataSources);
  const config = emptyApp('bench');
  config.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'bench' } },
    collectionRules: [
      {
        database: 'bench',
        collection: 'items',
        roles: [
          { name: 'admin', apply_when: { '%%user.custom_data.isAdmin': true }, read: true, write: true },
          { name: 'owner', apply_when: { owner_id: '%%user.id' }, read: true, write: true },
          { name: 'reader', apply_when: { '%%user.data.email': { $exists: true } }, fields: { title: { read: true }, owner_id: { read: true }, n: { read: true } }, additional_fields: { read: false } },
        ],
        filters: [],
      },
    ],
    rules: [],
    webhooks: [],
  });
  const app = { id: 'bench', deploymentId: 'd1', config };
  const system: DataAccessCaller = { kind: 'system' };
  const user: DataAccessCaller = { kind: 'user', user: { id: 'u1', data: { email: 'u1@example.com' } } };
  const find = (caller: DataAccessCaller) => dataAccess.execute({ app, service: 'mongodb-atlas', action: 'find', database: 'bench', collection: 'items', args: { query: {} }, caller });

  const documents = Array.from({ length: DOCS }, (_, i) => ({ _id: i, owner_id: i % 3 === 0 ? 'u1' : `u${i % 7}`, title: `item ${i}`, n: i, body: 'x'.repeat(200), tags: ['a', 'b'] }));
  await dataAccess.execute({ app, service: 'mongodb-atlas', action: 'insertMany', database: 'bench', collection: 'items', args: { documents }, caller: system });

  const measure = async (caller: DataAccessCaller): Promise<{ findsPerSecond: number; docsPerSecond: number; returned: number }> => {
    for (let i = 0; i < 20; i += 1) await find(caller);
    let returned = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < ROUNDS; i += 1) returned = ((await find(caller)) as unknown[]).length;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { findsPerSecond: ROUNDS / seconds, docsPerSecond: (ROUNDS * returned) / seconds, returned };
  };

  // Alternate to spread drift (GC, JIT) over both paths.
  const systemRuns = [];
  const userRuns = [];
  for (let i = 0; i < 3; i += 1) {
    systemRuns.push(await measure(system));
    userRuns.push(await measure(user));
  }
  const best = (runs: { findsPerSecond: number; docsPerSecond: number; returned: number }[]) => runs.reduce((a, b) => (b.findsPerSecond > a.findsPerSecond ? b : a));
  const systemBest = best(systemRuns);
  const userBest = best(userRuns);
  if (userBest.returned !== DOCS) throw new Error(`user find returned ${userBest.returned} documents, expected ${DOCS}`);
  console.log(`find of ${DOCS} documents, ${ROUNDS} rounds x 3, best run:`);
  console.log(`  system (baseline): ${systemBest.findsPerSecond.toFixed(1)} finds/s, ${Math.round(systemBest.docsPerSecond)} docs/s`);
  console.log(`  user, 3 roles:     ${userBest.findsPerSecond.toFixed(1)} finds/s, ${Math.round(userBest.docsPerSecond)} docs/s`);
  await dataSources.closeAll();
  rmSync(dataDir, { recursive: true, force: true });
  const ratio = userBest.findsPerSecond / systemBest.findsPerSecond;
  console.log(`user/system throughput ratio: ${ratio.toFixed(2)} (target >= 0.70)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
