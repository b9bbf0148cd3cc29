import { PinoLogger, type Logger } from 'nestjs-pino';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { HostLogger } from './host-logger';

/** A nestjs-pino Logger stand-in that records what reaches it. */
function recording(): { logger: Logger; calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = [];
  const logger = { debug: (message: unknown) => calls.push(['debug', message]), log: (message: unknown) => calls.push(['log', message]) } as unknown as Logger;
  return { logger, calls };
}

function setRoot(root: pino.Logger | undefined): void {
  (PinoLogger as unknown as { root: pino.Logger | undefined }).root = root;
}

describe('HostLogger', () => {
  afterEach(() => setRoot(undefined));

  it('drops debug lines while the root logger does not log debug, and passes them on when it does', () => {
    const { logger, calls } = recording();
    const host = new HostLogger(logger);
    setRoot(pino({ level: 'info' }));
    host.debug('handled x in 1 ms', 'MessageHandler');
    expect(calls).toEqual([]);
    setRoot(pino({ level: 'debug' }));
    host.debug('handled y in 1 ms', 'MessageHandler');
    expect(calls).toEqual([['debug', 'handled y in 1 ms']]);
  });

  it('passes debug lines on before the root logger exists, and leaves other levels alone', () => {
    const { logger, calls } = recording();
    const host = new HostLogger(logger);
    host.debug('early');
    setRoot(pino({ level: 'warn' }));
    host.log('started', 'Bootstrap');
    expect(calls).toEqual([
      ['debug', 'early'],
      ['log', 'started'],
    ]);
  });
});
