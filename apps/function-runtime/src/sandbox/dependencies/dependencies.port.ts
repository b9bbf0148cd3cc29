/** The app's uploaded function dependencies, as the admin API bundled them (JSON text), or undefined without any. */
export interface DependenciesPort {
  getBundle(appId: string): Promise<string | undefined>;
}
