import { Controller, type INestApplicationContext, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { type AppDeploymentChanged, type HealthPingRequest, type HealthPingResponse, Subjects } from '@tessera/contracts';
import { startTracing, type Tracing } from '@tessera/telemetry';
import { eventually } from '@tessera/testing';
import { CommandHandler, EventHandler } from './handlers';
import { type MessageContext, propagationHeaders } from './message-context';
import { InProcessBus } from './in-process/in-process-bus';
import { MessageBus } from './message-bus';
import { type MessagingOptions, MessagingModule, microserviceOptions } from './messaging.module';

const bus = new InProcessBus();
const options: MessagingOptions = { transport: 'in-process', bus };
const heard: string[] = [];
const correlationIds: Array<string | undefined> = [];

@Controller()
class TracedHandlers {
  constructor(private readonly messages: MessageBus) {}

  /** Answers, and on the way tells everyone, passing on its message's headers: the event must join the request's trace. */
  @CommandHandler(Subjects.SystemHealthPing)
  async ping(_request: HealthPingRequest, context: MessageContext): Promise<HealthPingResponse> {
    await this.messages.emit(Subjects.AppsDeploymentChanged, { appId: 'app-1', deploymentId: 'd-1', version: 1 }, { headers: propagationHeaders(context) });
    return { service: 'traced', instanceId: 'one' };
  }

  @EventHandler(Subjects.AppsDeploymentChanged)
  changed(event: AppDeploymentChanged, context: MessageContext): void {
    heard.push(event.deploymentId);
    correlationIds.push(context.correlationId);
  }
}

@Module({ imports: [MessagingModule.forRoot(options)], controllers: [TracedHandlers] })
class ResponderModule {}

@Module({ imports: [MessagingModule.forRoot(options)] })
class CallerModule {}

describe('trace context across message hops', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let responder: INestMicroservice;
  let caller: INestApplicationContext;

  beforeAll(async () => {
    tracing = startTracing({ serviceName: 'messaging-spec', exporter });
    responder = await NestFactory.createMicroservice(ResponderModule, { ...microserviceOptions({ ...options, queue: 'traced' }), logger: false });
    await responder.listen();
    caller = await NestFactory.createApplicationContext(CallerModule, { logger: false });
  });

  afterAll(async () => {
    await caller?.close();
    await responder?.close();
    await tracing?.shutdown();
  });

  it('makes the handler span a child of the send span, and an event it emits a further descendant', async () => {
    await trace.getTracer('spec').startActiveSpan('client request', async (active) => {
      await caller.get(MessageBus).request(Subjects.SystemHealthPing, {});
      active.end();
    });
    await eventually(() => expect(heard).toEqual(['d-1']));
    await eventually(() => expect(exporter.getFinishedSpans().map((span) => span.name)).toContain('apps.deployment.changed process'));
    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.find((span) => span.name === name);
    const request = byName('client request');
    const send = byName('system.health.ping send');
    const handled = byName('system.health.ping process');
    const publish = byName('apps.deployment.changed publish');
    const consumed = byName('apps.deployment.changed process');
    expect(send?.parentSpanId).toBe(request?.spanContext().spanId);
    expect(handled?.parentSpanId).toBe(send?.spanContext().spanId);
    expect(publish?.parentSpanId).toBe(handled?.spanContext().spanId);
    expect(consumed?.parentSpanId).toBe(publish?.spanContext().spanId);
    expect(new Set([send, handled, publish, consumed].map((span) => span?.spanContext().traceId))).toEqual(new Set([request?.spanContext().traceId]));
  });

  it('carries the correlation id of the message being handled into the messages its handler sends', async () => {
    heard.length = 0;
    correlationIds.length = 0;
    await caller.get(MessageBus).request(Subjects.SystemHealthPing, {}, { headers: { 'x-correlation-id': 'one-request' } });
    await eventually(() => expect(heard).toEqual(['d-1']));
    expect(correlationIds).toEqual(['one-request']);
  });
});
