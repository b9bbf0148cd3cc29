/** Exit codes scripts can rely on (also listed in `tessera --help`). */
export enum ExitCode {
  Ok = 0,
  /** The server refused the request or something unexpected went wrong. */
  Failure = 1,
  /** Bad flags or arguments. */
  Usage = 2,
  /** Not logged in, login refused, or the session cannot be refreshed. */
  Auth = 3,
  /** The app, template or other resource does not exist. */
  NotFound = 4,
  /** The app configuration is invalid; every violation was printed. */
  InvalidConfiguration = 5,
  /** The change conflicts with the app's state (a draft exists, sync rules are locked, a name is taken). */
  Conflict = 6,
  /** The user declined a confirmation. */
  Aborted = 7,
  /** The server could not be reached. */
  Network = 8,
}

export interface Violation {
  file: string;
  path: string;
  rule: string;
  message: string;
}

/** An error the CLI reports as one clear message and an exit code, never as a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.Failure,
    readonly details: { errorCode?: string; status?: number; violations?: Violation[] } = {},
  ) {
    super(message);
    this.name = 'CliError';
  }
}

const byErrorCode: Record<string, ExitCode> = {
  InvalidSession: ExitCode.Auth,
  InvalidPassword: ExitCode.Auth,
  AuthProviderNotFound: ExitCode.Auth,
  AppNotFound: ExitCode.NotFound,
  GroupNotFound: ExitCode.NotFound,
  TemplateNotFound: ExitCode.NotFound,
  ServiceNotFound: ExitCode.NotFound,
  FunctionNotFound: ExitCode.NotFound,
  SecretNotFound: ExitCode.NotFound,
  UserNotFound: ExitCode.NotFound,
  ValueNotFound: ExitCode.NotFound,
  DraftNotFound: ExitCode.NotFound,
  InvalidConfiguration: ExitCode.InvalidConfiguration,
  InvalidAppName: ExitCode.Usage,
  InvalidParameter: ExitCode.Usage,
  PartitionSyncNotAllowed: ExitCode.InvalidConfiguration,
  SyncRulesLocked: ExitCode.Conflict,
  DraftAlreadyExists: ExitCode.Conflict,
  AppAlreadyExists: ExitCode.Conflict,
  SecretAlreadyExists: ExitCode.Conflict,
  UserAlreadyExists: ExitCode.Conflict,
  AppExists: ExitCode.Conflict,
};

/** The exit code for an App Services error body. */
export function exitCodeFor(errorCode: string | undefined, status: number): ExitCode {
  if (errorCode && byErrorCode[errorCode] !== undefined) return byErrorCode[errorCode];
  if (status === 401) return ExitCode.Auth;
  if (status === 404) return ExitCode.NotFound;
  if (status === 409) return ExitCode.Conflict;
  return ExitCode.Failure;
}
