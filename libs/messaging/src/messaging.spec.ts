import { type CanActivate, Controller, type DynamicModule, Inject, type INestApplicationContext, type INestMicroservice, Module, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { type ClientProxy } from '@nestjs/microservices';
import { type DocumentChanged, type FunctionRunRequest, type JsonValue, type FunctionRunResponse, type HealthPingResponse, InvalidPayloadError, MessageHeaders, Subjects, type AppDeploymentChanged } from '@tessera/contracts';
import { TesseraError } from '@tessera/domain';
import { eventually, findNatsServer, natsSkipReason, type NatsServerHandle, startNatsServer } from '@tessera/testing';
import { lastValueFrom } from 'rxjs';
import { MessagingTimeoutError, NoResponderError, RemoteHandlerError, toMessagingError } from './errors';
import { CommandHandler, EventHandler } from './handlers';
import { InProcessBus } from './in-process/in-process-bus';
import { MessageBus } from './message-bus';
import { type MessageContext } from './message-context';
import { connectMessaging, MESSAGING_CLIENT, type MessagingOptions, MessagingModule, microserviceOptions } from './messaging.module';
import { OutboundMessage } from './outbound-message';

// One suite, run over both transports: the same Nest applications (two replicas of a "runtime" service in one
// queue group, one "sync" service in another, one caller) exchange the same messages over each.

class FunctionNotFoundError extends TesseraError {
  readonly errorCode = 'FunctionNotFound';
  readonly httpStatus = 404;
}

/** What the handlers saw, shared by every replica of one test run. */
class Recorder {
  pings: string[] = [];
  runs: Array<{ replica: string; request: FunctionRunRequest; context: MessageContext }> = [];
  deployments: Array<{ group: string; replica: string; event: AppDeploymentChanged }> = [];
  private release: () => void = () => undefined;
  gate = this.newGate();

  newGate(): Promise<void> {
    return new Promise<void>((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release();
  }
}

const REPLICA = Symbol('REPLICA');
interface Replica {
  group: string;
  id: string;
  recorder: Recorder;
}

@Controller()
class RuntimeHandlers {
  constructor(@Inject(REPLICA) private readonly replica: Replica) {}

  @CommandHandler(Subjects.SystemHealthPing)
  async ping(): Promise<HealthPingResponse> {
    this.replica.recorder.pings.push(this.replica.id);
    return { service: this.replica.group, instanceId: this.replica.id };
  }

  @CommandHandler(Subjects.FunctionsExecutionRun)
  async run(request: FunctionRunRequest, context: MessageContext): Promise<FunctionRunResponse> {
    this.replica.recorder.runs.push({ replica: this.replica.id, request, context });
    switch (request.functionName) {
      case 'slow':
        await this.replica.recorder.gate;
        return { ok: true, result: 'late' };
      case 'missing':
        throw new FunctionNotFoundError(`function not found: 'missing'`);
      case 'crash':
        throw new Error('secret detail from the database');
      case 'off-contract':
        return { ok: 'maybe' } as unknown as FunctionRunResponse;
      default:
        return { ok: true, result: request.args };
    }
  }

  @EventHandler(Subjects.AppsDeploymentChanged)
  async deployed(event: AppDeploymentChanged): Promise<void> {
    await Promise.resolve();
    this.replica.recorder.deployments.push({ group: this.replica.group, replica: this.replica.id, event });
  }
}

@Controller()
class SyncHandlers {
  constructor(@Inject(REPLICA) private readonly replica: Replica) {}

  @EventHandler(Subjects.AppsDeploymentChanged)
  async deployed(event: AppDeploymentChanged): Promise<void> {
    this.replica.recorder.deployments.push({ group: this.replica.group, replica: this.replica.id, event });
  }
}

/** A handler every replica runs for every event, as each process drops its caches on a deployment. */
@Controller()
class CacheHandlers {
  constructor(@Inject(REPLICA) private readonly replica: Replica) {}

  @EventHandler(Subjects.AppsDeploymentChanged, { broadcast: true })
  async deployed(event: AppDeploymentChanged): Promise<void> {
    this.replica.recorder.deployments.push({ group: this.replica.group, replica: this.replica.id, event });
  }
}

/** Allows what `allow` says and counts how often it was asked. */
const countingGuard: CanActivate & { asked: number; allow: boolean } = {
  asked: 0,
  allow: true,
  canActivate() {
    countingGuard.asked++;
    return countingGuard.allow;
  },
};

@Controller()
class GuardedHandlers {
  @UseGuards(countingGuard)
  @CommandHandler(Subjects.SystemHealthPing)
  async ping(): Promise<HealthPingResponse> {
    await Promise.resolve();
    return { service: 'guarded', instanceId: 'g1' };
  }
}

@Module({ controllers: [GuardedHandlers] })
class GuardedModule {}

type HandlersClass = typeof RuntimeHandlers | typeof SyncHandlers | typeof CacheHandlers;

function serviceModule(controller: HandlersClass, replica: Replica): DynamicModule {
  @Module({})
  class ServiceModule {}
  return { module: ServiceModule, controllers: [controller], providers: [{ provide: REPLICA, useValue: replica }] };
}

@Module({})
class CallerModule {}

const runRequest = (functionName: string, args: FunctionRunRequest['args'] = []): FunctionRunRequest => ({
  appId: 'app-1',
  functionName,
  args,
  caller: { type: 'user', user: { id: 'u1' } },
  metadata: { origin: 'client' },
});

const transports = [{ transport: 'in-process' as const }, { transport: 'nats' as const }];

describe.each(transports)('messaging over $transport', ({ transport }) => {
  if (transport === 'nats' && !findNatsServer()) {
    // Skipped because the NATS leg needs a real nats-server binary.
    it.skip(`exchanges messages over NATS (skipped: ${natsSkipReason})`, () => undefined);
    return;
  }

  let nats: NatsServerHandle | undefined;
  let options: MessagingOptions;
  let recorder: Recorder;
  let runtimeReplicas: INestMicroservice[] = [];
  let syncReplica: INestMicroservice;
  let cacheReplicas: INestMicroservice[] = [];
  let caller: INestApplicationContext;
  let bus: MessageBus;

  beforeAll(async () => {
    if (transport === 'nats') {
      nats = await startNatsServer({ jetstream: false });
      options = { transport: 'nats', url: nats.url, defaultTimeoutMs: 5_000 };
    } else {
      options = { transport: 'in-process', bus: new InProcessBus(), defaultTimeoutMs: 5_000 };
    }
    recorder = new Recorder();
    const start = async (controller: HandlersClass, group: string, id: string): Promise<INestMicroservice> => {
      const app = await NestFactory.createMicroservice(serviceModule(controller, { group, id, recorder }), { ...microserviceOptions({ ...options, queue: group }), logger: false, abortOnError: false });
      await app.listen();
      return app;
    };
    runtimeReplicas = [await start(RuntimeHandlers, 'test-runtime', 'r1'), await start(RuntimeHandlers, 'test-runtime', 'r2')];
    syncReplica = await start(SyncHandlers, 'test-sync', 's1');
    cacheReplicas = [await start(CacheHandlers, 'test-cache', 'c1'), await start(CacheHandlers, 'test-cache', 'c2')];
    caller = await NestFactory.createApplicationContext({ module: CallerModule, imports: [MessagingModule.forRoot(options)] }, { logger: false, abortOnError: false });
    bus = caller.get(MessageBus);
  });

  afterAll(async () => {
    recorder?.open();
    await caller?.close();
    for (const app of [...runtimeReplicas, syncReplica, ...cacheReplicas]) await app?.close();
    await nats?.stop();
  });

  it('says whether every handler is in this process', () => {
    // Events meant for other processes (another replica's sessions) are only worth sending over NATS.
    expect(bus.local).toBe(transport === 'in-process');
  });

  it('answers a request with the typed response and carries the correlation id and trace context', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const args: JsonValue[] = [{ $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, { $numberLong: '9007199254740993' }, 'text'];
    const before = Date.now();
    const response = await bus.request(Subjects.FunctionsExecutionRun, runRequest('echo', args), {
      timeoutMs: 3_000,
      headers: { [MessageHeaders.CorrelationId]: 'corr-1', [MessageHeaders.Traceparent]: traceparent, [MessageHeaders.Tracestate]: 'vendor=1' },
    });
    expect(response).toEqual({ ok: true, result: args });
    const seen = recorder.runs.find((run) => run.context.correlationId === 'corr-1');
    expect(seen?.context.transport).toBe(transport);
    expect(seen?.context.subject).toBe('functions.execution.run');
    expect(seen?.context.headers[MessageHeaders.Traceparent]).toBe(traceparent);
    expect(seen?.context.headers[MessageHeaders.Tracestate]).toBe('vendor=1');
    expect(seen?.context.deadline).toBeGreaterThanOrEqual(before + 3_000);
  });

  it('gives a request a correlation id when the caller has none', async () => {
    await bus.request(Subjects.FunctionsExecutionRun, runRequest('anonymous'));
    const seen = recorder.runs.find((run) => run.request.functionName === 'anonymous');
    expect(seen?.context.correlationId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('shares requests among the replicas of a queue group, each handled exactly once', async () => {
    const before = recorder.pings.length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => bus.request(Subjects.SystemHealthPing, {})));
    const handled = recorder.pings.slice(before);
    expect(handled).toHaveLength(20);
    const byReplica = (list: string[], id: string): number => list.filter((replica) => replica === id).length;
    expect(answers.map((answer) => answer.instanceId).sort()).toEqual([...handled].sort());
    expect(byReplica(handled, 'r1')).toBeGreaterThan(0);
    expect(byReplica(handled, 'r2')).toBeGreaterThan(0);
    if (transport === 'in-process') expect(byReplica(handled, 'r1')).toBe(10); // round-robin
  });

  it('fans an event out to every queue group, once per group', async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `deployment-${transport}-${index}`);
    for (const [index, deploymentId] of ids.entries()) await bus.emit(Subjects.AppsDeploymentChanged, { appId: 'app-1', deploymentId, version: index });
    const mine = (group: string) => recorder.deployments.filter((entry) => entry.group === group && ids.includes(entry.event.deploymentId));
    await eventually(() => mine('test-runtime').length >= 20 && mine('test-sync').length >= 20, { timeoutMs: 5_000 });
    // A round trip through the same replicas lets any duplicate delivery land before counting.
    await bus.request(Subjects.SystemHealthPing, {});
    for (const group of ['test-runtime', 'test-sync']) expect(mine(group).map((entry) => entry.event.deploymentId).sort()).toEqual([...ids].sort());
    const runtimeReplicasUsed = new Set(mine('test-runtime').map((entry) => entry.replica));
    expect(runtimeReplicasUsed).toEqual(new Set(['r1', 'r2']));
  });

  it('delivers a broadcast event to every replica of a group, once each', async () => {
    const ids = Array.from({ length: 10 }, (_, index) => `broadcast-${transport}-${index}`);
    for (const [index, deploymentId] of ids.entries()) await bus.emit(Subjects.AppsDeploymentChanged, { appId: 'app-1', deploymentId, version: index });
    const seenBy = (replica: string) => recorder.deployments.filter((entry) => entry.replica === replica && ids.includes(entry.event.deploymentId));
    await eventually(() => seenBy('c1').length >= 10 && seenBy('c2').length >= 10, { timeoutMs: 5_000 });
    await bus.request(Subjects.SystemHealthPing, {});
    for (const replica of ['c1', 'c2']) expect(seenBy(replica).map((entry) => entry.event.deploymentId).sort()).toEqual([...ids].sort());
  });

  it('times out with MessagingTimeoutError when the handler does not answer in time', async () => {
    const started = Date.now();
    await expect(bus.request(Subjects.FunctionsExecutionRun, runRequest('slow'), { timeoutMs: 200 })).rejects.toBeInstanceOf(MessagingTimeoutError);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(2_000);
    recorder.open();
    recorder.gate = recorder.newGate();
  });

  it('refuses an invalid request before sending it', async () => {
    const before = recorder.runs.length;
    const bad = { ...runRequest('echo'), caller: { type: 'robot' } } as unknown as FunctionRunRequest;
    const failure = await bus.request(Subjects.FunctionsExecutionRun, bad).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidPayloadError);
    expect((failure as InvalidPayloadError).part).toBe('request');
    expect(recorder.runs.length).toBe(before);
  });

  it('answers an invalid request that bypassed the facade with a typed error, and keeps serving', async () => {
    const client = caller.get<ClientProxy>(MESSAGING_CLIENT);
    const raw = await lastValueFrom(client.send(Subjects.FunctionsExecutionRun, new OutboundMessage({ appId: 42 }, {}))).catch((error: unknown) => error);
    const failure = toMessagingError(Subjects.FunctionsExecutionRun, raw);
    expect(failure).toBeInstanceOf(InvalidPayloadError);
    expect((failure as InvalidPayloadError).issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(['appId', 'functionName', 'caller']));
    await expect(bus.request(Subjects.SystemHealthPing, {})).resolves.toMatchObject({ service: 'test-runtime' });
  });

  it("reports a handler's typed error with its code and hides an unknown error's details", async () => {
    const missing = await bus.request(Subjects.FunctionsExecutionRun, runRequest('missing')).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(RemoteHandlerError);
    expect(missing).toMatchObject({ errorCode: 'FunctionNotFound', httpStatus: 404, message: "function not found: 'missing'" });

    const crash = await bus.request(Subjects.FunctionsExecutionRun, runRequest('crash'), { headers: { [MessageHeaders.CorrelationId]: 'corr-crash' } }).catch((error: unknown) => error);
    expect(crash).toBeInstanceOf(RemoteHandlerError);
    expect(crash).toMatchObject({ errorCode: 'HandlerFailed', httpStatus: 500 });
    expect((crash as Error).message).toContain('corr-crash');
    expect((crash as Error).message).not.toContain('secret');
  });

  // Nest's pipeline (parameter pipes, guards, interceptors, filters) runs for a subject's first request only:
  // later ones reach the command method directly, with the same answers and the same errors. (In-process
  // only: over NATS every request goes through Nest.)
  if (transport === 'in-process')
    it('calls a command method directly once Nest has called it, answering and failing as before', async () => {
      const pipeline = vi.spyOn(InterceptorsConsumer.prototype, 'intercept');
      try {
        for (let round = 0; round < 4; round++) {
          await expect(bus.request(Subjects.FunctionsExecutionRun, runRequest('echo', [round]))).resolves.toEqual({ ok: true, result: [round] });
          const missing = await bus.request(Subjects.FunctionsExecutionRun, runRequest('missing')).catch((error: unknown) => error);
          expect(missing).toBeInstanceOf(RemoteHandlerError);
          expect(missing).toMatchObject({ errorCode: 'FunctionNotFound', httpStatus: 404, message: "function not found: 'missing'" });
          const crash = await bus.request(Subjects.FunctionsExecutionRun, runRequest('crash'), { headers: { [MessageHeaders.CorrelationId]: `corr-direct-${round}` } }).catch((error: unknown) => error);
          expect(crash).toMatchObject({ errorCode: 'HandlerFailed', httpStatus: 500 });
          expect((crash as Error).message).toContain(`corr-direct-${round}`);
          const offContract = await bus.request(Subjects.FunctionsExecutionRun, runRequest('off-contract')).catch((error: unknown) => error);
          expect(offContract).toBeInstanceOf(InvalidPayloadError);
          expect((offContract as InvalidPayloadError).part).toBe('response');
        }
        // Sixteen requests over two replicas: at most each replica's first went through Nest.
        expect(pipeline.mock.calls.length).toBeLessThanOrEqual(2);
      } finally {
        pipeline.mockRestore();
      }
    });

  // A guard of the handler's own runs on every request: a handler that names one is never called directly.
  if (transport === 'in-process')
    it("keeps a guarded command handler on Nest's path, its guard asked every time", async () => {
      const guardBus = new InProcessBus();
      const options: MessagingOptions = { transport: 'in-process', bus: guardBus, defaultTimeoutMs: 5_000 };
      const guarded = await NestFactory.createMicroservice(GuardedModule, { ...microserviceOptions({ ...options, queue: 'guarded' }), logger: false, abortOnError: false });
      await guarded.listen();
      const client = await NestFactory.createApplicationContext({ module: CallerModule, imports: [MessagingModule.forRoot(options)] }, { logger: false, abortOnError: false });
      try {
        const guardedBus = client.get(MessageBus);
        countingGuard.asked = 0;
        countingGuard.allow = true;
        for (let i = 0; i < 3; i++) await expect(guardedBus.request(Subjects.SystemHealthPing, {})).resolves.toMatchObject({ service: 'guarded' });
        countingGuard.allow = false;
        await expect(guardedBus.request(Subjects.SystemHealthPing, {})).rejects.toBeInstanceOf(RemoteHandlerError);
        expect(countingGuard.asked).toBe(4);
      } finally {
        await client.close();
        await guarded.close();
      }
    });

  it('refuses a handler response that breaks the contract', async () => {
    const failure = await bus.request(Subjects.FunctionsExecutionRun, runRequest('off-contract')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidPayloadError);
    expect((failure as InvalidPayloadError).part).toBe('response');
  });

  it('drops an invalid event without disturbing the consumers', async () => {
    const client = caller.get<ClientProxy>(MESSAGING_CLIENT);
    await lastValueFrom(client.emit(Subjects.AppsDeploymentChanged, new OutboundMessage({ appId: 'app-1', deploymentId: 'bad', version: 'seven' }, {})), { defaultValue: undefined });
    await bus.emit(Subjects.AppsDeploymentChanged, { appId: 'app-1', deploymentId: `after-bad-${transport}`, version: 8 });
    // One runtime replica, the sync replica, and both broadcast replicas.
    await eventually(() => recorder.deployments.filter((entry) => entry.event.deploymentId === `after-bad-${transport}`).length === 4, { timeoutMs: 5_000 });
    expect(recorder.deployments.some((entry) => entry.event.deploymentId === 'bad')).toBe(false);
  });

  it("connects an HTTP application's handlers and adds ambient headers to every message", async () => {
    const received: Array<{ event: DocumentChanged; context: MessageContext }> = [];
    @Controller()
    class ChangeHandlers {
      @EventHandler(Subjects.DatastoreDocumentChanged)
      async changed(event: DocumentChanged, context: MessageContext): Promise<void> {
        received.push({ event, context });
      }
    }
    @Module({ controllers: [ChangeHandlers] })
    class HttpModule {}
    const http = await NestFactory.create<NestFastifyApplication>(HttpModule, new FastifyAdapter(), { logger: false, abortOnError: false });
    connectMessaging(http, { ...options, queue: 'test-http' });
    await http.startAllMicroservices();
    await http.init();
    const traced = await NestFactory.createApplicationContext(
      { module: CallerModule, imports: [MessagingModule.forRoot({ ...options, headers: () => ({ [MessageHeaders.Traceparent]: 'ambient', [MessageHeaders.CorrelationId]: 'ambient-corr' }) })] },
      { logger: false, abortOnError: false },
    );
    try {
      const change: DocumentChanged = {
        appId: 'app-1',
        service: 'mongodb-atlas',
        cluster: 'Cluster0',
        db: 'todo',
        coll: 'items',
        operationType: 'insert',
        documentKey: { _id: { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' } },
        fullDocument: { _id: { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, done: false },
        resumeToken: { _data: '826' },
      };
      await traced.get(MessageBus).emit(Subjects.DatastoreDocumentChanged, change, { headers: { [MessageHeaders.CorrelationId]: 'explicit-corr' } });
      await eventually(() => received.length === 1, { timeoutMs: 5_000 });
      expect(received[0].event).toEqual(change);
      expect(received[0].context.headers[MessageHeaders.Traceparent]).toBe('ambient');
      expect(received[0].context.correlationId).toBe('explicit-corr');
    } finally {
      await traced.close();
      await http.close();
    }
  });

  it('lets a closing replica finish the request it is handling and deliver the reply', async () => {
    await runtimeReplicas.pop()?.close();
    const [last] = runtimeReplicas;
    recorder.gate = recorder.newGate();
    const reply = bus.request(Subjects.FunctionsExecutionRun, runRequest('slow'), { timeoutMs: 5_000, headers: { [MessageHeaders.CorrelationId]: 'corr-drain' } });
    await eventually(() => recorder.runs.some((run) => run.context.correlationId === 'corr-drain'), { timeoutMs: 5_000 });
    let closed = false;
    const closing = last.close().then(() => (closed = true));
    runtimeReplicas = [];
    // Give the close a few turns of the event loop: it must still be waiting for the handler.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    recorder.open();
    await expect(reply).resolves.toEqual({ ok: true, result: 'late' });
    await closing;
    expect(closed).toBe(true);
  });

  it('fails fast with NoResponderError when no replica listens', async () => {
    for (const app of runtimeReplicas) await app.close();
    runtimeReplicas = [];
    const started = Date.now();
    await expect(bus.request(Subjects.SystemHealthPing, {}, { timeoutMs: 5_000 })).rejects.toBeInstanceOf(NoResponderError);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
