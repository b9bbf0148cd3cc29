import { Logger } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { SpanKind } from '@opentelemetry/api';
import {
  type CommandRequest,
  type CommandResponseInput,
  type CommandSubject,
  type EventPayload,
  type EventSubject,
  parseCommandRequest,
  parseCommandResponse,
  parseEventPayload,
  type RemoteError,
} from '@tessera/contracts';
import { isTesseraError } from '@tessera/domain';
import { handleRequest } from './cancellation';
import { MessagingErrorCode, toRemoteError } from './errors';
import { InProcessContext } from './in-process/in-process.context';
import { type MessageContext, toMessageContext } from './message-context';
import { traced } from './trace-context';

export interface HandlerOptions {
  /** Queue group for this handler only; by default the one the microservice was connected with. */
  queue?: string;
  /**
   * Every replica handles every message (no queue group): for events that change what each process holds
   * in memory, such as a deployment its caches must drop. Work that must happen once stays in a group.
   */
  broadcast?: boolean;
}

/** The queue group a handler subscribes in: none when it takes broadcasts, else its own or the server's. */
export function handlerQueue(extras: unknown, serverQueue: string | undefined): string | undefined {
  const options = extras as HandlerOptions | undefined;
  return options?.broadcast ? undefined : (options?.queue ?? serverQueue);
}

type CommandMethod<S extends CommandSubject> = (payload: CommandRequest<S>, context: MessageContext) => Promise<CommandResponseInput<S>> | CommandResponseInput<S>;
type EventMethod<S extends EventSubject> = (payload: EventPayload<S>, context: MessageContext) => Promise<void> | void;

const logger = new Logger('MessageHandler');

/**
 * Marks a controller method as the handler of a command. The method receives the validated request and a
 * MessageContext (use no Nest parameter decorators) and returns the response, which is validated too. A bad
 * request or response becomes an InvalidPayload error reply; a TesseraError thrown by the method travels with
 * its code; anything else is logged with the correlation id and answered as HandlerFailed.
 *
 * A request the facade of this same process sent has passed its contract there and is not checked again
 * (see `trustedInProcess`); the response is checked here, where it is made, so that facade trusts it in turn.
 */
export function CommandHandler<S extends CommandSubject>(subject: S, options: HandlerOptions = {}) {
  return <M extends CommandMethod<S>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>): TypedPropertyDescriptor<M> => {
    const method = descriptor.value;
    if (!method) throw new Error(`@CommandHandler(${subject}) must decorate a method`);
    const wrapped = async function (this: unknown, data: unknown, nestContext: unknown): Promise<unknown> {
      // Tells the in-process server which method and controller answer this subject (see DirectCommandHandler).
      if (nestContext instanceof InProcessContext) nestContext.answeredBy = { method: wrapped, controller: this };
      const received = toMessageContext(subject, nestContext);
      const handled = handleRequest(received.headers, received.deadline);
      const context: MessageContext = { ...received, signal: handled.signal };
      try {
        let request: CommandRequest<S>;
        try {
          request = trustedInProcess(nestContext) ? (data as CommandRequest<S>) : parseCommandRequest(subject, data);
        } catch (error) {
          throw toRpcException(subject, error, context);
        }
        let response: unknown;
        try {
          response = await traced(subject, 'process', SpanKind.SERVER, context, () => method.call(this, request, context));
        } catch (error) {
          throw toRpcException(subject, error, context);
        }
        try {
          return parseCommandResponse(subject, response);
        } catch (error) {
          logger.error(`handler of ${subject} answered outside its contract (correlation id ${context.correlationId ?? 'none'}): ${String(error)}`);
          throw toRpcException(subject, error, context);
        }
      } finally {
        handled.done();
      }
    };
    descriptor.value = wrapped as unknown as M;
    bindArguments(target, key);
    MessagePattern(subject, { ...options })(target, key, descriptor);
    return descriptor;
  };
}

/**
 * Marks a controller method as a handler of an event. The method receives the validated payload and a
 * MessageContext; it is awaited. An invalid payload or a failure is logged (with the correlation id) and the
 * event dropped: nobody waits for an event, and an error escaping an event handler would crash the process.
 */
export function EventHandler<S extends EventSubject>(subject: S, options: HandlerOptions = {}) {
  return <M extends EventMethod<S>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>): TypedPropertyDescriptor<M> => {
    const method = descriptor.value;
    if (!method) throw new Error(`@EventHandler(${subject}) must decorate a method`);
    const wrapped = async function (this: unknown, data: unknown, nestContext: unknown): Promise<void> {
      const context = toMessageContext(subject, nestContext);
      try {
        const payload = trustedInProcess(nestContext) ? (data as EventPayload<S>) : parseEventPayload(subject, data);
        await traced(subject, 'process', SpanKind.CONSUMER, context, () => method.call(this, payload, context));
      } catch (error) {
        logger.error(`dropped ${subject} event (correlation id ${context.correlationId ?? 'none'}): ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    descriptor.value = wrapped as unknown as M;
    bindArguments(target, key);
    EventPattern(subject, { ...options })(target, key, descriptor);
    return descriptor;
  };
}

/**
 * Whether a payload may skip its contract check: it came over the in-process bus from this process's facade,
 * which validated it before sending. Input from another process (NATS) or sent around the facade is checked.
 */
function trustedInProcess(nestContext: unknown): boolean {
  return nestContext instanceof InProcessContext && nestContext.isValidated();
}

/** Nest passes only the payload unless told otherwise: the wrapper needs (payload, transport context). */
function bindArguments(target: object, key: string | symbol): void {
  Payload()(target, key, 0);
  Ctx()(target, key, 1);
}

function toRpcException(subject: string, error: unknown, context: MessageContext): RpcException {
  if (isTesseraError(error)) return new RpcException(toRemoteError(error));
  logger.error(`handler of ${subject} failed (correlation id ${context.correlationId ?? 'none'}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  const body: RemoteError = {
    errorCode: MessagingErrorCode.HandlerFailed,
    message: `internal error while handling ${subject}${context.correlationId ? ` (correlation id ${context.correlationId})` : ''}`,
    httpStatus: 500,
  };
  return new RpcException(body);
}
