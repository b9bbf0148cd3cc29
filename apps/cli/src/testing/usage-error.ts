import { CliError } from '../cli-error';

/** The CliError `run` throws (a test's reading of a refused command line); anything else fails the test. */
export function usageError(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error('expected a CliError');
}
