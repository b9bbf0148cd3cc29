// Vitest setup file (vitest.config.mts): Nest's default logger prints every level, so each message a test
// handles added a DEBUG line to the output and buried the failures. Tests see warnings and errors only;
// a host built with its own logger (pino at LOG_LEVEL) is unaffected.
import { Logger } from '@nestjs/common';

Logger.overrideLogger(['error', 'warn', 'fatal']);
