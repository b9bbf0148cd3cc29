import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedMaterial, sharedMaterialSkipReason } from '@tessera/testing';
import { embeddedTarget, mongodbTarget, wireTarget } from './targets';
import { formatResult, match, runConformance, summarize } from './unified-runner';

const suite = sharedMaterial('conformance/crud') ?? '';

// Skipped only where the workspace's shared conformance suite is absent: ${sharedMaterialSkipReason('conformance/crud')}.
describe.skipIf(!suite)(`the unified-format CRUD conformance suite${suite ? '' : ` (skipped: ${sharedMaterialSkipReason('conformance/crud')})`}`, () => {
  it('passes every applicable case on the embedded engine', async () => {
    const results = await runConformance(suite, embeddedTarget());
    const summary = summarize(results);
    const failures = results.filter((r) => r.status === 'failed').map(formatResult);
    expect(failures).toEqual([]);
    expect(summary.passed).toBeGreaterThanOrEqual(90);
    for (const skipped of results.filter((r) => r.status === 'skipped')) expect(skipped.reason).toBeTruthy();
  });

  it('passes every applicable case through the driver against the datastore wire server', async () => {
    const target = await wireTarget();
    try {
      const results = await runConformance(suite, target);
      const failures = results.filter((r) => r.status === 'failed').map(formatResult);
      expect(failures).toEqual([]);
      expect(summarize(results).passed).toBeGreaterThanOrEqual(90);
    } finally {
      await target.close();
    }
  }, 180_000);

  it('reports a case whose expected outcome the engine does not produce as failed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-conformance-broken-'));
    const file = JSON.parse(readFileSync(join(suite, 'updateOne.json'), 'utf8')) as { tests: { outcome?: { documents: { x: number }[] }[] }[] };
    const outcome = file.tests[1].outcome?.[0];
    if (outcome) outcome.documents[0].x = 999;
    writeFileSync(join(dir, 'updateOne.json'), JSON.stringify(file));
    const summary = summarize(await runConformance(dir, embeddedTarget()));
    expect(summary.failed).toBe(1);
    expect(summary.line).toMatch(/\d+ passed, 1 failed, \d+ skipped/);
  });
});

// Needs a MongoDB deployment: none runs here, so this is skipped unless MONGODB_URI points at one.
describe.skipIf(!process.env.MONGODB_URI)('the conformance suite on MongoDB (skipped: MONGODB_URI is not set)', () => {
  it('passes every applicable case', async () => {
    const uri = process.env.MONGODB_URI as string;
    const { MongoClient } = await import('mongodb');
    const probe = new MongoClient(uri);
    const info = await probe.db('admin').command({ buildInfo: 1 });
    await probe.close();
    const results = await runConformance(suite, mongodbTarget(uri, String(info.version), 'replicaset'));
    expect(results.filter((r) => r.status === 'failed').map(formatResult)).toEqual([]);
  });
});

describe('unified-format matching', () => {
  it('allows extra fields only in root-level documents', () => {
    expect(match({ a: 1, b: 2 }, { a: 1 }, true)).toBeUndefined();
    expect(match({ x: { a: 1, b: 2 } }, { x: { a: 1 } }, true)).toMatch(/unexpected fields b/);
  });

  it('treats numbers of any type as equal by value and honours $$unsetOrMatches', () => {
    expect(match(1, 1.0, true)).toBeUndefined();
    expect(match(undefined, { $$unsetOrMatches: { a: 1 } }, true)).toBeUndefined();
    expect(match({ a: 2 }, { $$unsetOrMatches: { a: 1 } }, true)).toMatch(/expected 1/);
  });
});
