// Vitest setup file (vitest.config.mts): fast-check's suites start from the property seed (property-seed.ts),
// so they draw the same cases on every run unless TESSERA_PROPERTY_SEED asks for others; a failure's report
// names the seed for replay.
import fc from 'fast-check';
import { propertySeed } from './property-seed';

if (propertySeed !== undefined) fc.configureGlobal({ seed: propertySeed });
