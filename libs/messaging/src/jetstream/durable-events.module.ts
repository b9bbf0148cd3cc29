import { type DynamicModule, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Subjects } from '@tessera/contracts';
import { type ConnectionOptions } from 'nats';
import { JetStreamEvents } from './durable-events';
import { DurableEvents, type EventStreamConfig } from './durable-events.port';
import { InProcessDurableEvents } from './in-process-durable-events';

/** The stream of document changes, consumed by triggers (and any other durable consumer). */
export const DATASTORE_CHANGES_STREAM = 'DATASTORE_CHANGES';

/** The stream of app users' authentication events, consumed by authentication triggers. */
export const AUTH_EVENTS_STREAM = 'APPS_AUTH_EVENTS';

/** The platform's durable event streams, created or updated at boot. */
export const durableStreams: readonly EventStreamConfig[] = [
  { name: DATASTORE_CHANGES_STREAM, subjects: [Subjects.DatastoreDocumentChanged] },
  { name: AUTH_EVENTS_STREAM, subjects: [Subjects.AppsAuthEventOccurred] },
];

export interface DurableEventsOptions {
  url: string | string[];
  name?: string;
  connection?: Omit<ConnectionOptions, 'servers' | 'name'>;
  /** Streams to create or update at boot (default `durableStreams`). */
  streams?: readonly EventStreamConfig[];
}

@Injectable()
class DurableEventsLifecycle implements OnApplicationShutdown {
  constructor(@Inject(DurableEvents) private readonly events: DurableEvents) {}

  async onApplicationShutdown(): Promise<void> {
    await this.events.close();
  }
}

/**
 * Provides `DurableEvents` (and, over NATS, `JetStreamEvents`): connects at boot, makes sure the streams
 * exist, and on shutdown stops its consumers (finishing the event in hand) and releases the transport. Global.
 */
@Module({})
export class DurableEventsModule {
  /** Distributed mode: JetStream streams on the NATS server. */
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
        { provide: DurableEvents, useExisting: JetStreamEvents },
        DurableEventsLifecycle,
      ],
      exports: [JetStreamEvents, DurableEvents],
    };
  }

  /** Standalone mode: the same streams in this process's memory. */
  static inProcess(options: { streams?: readonly EventStreamConfig[] } = {}): DynamicModule {
    return {
      module: DurableEventsModule,
      global: true,
      providers: [
        {
          provide: DurableEvents,
          useFactory: async (): Promise<DurableEvents> => {
            const events = new InProcessDurableEvents();
            for (const stream of options.streams ?? durableStreams) await events.ensureStream(stream);
            return events;
          },
        },
        DurableEventsLifecycle,
      ],
      exports: [DurableEvents],
    };
  }
}
