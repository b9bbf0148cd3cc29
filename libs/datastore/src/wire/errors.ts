/** A command failure the wire server reports with a MongoDB code and code name of its own choosing. */
export class WireCommandError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
    readonly labels: string[] = [],
  ) {
    super(message);
    this.name = 'WireCommandError';
  }
}
