import { FunctionRuntimeError, FunctionRuntimeErrorCode } from '../function-runtime.error';

/** functions/<name>/config.json (spec 2.4). Unknown keys are kept by callers but ignored here. */
export interface FunctionConfig {
  id?: string;
  name: string;
  private?: boolean;
  /** Rule expression evaluated before a client call; `{}` (or absent) means "always". */
  can_evaluate?: Record<string, unknown>;
  disable_arg_logs?: boolean;
  run_as_system?: boolean;
  run_as_user_id?: string;
  run_as_user_id_script_source?: string;
}

/** How a function picks the identity it runs as; exactly one applies (see README "Settings"). */
export type RunAsMode = 'caller' | 'system' | 'user_id' | 'user_id_script';

export function runAsMode(config: FunctionConfig): RunAsMode {
  if (config.run_as_system === true) return 'system';
  if (nonEmpty(config.run_as_user_id)) return 'user_id';
  if (nonEmpty(config.run_as_user_id_script_source)) return 'user_id_script';
  return 'caller';
}

/** True when can_evaluate holds an expression to check (an empty object, as exports write it, does not). */
export function hasCanEvaluate(config: FunctionConfig): boolean {
  const expression = config.can_evaluate;
  return expression !== undefined && expression !== null && Object.keys(expression).length > 0;
}

/**
 * `private`: the function takes no calls from clients (an SDK, GraphQL, an HTTPS endpoint). The runtime
 * decides this for every caller in one place (FunctionRuntimeService); a stand-in for the runtime in
 * tests asks through this same function, so it refuses what the runtime refuses.
 */
export function privateCallRefusal(name: string, config: Pick<FunctionConfig, 'private'>): FunctionRuntimeError | undefined {
  return config.private === true ? new FunctionRuntimeError(FunctionRuntimeErrorCode.NotCallable, `function '${name}' is private and cannot be called by clients`) : undefined;
}

const FUNCTION_NAME = /^[A-Za-z0-9_\-/.]{1,128}$/;

/**
 * Lists what is wrong with a function configuration (empty when valid). Rules:
 * - the run-as settings exclude each other: at most one of run_as_system=true, run_as_user_id and
 *   run_as_user_id_script_source;
 * - a private function cannot have a can_evaluate expression: can_evaluate guards client calls and a private
 *   function takes none, so the expression could never run;
 * - types: booleans are booleans, ids and script sources are non-empty strings, can_evaluate is an object.
 */
export function validateFunctionConfig(config: unknown): string[] {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return ['function configuration must be an object'];
  const c = config as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof c['name'] !== 'string' || !FUNCTION_NAME.test(c['name'])) {
    problems.push('name must be 1 to 128 characters: letters, digits, _, -, / or .');
  }
  for (const key of ['private', 'disable_arg_logs', 'run_as_system'] as const) {
    if (c[key] !== undefined && typeof c[key] !== 'boolean') problems.push(`${key} must be a boolean`);
  }
  for (const key of ['run_as_user_id', 'run_as_user_id_script_source'] as const) {
    if (c[key] !== undefined && c[key] !== '' && typeof c[key] !== 'string') problems.push(`${key} must be a string`);
  }
  const canEvaluate = c['can_evaluate'];
  if (canEvaluate !== undefined && (typeof canEvaluate !== 'object' || canEvaluate === null || Array.isArray(canEvaluate))) {
    problems.push('can_evaluate must be a rule expression object');
  }
  const runAs = [
    c['run_as_system'] === true ? 'run_as_system' : null,
    nonEmpty(c['run_as_user_id']) ? 'run_as_user_id' : null,
    nonEmpty(c['run_as_user_id_script_source']) ? 'run_as_user_id_script_source' : null,
  ].filter((key): key is string => key !== null);
  if (runAs.length > 1) problems.push(`${runAs.join(' and ')} exclude each other: set at most one`);
  if (c['private'] === true && problems.length === 0 && hasCanEvaluate(c as unknown as FunctionConfig)) {
    problems.push('can_evaluate cannot be set on a private function: private functions take no client calls');
  }
  return problems;
}

/** Throws a configuration error naming the function and every problem. */
export function assertValidFunctionConfig(config: unknown): asserts config is FunctionConfig {
  const problems = validateFunctionConfig(config);
  if (problems.length > 0) {
    const raw = typeof config === 'object' && config !== null ? (config as { name?: unknown }).name : undefined;
    const name = typeof raw === 'string' ? raw : '';
    throw new FunctionRuntimeError(
      FunctionRuntimeErrorCode.InvalidFunctionConfiguration,
      `invalid configuration for function '${name}': ${problems.join('; ')}`,
    );
  }
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
