import { type CpuProfile, moduleOf, summarise } from './cpuprofile-summary';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });

/**
 * root > handler (apps/graphql-gateway) > parse (node_modules/zod), root > (idle); handler also recurses into
 * itself. Samples 1 s apart, from 0 s: parse, parse, handler, parse, idle, handler>handler, parse.
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4] },
    { id: 2, callFrame: frame('handler', 'file:///repo/apps/graphql-gateway/dist/x.js', 9), children: [3, 5] },
    { id: 3, callFrame: frame('parse', 'file:///repo/node_modules/zod/v3/types.cjs', 99) },
    { id: 4, callFrame: frame('(idle)') },
    { id: 5, callFrame: frame('handler', 'file:///repo/apps/graphql-gateway/dist/x.js', 9) },
  ],
  startTime: 0,
  endTime: 7e6,
  samples: [3, 3, 2, 3, 4, 5, 3],
  timeDeltas: [0, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6],
};

describe('cpuprofile summary', () => {
  it('counts only the window before the end, leaves idle samples out, and counts a recursing function once per sample', () => {
    // The last sample is at 6 s: the window is 1 s to 5 s, samples 2 to 6 (parse, handler, parse, idle, handler>handler).
    const summary = summarise(profile, { lastSeconds: 4, skipEndSeconds: 1 });
    expect(summary.busySamples).toBe(4);
    expect(summary.bySelf.map((s) => [s.name, s.samples])).toEqual([
      ['handler apps/graphql-gateway/dist/x.js:10', 2],
      ['parse node_modules/zod/v3/types.cjs:100', 2],
    ]);
    expect(summary.byInclusive.find((s) => s.name.startsWith('handler'))).toMatchObject({ samples: 4, fraction: 1 });
    expect(summary.byInclusive.find((s) => s.name.startsWith('parse'))).toMatchObject({ samples: 2, fraction: 0.5 });
    expect(summary.byModule.map((s) => [s.name, s.samples])).toEqual([
      ['apps/graphql-gateway', 2],
      ['node_modules/zod', 2],
    ]);
  });

  it('takes every busy sample when the window covers the whole profile', () => {
    expect(summarise(profile, { lastSeconds: 100, skipEndSeconds: 0 }).busySamples).toBe(6);
  });

  it('names a frame by its package, project or Node module', () => {
    expect(moduleOf('file:///repo/node_modules/@nestjs/core/router/x.js', 'f')).toBe('node_modules/@nestjs/core');
    expect(moduleOf('file:///repo/node_modules/a/node_modules/b/i.js', 'f')).toBe('node_modules/b');
    expect(moduleOf('file:///repo/libs/datastore/dist/engine/query.js', 'f')).toBe('libs/datastore');
    expect(moduleOf('node:internal/streams/writable', 'f')).toBe('node:internal');
    expect(moduleOf('', '(garbage collector)')).toBe('(garbage collector)');
  });
});
