import { type DynamicModule, Inject, type INestApplication, Injectable, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { type CustomStrategy } from '@nestjs/microservices';
import { type ConnectionOptions } from 'nats';
import { InProcessBus } from './in-process/in-process-bus';
import { InProcessClient } from './in-process/in-process.client';
import { InProcessServer } from './in-process/in-process.server';
import { MessageBus, type MessageBusOptions, type MessagingClient } from './message-bus';
import { TesseraNatsClient } from './nats/nats.client';
import { TesseraNatsServer } from './nats/nats.server';
import { TransportReadiness } from './readiness';

interface CommonMessagingOptions extends MessageBusOptions {
  /** Queue group the service's handlers join (its name); needed to connect a microservice, not to call. */
  queue?: string;
  /** How long closing a microservice waits for handlers still running (default 10 s). */
  drainTimeoutMs?: number;
}

export interface InProcessMessagingOptions extends CommonMessagingOptions {
  transport: 'in-process';
  /** Defaults to InProcessBus.shared(): every service of the process on one bus. */
  bus?: InProcessBus;
}

export interface NatsMessagingOptions extends CommonMessagingOptions {
  transport: 'nats';
  url: string | string[];
  /** Connection name shown by the NATS server (service name and replica). */
  name?: string;
  /** Further nats.js connection options (credentials, TLS, reconnect policy). */
  connection?: Omit<ConnectionOptions, 'servers' | 'name'>;
}

export type MessagingOptions = InProcessMessagingOptions | NatsMessagingOptions;

/** Injection token of the raw Nest client proxy (InProcessClient or TesseraNatsClient) behind the MessageBus (tests and special cases only). */
export const MESSAGING_CLIENT = Symbol('MESSAGING_CLIENT');
const MESSAGING_OPTIONS = Symbol('MESSAGING_OPTIONS');

/**
 * A service outlives broker restarts: it keeps reconnecting (nats.js gives up after 10 attempts by default)
 * and retries every second. `connection` overrides these.
 */
const natsReconnectDefaults: Partial<ConnectionOptions> = { maxReconnectAttempts: -1, reconnectTimeWait: 1_000 };

/** A ClientProxy for the chosen transport. */
export function createMessagingClient(options: MessagingOptions): InProcessClient | TesseraNatsClient {
  switch (options.transport) {
    case 'in-process':
      return new InProcessClient({ bus: options.bus });
    case 'nats':
      return new TesseraNatsClient({ ...natsReconnectDefaults, ...options.connection, servers: options.url, name: options.name });
  }
}

/** The microservice transport strategy (server side) for the chosen transport, joined to `queue`. */
export function createMessagingServer(options: MessagingOptions & { queue: string }): InProcessServer | TesseraNatsServer {
  switch (options.transport) {
    case 'in-process':
      return new InProcessServer({ bus: options.bus, queue: options.queue, drainTimeoutMs: options.drainTimeoutMs });
    case 'nats':
      return new TesseraNatsServer({ ...natsReconnectDefaults, ...options.connection, servers: options.url, name: options.name, queue: options.queue, drainTimeoutMs: options.drainTimeoutMs });
  }
}

/** Options for `NestFactory.createMicroservice(Module, microserviceOptions(...))`. */
export function microserviceOptions(options: MessagingOptions & { queue: string }): CustomStrategy {
  return { strategy: createMessagingServer(options) };
}

/**
 * Connects an HTTP application's message handlers to the transport (then call `app.startAllMicroservices()`).
 * Guards, pipes, interceptors and filters of the app apply to the handlers too.
 */
export function connectMessaging(app: INestApplication, options: MessagingOptions & { queue: string }): ReturnType<INestApplication['connectMicroservice']> {
  return app.connectMicroservice(microserviceOptions(options), { inheritAppConfig: true });
}

@Injectable()
class MessagingLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(MESSAGING_CLIENT) private readonly client: InProcessClient | TesseraNatsClient,
    private readonly readiness: TransportReadiness,
  ) {}

  /** Connect at boot, so a service with an unreachable broker fails to start instead of failing its calls. */
  async onModuleInit(): Promise<void> {
    this.readiness.watch('message bus', this.client);
    await this.client.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}

/**
 * Provides MessageBus (and the raw client under MESSAGING_CLIENT) for one transport:
 * `MessagingModule.forRoot({ transport: 'in-process' })` or
 * `MessagingModule.forRoot({ transport: 'nats', url, queue })`. Global by default.
 */
@Module({})
export class MessagingModule {
  static forRoot(options: MessagingOptions & { global?: boolean }): DynamicModule {
    return {
      module: MessagingModule,
      global: options.global ?? true,
      providers: [
        { provide: MESSAGING_OPTIONS, useValue: options },
        { provide: MESSAGING_CLIENT, useFactory: (resolved: MessagingOptions) => createMessagingClient(resolved), inject: [MESSAGING_OPTIONS] },
        {
          provide: MessageBus,
          useFactory: (client: MessagingClient, resolved: MessagingOptions) => new MessageBus(client, { defaultTimeoutMs: resolved.defaultTimeoutMs, timeouts: resolved.timeouts, headers: resolved.headers }),
          inject: [MESSAGING_CLIENT, MESSAGING_OPTIONS],
        },
        TransportReadiness,
        MessagingLifecycle,
      ],
      exports: [MessageBus, MESSAGING_CLIENT, TransportReadiness],
    };
  }
}
