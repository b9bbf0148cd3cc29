import type { IncomingMessage, ServerResponse } from 'node:http';
import { PinoLogger } from 'nestjs-pino';
import { Store, storage } from 'nestjs-pino/storage';
import type { Logger } from 'pino';

const maxRequestId = 2147483647;
let lastRequestId = 0;

/**
 * Binds a request logger to each HTTP request, in place of pino-http's middleware, which builds two child
 * loggers per request (one serializing and redacting the whole request) although the host logs no request
 * lines: about 5% of the main thread on a trivial function call. Lines logged while the request is handled
 * still carry its `reqId` (numbered as pino-http numbered them) and, through the root's mixin, its trace;
 * the child that adds the `reqId` is made only when a line is actually written at an enabled level.
 */
export function bindRequestLogger(_request: IncomingMessage, _response: ServerResponse, next: () => void): void {
  lastRequestId = (lastRequestId + 1) & maxRequestId;
  storage.run(new Store(lazyChild(PinoLogger.root, lastRequestId)), next);
}

const silent = (): void => undefined;

/** `root.child({ reqId })`, made on the first use that needs it; a call at a disabled level needs nothing. */
export function lazyChild(root: Logger, reqId: number): Logger {
  let child: Logger | undefined;
  const made = (): Logger => (child ??= root.child({ reqId }));
  return new Proxy(root, {
    get(_target, property) {
      if (typeof property === 'string' && property in root.levels.values && !root.isLevelEnabled(property)) return silent;
      const logger = made();
      const value: unknown = Reflect.get(logger, property, logger);
      return typeof value === 'function' ? (value.bind(logger) as unknown) : value;
    },
  });
}
