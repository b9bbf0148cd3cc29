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
