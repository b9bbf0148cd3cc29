import { type NatsOptions, ServerNats } from '@nestjs/microservices';
import { Subjects } from '@tessera/contracts';
import { type Msg, type NatsConnection, type Subscription } from 'nats';
import { abandonFromPacket } from '../cancellation';
import { drain } from '../drain';
import { handlerQueue } from '../handlers';

export type NatsServerOptions = Required<NatsOptions>['options'] & {
  /** Queue group every handler joins unless its decorator names another: the service's name. */
  queue?: string;
  /** How long `close()` waits for handlers still running before closing the connection. */
  drainTimeoutMs?: number;
};

/**
 * Nest's NATS server with three changes: a malformed message is logged and answered with an error instead of
 * becoming an unhandled rejection; every message is tracked until its reply is published; and `close()`
 * unsubscribes first, waits for those in-flight messages, flushes, and only then closes the connection.
 */
export class TesseraNatsServer extends ServerNats {
  private readonly subscriptionsOwned: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly settlers = new WeakMap<Msg, () => void>();
  private readonly replying = new WeakSet<Msg>();
  private abandonments: Subscription | undefined;

  constructor(private readonly serverOptions: NatsServerOptions) {
    super(serverOptions);
  }

  override bindEvents(client: NatsConnection): void {
    for (const [channel, handler] of this.messageHandlers) {
      const queue = handlerQueue(handler.extras, this.serverOptions.queue);
      const subscription = client.subscribe(channel, {
        queue,
        callback: (error, message) => {
          if (error) {
            this.logger.error(`subscription to ${channel} failed: ${error.message}`);
            return;
          }
          void this.handleMessage(channel, message);
        },
      });
      this.subscriptionsOwned.push(subscription);
    }
    // Every replica hears every abandonment (no queue group): only the one handling the request acts on it.
    // It stays subscribed while draining, so work abandoned during shutdown still stops.
    this.abandonments = client.subscribe(Subjects.MessagingRequestAbandoned, {
      callback: (error, message) => {
        if (!error) abandonFromPacket(new TextDecoder().decode(message.data));
      },
    });
  }

  override async handleMessage(channel: string, message: Msg): Promise<void> {
    let settle: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
    this.settlers.set(message, settle);
    try {
      await super.handleMessage(channel, message);
    } catch (error) {
      this.logger.error(`dropped an unreadable message on ${channel}: ${error instanceof Error ? error.message : String(error)}`);
      if (message.reply) message.respond(new TextEncoder().encode(JSON.stringify({ err: { status: 'error', message: 'unreadable message' }, isDisposed: true })));
      settle();
    } finally {
      // Events, and requests that failed before a reply was set up, are done once the handler returned.
      if (!this.replying.has(message)) settle();
    }
  }

  override getPublisher(message: Msg, id: string, context: Parameters<ServerNats['getPublisher']>[2]): (response: unknown) => unknown {
    this.replying.add(message);
    const publish = super.getPublisher(message, id, context) as (response: unknown) => unknown;
    const settle = this.settlers.get(message);
    return (response: unknown) => {
      const result = publish(response);
      if ((response as { isDisposed?: boolean } | undefined)?.isDisposed) settle?.();
      return result;
    };
  }

  override async close(): Promise<void> {
    // drain, not unsubscribe: messages the server already sent this subscription are still handled.
    await Promise.all(this.subscriptionsOwned.splice(0).map((subscription) => subscription.drain().catch(() => subscription.unsubscribe())));
    await drain(this.inFlight, this.serverOptions.drainTimeoutMs ?? 10_000);
    this.abandonments?.unsubscribe();
    this.abandonments = undefined;
    let connection: NatsConnection | undefined;
    try {
      connection = this.unwrap<NatsConnection>();
    } catch {
      connection = undefined;
    }
    if (connection && !connection.isClosed()) await connection.flush().catch(() => undefined);
    await super.close();
  }
}
