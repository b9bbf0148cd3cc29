/**
 * `npm run conformance:crud -- [directory]`: runs MongoDB's unified-format CRUD tests against the embedded
 * engine, through the driver against the datastore wire server (and against MongoDB when MONGODB_URI is
 * set), prints every case and `N passed, N failed, N skipped`, and exits non-zero when a case fails.
 */
import { resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import { type ConformanceTarget, formatResult, runConformance, summarize } from './unified-runner';
import { embeddedTarget, mongodbTarget, wireTarget } from './targets';

async function mongoTarget(uri: string): Promise<ConformanceTarget> {
  const client = new MongoClient(uri);
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    const hello = await client.db('admin').command({ hello: 1 });
    const topology = hello.msg === 'isdbgrid' ? 'sharded' : hello.setName ? 'replicaset' : 'single';
    return mongodbTarget(uri, String(info.version), topology);
  } finally {
    await client.close();
  }
}

async function main(): Promise<number> {
  const dir = resolve(process.cwd(), process.argv[2] ?? '../shared/conformance/crud');
  const wire = await wireTarget();
  const targets: ConformanceTarget[] = [embeddedTarget(), wire];
  const uri = process.env.MONGODB_URI;
  if (uri) targets.push(await mongoTarget(uri));
  else console.log('MongoDB: not run (set MONGODB_URI to run the suite against a MongoDB deployment too)');
  let failed = 0;
  try {
    for (const target of targets) {
      console.log(`\n== ${target.name} (${dir})`);
      const results = await runConformance(dir, target);
      for (const r of results) console.log(formatResult(r));
      const summary = summarize(results);
      failed += summary.failed;
      console.log(`${target.name}: ${summary.line}`);
    }
  } finally {
    // Also when a directory cannot be read: a wire server left listening would keep the process alive.
    await wire.close();
  }
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 2;
  },
);
