import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChild } from './request-logger';

function capture(level: string): { root: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { root: pino({ level, mixin: () => ({ trace_id: 't1' }) }, stream), lines };
}

describe('lazyChild', () => {
  it('writes lines with the request id and the root mixin fields', async () => {
    const { root, lines } = capture('info');
    const logger = lazyChild(root, 7);
    logger.warn({ context: 'X' }, 'slow');
    logger.child({ extra: 1 }).info('more');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toMatchObject([
      { level: 40, reqId: 7, trace_id: 't1', context: 'X', msg: 'slow' },
      { level: 30, reqId: 7, extra: 1, msg: 'more' },
    ]);
  });

  it('makes no child logger and writes nothing for a disabled level', async () => {
    const { root, lines } = capture('warn');
    let children = 0;
    const counted = new Proxy(root, {
      get: (target, property) => (property === 'child' ? (...args: Parameters<pino.Logger['child']>) => (children++, target.child(...args)) : Reflect.get(target, property, target)),
    });
    const logger = lazyChild(counted, 1);
    logger.info('hidden');
    logger.debug('hidden');
    expect(children).toBe(0);
    logger.error('shown');
    logger.error('shown again');
    expect(children).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((line) => line.msg)).toEqual(['shown', 'shown again']);
  });
});
