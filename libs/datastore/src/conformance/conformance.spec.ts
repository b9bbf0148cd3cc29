import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { embeddedTarget } from './targets';
import { formatResult, match, runConformance, summarize } from './unified-runner';

const suite = resolve(__dirname, '../../../../../shared/conformance/crud');

describe('the unified-format CRUD conformance suite', () => {
  it('passes every applicable case on the embedded engine', async () => {
    const results = await runConformance(suite, embeddedTarget());
    const summary = summarize(results);
    const failures = results.filter((r) => r.status === 'failed').map(formatResult);
    expect(failures).toEqual([]);
    expect(summary.passed).toBeGreaterThanOrEqual(90);
    for (const skipped of results.filter((r) => r.status === 'skipped')) expect(skipped.reason).toBeTruthy();
  });

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
