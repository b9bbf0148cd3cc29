/**
 * Values of an app as functions read them: `context.values.get(name)` (values, and values from secrets
 * already resolved to the secret's content) and `context.environment` (the environment tag and its values).
 * Read once per warm sandbox; deploying (a new functions version or `invalidate(appId)`) reloads them.
 */
export interface AppValues {
  values: Record<string, unknown>;
  environment: { tag: string; values: Record<string, unknown> };
}

export interface ValuesPort {
  getValues(appId: string): Promise<AppValues>;
}
