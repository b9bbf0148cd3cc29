import { CliError, ExitCode } from '../cli-error';

/** What became of one target of a command acting on several: done, or the error it failed with. */
export interface TargetOutcome<T> {
  target: T;
  error?: CliError;
}

/**
 * Acts on each target in turn and goes on after a failure, as realm-cli's deletes did: each target's
 * outcome is reported, and the command then fails (see `failedTargets`) if any did.
 */
export async function forEachTarget<T>(targets: readonly T[], act: (target: T) => Promise<unknown>): Promise<TargetOutcome<T>[]> {
  const outcomes: TargetOutcome<T>[] = [];
  for (const target of targets) {
    try {
      await act(target);
      outcomes.push({ target });
    } catch (error) {
      outcomes.push({ target, error: error instanceof CliError ? error : new CliError(error instanceof Error ? error.message : String(error)) });
    }
  }
  return outcomes;
}

/** realm-cli's order of a results table: the failed first, otherwise as acted on. */
export function failedFirst<T>(outcomes: readonly TargetOutcome<T>[]): TargetOutcome<T>[] {
  return [...outcomes.filter((outcome) => outcome.error), ...outcomes.filter((outcome) => !outcome.error)];
}

/**
 * The error a command ends with when some targets failed (after it printed every outcome): it names each
 * failure, and exits with their exit code when they share one (a missing user: 4), else 1.
 */
export function failedTargets<T>(outcomes: readonly TargetOutcome<T>[], verb: string, noun: string, name: (target: T) => string): CliError | undefined {
  const failed = outcomes.filter((outcome): outcome is TargetOutcome<T> & { error: CliError } => outcome.error !== undefined);
  if (failed.length === 0) return undefined;
  const codes = new Set(failed.map((outcome) => outcome.error.exitCode));
  const [code] = codes;
  return new CliError(
    `${failed.length} of ${outcomes.length} ${noun}(s) not ${verb}: ${failed.map((outcome) => `${name(outcome.target)}: ${outcome.error.message}`).join('; ')}`,
    codes.size === 1 && code !== undefined ? code : ExitCode.Failure,
  );
}
