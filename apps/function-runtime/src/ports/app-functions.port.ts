import type { FunctionConfig } from '../config/function-config';

/** One deployed function: its config.json and its source.js. */
export interface DeployedFunction {
  config: FunctionConfig;
  source: string;
}

/**
 * The functions of an app as deployed. `version` changes on every deploy; the runtime keeps warm sandboxes
 * per app and version, so a new version retires the old sandboxes.
 */
export interface AppFunctions {
  version: string;
  functions: ReadonlyMap<string, DeployedFunction>;
  /** Incoming webhooks of the app's services, keyed `<service>/<webhook>` (their config holds the function settings). */
  webhooks?: ReadonlyMap<string, DeployedFunction>;
  /**
   * The Data API's user choice when its configuration has `run_as_user_id_script_source`: a function that runs
   * as the user the script names (the script is its run-as setting) and returns that user's id.
   */
  dataApiRunAs?: DeployedFunction;
  /**
   * The app's HTTP services (Stitch's third-party `http` type) by name, with their service rules: a function's
   * `context.services.get(name).get(...)` is sent only when a rule lists the action and its `when` holds.
   */
  httpServices?: ReadonlyMap<string, HttpServiceRules>;
}

export interface HttpServiceRules {
  rules: ReadonlyArray<{ name: string; actions: readonly string[]; when?: Record<string, unknown> }>;
}

export interface AppFunctionsPort {
  /** The deployed functions of the app, or null when the app does not exist. */
  getFunctions(appId: string): Promise<AppFunctions | null>;
}
