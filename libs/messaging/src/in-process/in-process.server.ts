import { type CustomTransportStrategy, type MessageHandler, RpcException, Server, type WritePacket } from '@nestjs/microservices';
import { EXCEPTION_FILTERS_METADATA, GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA } from '@nestjs/common/constants';
import { isObservable } from 'rxjs';
import { Subjects } from '@tessera/contracts';
import { abandonFromPacket } from '../cancellation';
import { drain } from '../drain';
import { handlerQueue } from '../handlers';
import { type BusDelivery, InProcessBus } from './in-process-bus';
import { type DirectCommandHandler, InProcessContext } from './in-process.context';

export const IN_PROCESS_TRANSPORT = Symbol.for('tessera.messaging.in-process');

export interface InProcessServerOptions {
  bus?: InProcessBus;
  /** Queue group every handler joins unless its decorator names another: the service's name. */
  queue?: string;
  /** How long `close()` waits for handlers still running. */
  drainTimeoutMs?: number;
}

interface IncomingPacket {
  id?: string;
  pattern?: unknown;
  data?: unknown;
  validated?: boolean;
}

/**
 * The in-process microservice transport: a Nest `Server` over the process-wide bus. Each handler subscribes
 * on its pattern in the queue group; requests are answered through the delivery's reply function, events are
 * awaited like any handler. `close()` stops taking messages, then waits for the ones being handled.
 */
export class InProcessServer extends Server implements CustomTransportStrategy {
  override readonly transportId = IN_PROCESS_TRANSPORT;
  private readonly bus: InProcessBus;
  private readonly unsubscribers: Array<() => void> = [];
  private readonly inFlight = new Set<Promise<void>>();
  private abandonments: (() => void) | undefined;
  /** Command methods this server has seen Nest call, by Nest's handler of their subject: called directly since. */
  private readonly direct = new Map<MessageHandler, DirectCommandHandler>();

  constructor(private readonly options: InProcessServerOptions = {}) {
    super();
    this.bus = options.bus ?? InProcessBus.shared();
  }

