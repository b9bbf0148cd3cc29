import { Controller, type INestApplicationContext, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type HealthPingResponse, Subjects } from '@tessera/contracts';
import { eventually, findNatsServer, natsSkipReason, type NatsServerHandle, startNatsServer } from '@tessera/testing';
import { CommandHandler } from '../handlers';
import { MessageBus } from '../message-bus';
import { type NatsMessagingOptions, MessagingModule, microserviceOptions } from '../messaging.module';

@Controller()
class PingHandler {
  @CommandHandler(Subjects.SystemHealthPing)
  async ping(): Promise<HealthPingResponse> {
    return { service: 'reconnect-test', instanceId: 'only' };
  }
}

@Module({ controllers: [PingHandler] })
class ResponderModule {}

@Module({})
class CallerModule {}

// Skipped when no nats-server binary is installed: the test restarts a real server.
describe.skipIf(!findNatsServer())(`NATS transport across a server restart${findNatsServer() ? '' : ` (skipped: ${natsSkipReason})`}`, () => {
  let nats: NatsServerHandle;
  let responder: INestMicroservice;
  let caller: INestApplicationContext;

  beforeAll(async () => {
    nats = await startNatsServer({ jetstream: false });
    const options: NatsMessagingOptions = { transport: 'nats', url: nats.url, connection: { reconnectTimeWait: 100 } };
    responder = await NestFactory.createMicroservice(ResponderModule, { ...microserviceOptions({ ...options, queue: 'reconnect-test' }), logger: false, abortOnError: false });
    await responder.listen();
    caller = await NestFactory.createApplicationContext({ module: CallerModule, imports: [MessagingModule.forRoot(options)] }, { logger: false, abortOnError: false });
  });

  afterAll(async () => {
    await caller?.close();
    await responder?.close();
    await nats?.stop();
  });

  it('serves requests again once the server is back, without restarting the services', async () => {
    const bus = caller.get(MessageBus);
    await expect(bus.request(Subjects.SystemHealthPing, {})).resolves.toEqual({ service: 'reconnect-test', instanceId: 'only' });
    await nats.restart();
    const answer = await eventually(() => bus.request(Subjects.SystemHealthPing, {}, { timeoutMs: 500 }), { timeoutMs: 15_000, intervalMs: 100 });
    expect(answer.instanceId).toBe('only');
  });
});
