import { Injectable, Optional } from '@nestjs/common';
import { type Caller, type HttpCall, type HttpResponseState, type JsonValue, type RequestMetadata, type RunAsHints, Subjects, type UnsavedSource } from '@tessera/contracts';
import { type CancelSignal, TesseraError } from '@tessera/domain';
import { decodeEjson, encodeEjson } from './ejson';
import { MessageBus } from './message-bus';

/** One call of an app function, as every transport asks for it. */
export interface FunctionCall {
  appId: string;
  functionName: string;
  /** The arguments as BSON values; encoded to canonical EJSON once, here. */
  args: readonly unknown[];
  caller: Caller;
  runAs?: RunAsHints;
  /** Unsaved source to run instead of the deployed function of that name (the admin API's, only). */
  source?: UnsavedSource;
  metadata: RequestMetadata;
  /** Set for a call serving an HTTP request: the function also gets App Services' `response` object. */
  http?: HttpCall;
}

export interface FunctionCallOptions {
  /** The caller's interest (an HTTP client that may leave): aborting stops the call in the runtime. */
  signal?: CancelSignal;
  /** Correlation id and trace context of the request the call serves (see `edgeMessageHeaders` in @tessera/http-edge). */
  headers?: Readonly<Record<string, string>>;
}

/** What the runtime answered for a call that ran: the result still in canonical EJSON, and the log lines. */
export interface FunctionCallOutcome {
  result: JsonValue;
  logs: string[];
  /** For a call with `http`: what the function set on its `response` object. */
  http?: HttpResponseState;
}

/** HTTP statuses of the runtime's error codes that are not 400 (FunctionExecutionError and most others are). */
const statusOfCode: Readonly<Record<string, number>> = { FunctionNotFound: 404, NotCallable: 403, InternalServerError: 500, ServiceUnavailable: 503 };

/**
 * A function call the runtime refused or that failed, with the runtime's code and message and the status
 * App Services answers it with. Each transport's one error mapping turns it into its wire form (the App
 * Services error body over HTTP, `extensions.code` in GraphQL, RuleFunctionFailed inside a rule).
 */
export class FunctionCallError extends TesseraError {
  readonly httpStatus: number;

  constructor(
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
    this.httpStatus = statusOfCode[errorCode] ?? 400;
  }
}

/**
 * The one way to call an app function over the bus (`functions.execution.run`), for the client API, GraphQL
 * custom resolvers, rules' `%function` and the admin API alike. The call waits as long as the function may
 * run (the bus's deadline for the subject follows the runtime's time limit). Without a bus (a process that
 * wires no messaging) every call fails with ServiceUnavailable rather than the process failing to start.
 */
@Injectable()
export class FunctionCalls {
  constructor(@Optional() private readonly bus?: MessageBus) {}

  /** Runs the function; its result as BSON values (`relaxed`: numbers as JS numbers, as rules want them). */
  async call(call: FunctionCall, options: FunctionCallOptions & { relaxed?: boolean } = {}): Promise<unknown> {
    const { result } = await this.run(call, options);
    return decodeEjson(result, { relaxed: options.relaxed ?? false });
  }

  /** Runs the function; its result left in canonical EJSON, with the function's log lines. */
  async run(call: FunctionCall, options: FunctionCallOptions = {}): Promise<FunctionCallOutcome> {
    if (!this.bus) throw new FunctionCallError('ServiceUnavailable', 'the function runtime is not available in this process');
    const response = await this.bus.request(
      Subjects.FunctionsExecutionRun,
      {
        appId: call.appId,
        functionName: call.functionName,
        args: encodeEjson([...call.args]) as JsonValue[],
        caller: call.caller,
        ...(call.runAs ? { runAs: call.runAs } : {}),
        ...(call.source ? { source: call.source } : {}),
        metadata: call.metadata,
        ...(call.http ? { http: call.http } : {}),
      },
      { ...(options.signal ? { signal: options.signal } : {}), ...(options.headers ? { headers: options.headers } : {}) },
    );
    if (!response.ok) throw new FunctionCallError(response.error.errorCode, response.error.message);
    return { result: response.result, logs: response.logs ?? [], ...(response.http ? { http: response.http } : {}) };
  }
}
