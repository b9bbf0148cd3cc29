import { type DynamicModule, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Subjects } from '@tessera/contracts';
import { type ConnectionOptions } from 'nats';
import { type EventStreamConfig, JetStreamEvents } from './durable-events';

/** The platform's durable event streams: document changes, consumed by triggers and other durable consumers. */
export const durableStreams: readonly EventStreamConfig[] = [{ name: 'DATASTORE_CHANGES', subjects: [Subjects.DatastoreDocumentChanged] }];

export interface DurableEventsOptions {
  url: string | string[];
  name?: string;
  connection?: Omit<ConnectionOptions, 'servers' | 'name'>;
  /** Streams to create or update at boot (default `durableStreams`). */
  streams?: readonly EventStreamConfig[];
}

@Injectable()
class DurableEventsLifecycle implements OnApplicationShutdown {
  constructor(@Inject(JetStreamEvents) private readonly events: JetStreamEvents) {}

  async onApplicationShutdown(): Promise<void> {
    await this.events.close();
  }
}

/**
 * Provides JetStreamEvents (distributed mode): connects at boot, makes sure the streams exist, and on
 * shutdown stops its consumers (finishing the event in hand) and drains the connection. Global.
 */
@Module({})
export class DurableEventsModule {
  static forRoot(options: DurableEventsOptions): DynamicModule {
    return {
      module: DurableEventsModule,
      global: true,
      providers: [
        {
          provide: JetStreamEvents,
          useFactory: async (): Promise<JetStreamEvents> => {
            const events = await JetStreamEvents.connect(options);
            for (const stream of options.streams ?? durableStreams) await events.ensureStream(stream);
            return events;
          },
        },
        DurableEventsLifecycle,
      ],
      exports: [JetStreamEvents],
    };
  }
}