  listen(callback: (error?: unknown) => void): void {
    for (const [pattern, handler] of this.messageHandlers) {
      const queue = handlerQueue(handler.extras, this.options.queue);
      this.unsubscribers.push(this.bus.subscribe(pattern, (delivery) => this.track(this.handleDelivery(pattern, handler, delivery)), { queue }));
    }
    // Every server hears every abandonment (no queue group): only the one handling the request acts on it.
    // It stays subscribed while draining, so work abandoned during shutdown still stops.
    this.abandonments = this.bus.subscribe(Subjects.MessagingRequestAbandoned, (delivery) => abandonFromPacket(delivery.data));
    this._status$.next('connected');
    callback();
  }

  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    await drain(this.inFlight, this.options.drainTimeoutMs ?? 10_000);
    this.abandonments?.();
    this.abandonments = undefined;
    this._status$.next('disconnected');
  }

  on(): void {
    // The bus has no connection events.
  }

  unwrap<T>(): T {
    return this.bus as T;
  }

  private track(work: Promise<void>): void {
    const settled = work.catch((error: unknown) => {
      this.logger.error(`in-process handler failed: ${String(error)}`);
    });
    this.inFlight.add(settled);
    void settled.finally(() => this.inFlight.delete(settled));
  }

  private async handleDelivery(pattern: string, handler: MessageHandler, delivery: BusDelivery): Promise<void> {
    let packet: IncomingPacket;
    try {
      packet = (delivery.direct?.packet ?? JSON.parse(delivery.data)) as IncomingPacket;
    } catch {
      this.logger.error(`dropped an unreadable message on ${pattern}`);
      delivery.reply?.(JSON.stringify({ err: { status: 'error', message: 'unreadable message' }, isDisposed: true }));
      return;
    }
    const context = new InProcessContext([delivery.subject, delivery.headers, packet.validated === true]);
    const { id } = packet;
    if (id === undefined || !delivery.reply) {
      await this.handleEvent(pattern, { pattern, data: packet.data }, context);
      return;
    }
    const respond = replier(id, delivery);
    if (delivery.direct) {
      await new Promise<void>((resolve) => {
        this.onProcessingStartHook(this.transportId, context, () => this.answerDirectly(pattern, handler, packet.data, context, respond).then(resolve, resolve));
      });
      return;
    }
    await new Promise<void>((resolve) => {
      this.onProcessingStartHook(this.transportId, context, async () => {
        try {
          const response$ = this.transformToObservable(await handler(packet.data, context));
          this.send(response$, (out) => {
            respond(out);
            if (out.isDisposed) resolve();
          });
        } catch (error) {
          this.logger.error(`handler for ${pattern} threw outside Nest's filters: ${String(error)}`);
          respond({ err: { status: 'error', message: 'Internal server error' }, isDisposed: true });
          resolve();
        }
      });
    });
  }

  /**
   * A request sent with the bus's `request` (the facade's command path). The first one of a subject goes
   * through Nest's handler (its parameter pipes, guards, interceptors and exception filters), but a plain
   * result is answered at once instead of through an observable and `send`; an observable (an interceptor's,
   * or the filters' error) still goes through `send`. Once Nest has called a `@CommandHandler` method, later
   * requests call that method directly (about fifteen promises fewer per call), and what it throws becomes
   * the error packet Nest's RPC exception filter makes of it.
   */
  private async answerDirectly(pattern: string, handler: MessageHandler, data: unknown, context: InProcessContext, respond: (out: WritePacket) => void): Promise<void> {
    const known = this.direct.get(handler);
    if (known) {
      let response: unknown;
      try {
        response = await known.method.call(known.controller, data, context);
      } catch (error) {
        respond({ err: this.rpcErrorBody(pattern, error), isDisposed: true });
        return;
      }
      respond({ response, isDisposed: true });
      return;
    }
    let result: unknown;
    try {
      result = await handler(data, context);
      if (context.answeredBy && !hasOwnEnhancers(context.answeredBy)) this.direct.set(handler, context.answeredBy);
    } catch (error) {
      this.logger.error(`handler for ${pattern} threw outside Nest's filters: ${String(error)}`);
      respond({ err: { status: 'error', message: 'Internal server error' }, isDisposed: true });
      return;
    }
    if (!isObservable(result)) {
      respond({ response: result, isDisposed: true });
      return;
    }
    await new Promise<void>((resolve) => {
      this.send(result, (out) => {
        respond(out);
        if (out.isDisposed) resolve();
      });
    });
  }

  /** The error body Nest's RPC exception filter sends for what a handler threw (BaseRpcExceptionFilter's). */
  private rpcErrorBody(pattern: string, error: unknown): unknown {
    if (error instanceof RpcException) {
      const body = error.getError();
      return typeof body === 'object' && body !== null ? body : { status: 'error', message: body };
    }
    this.logger.error(`handler for ${pattern} threw outside its contract: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return { status: 'error', message: 'Internal server error' };
  }
}

const enhancerKeys = [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA];

/**
 * Whether the method or its controller names guards, interceptors, pipes or filters of its own: Nest must
 * then run them on every call, so such a handler is never called directly (a guard skipped after the first
 * call would be a way around it).
 */
function hasOwnEnhancers({ method, controller }: DirectCommandHandler): boolean {
  const type = (controller as object | null)?.constructor;
  return enhancerKeys.some((key) => Reflect.getMetadata(key, method) !== undefined || (type !== undefined && Reflect.getMetadata(key, type) !== undefined));
}

/**
 * Sends a handler's packets back to the requester: as objects when the request came as one (the error body
 * still as JSON would carry it, so every transport maps the same error), else as JSON text.
 */
function replier(id: string, delivery: BusDelivery): (out: WritePacket) => void {
  const direct = delivery.direct;
  if (direct) {
    return (out) => {
      if (out.err === undefined || out.err === null) {
        direct.reply({ ...out, id });
        return;
      }
      let err: unknown;
      try {
        err = JSON.parse(JSON.stringify(out.err) ?? 'null');
      } catch {
        err = { status: 'error', message: 'Internal server error' };
      }
      direct.reply({ ...out, err, id });
    };
  }
  const reply = delivery.reply as (data: string) => void;
  return (out) => reply(JSON.stringify({ ...out, id }));
}
