/**
 * The error every feature throws. Each feature defines its own subclass with a code enum; the transport
 * edges (HTTP filter, GraphQL, RPC) map `errorCode` and `httpStatus` to the wire. The message is safe to
 * show to a client: never put stack traces, secrets or internal paths in it.
 */
export abstract class TesseraError extends Error {
  /** App Services `error_code`, for example `InvalidSession` or `FunctionNotFound`. */
  abstract readonly errorCode: string;
  /** HTTP status the client API and admin API answer with. */
  abstract readonly httpStatus: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** The App Services error body: `{ error, error_code, link? }`. */
  toBody(link?: string): ErrorBody {
    return link ? { error: this.message, error_code: this.errorCode, link } : { error: this.message, error_code: this.errorCode };
  }
}

export interface ErrorBody {
  error: string;
  error_code: string;
  link?: string;
}

export function isTesseraError(value: unknown): value is TesseraError {
  return value instanceof TesseraError;
}

/**
 * A TesseraError whose HTTP status follows from its code through the feature's table, so a feature
 * declares its codes and statuses once: `class FooError extends CodedError<FooErrorCode> { constructor(code, message) { super(code, message, fooStatuses); } }`.
 */
export abstract class CodedError<Code extends string> extends TesseraError {
  readonly httpStatus: number;

  constructor(
    readonly errorCode: Code,
    message: string,
    statuses: Readonly<Record<Code, number>>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.httpStatus = statuses[errorCode];
  }
}
