/**
 * The Nest logger of a Tessera process: nestjs-pino's, with the framework's start-up chatter (a line per
 * module, controller and route: about 160 lines) moved from info to debug, so that at the default level a
 * start shows what the services say and the banner. It must not change what the services log.
 */
import type { LoggerService } from '@nestjs/common';
import { type Logger, PinoLogger } from 'nestjs-pino';

/** Nest's own contexts that report wiring, not events: modules loaded, routes mapped, app started. */
const frameworkContexts = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'NestMicroservice']);

export class HostLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams.at(-1);
    if (typeof context === 'string' && frameworkContexts.has(context)) this.logger.debug(message, ...optionalParams);
    else this.logger.log(message, ...optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.error(message, ...optionalParams);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.warn(message, ...optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    // Handlers log a debug line per message: at the usual levels it stops here, before nestjs-pino builds
    // its arguments (what it forwards to would drop it anyway).
    if (!this.enabled('debug')) return;
    this.logger.debug(message, ...optionalParams);
  }

  /**
   * Whether the root pino logger logs `level` (request loggers are its children, at its level); true before
   * it exists. Asked of the root, not of the request's logger, whose child `bindRequestLogger` makes only for
   * a line actually written.
   */
  private enabled(level: string): boolean {
    const root = (PinoLogger as unknown as { root?: { isLevelEnabled?: (level: string) => boolean } }).root;
    return root?.isLevelEnabled?.(level) ?? true;
  }

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.verbose(message, ...optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.fatal(message, ...optionalParams);
  }
}
