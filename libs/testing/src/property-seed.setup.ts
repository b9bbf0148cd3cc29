// Vitest setup file (vitest.config.mts): the property suites (fast-check, and the flexible-sync property's
// seeds) run the same generated cases on every run, so that a submission's CI run repeats what passed
// before it and a failure there is a regression, not a new draw. `TESSERA_PROPERTY_SEED=<n>` draws another
// set of cases; `TESSERA_PROPERTY_SEED=random` (`npm run test:explore`) a fresh one per suite, named in a
// failure's report for replay.
import fc from 'fast-check';

/** The seed every property suite starts from, or undefined when each draws its own. */
export const propertySeed: number | undefined = seedFrom(process.env['TESSERA_PROPERTY_SEED']);

function seedFrom(given: string | undefined): number | undefined {
  if (given === 'random') return undefined;
  if (given === undefined || given === '') return 20_261_126;
  const seed = Number(given);
  if (!Number.isSafeInteger(seed)) throw new Error(`TESSERA_PROPERTY_SEED must be an integer or "random", not ${given}`);
  return seed;
}

if (propertySeed !== undefined) fc.configureGlobal({ seed: propertySeed });
