import { Controller, type INestApplicationContext, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type FunctionRunRequest, type FunctionRunResponse, MessageHeaders, Subjects } from '@tessera/contracts';
import { TesseraError } from '@tessera/domain';
import { CommandHandler, InProcessBus, MessageBus, MessagingModule, microserviceOptions, RemoteHandlerError } from '@tessera/messaging';
import { AppServicesExceptionFilter } from './app-services-exception.filter';

class FunctionMissing extends TesseraError {
  readonly errorCode = 'FunctionNotFound';
  readonly httpStatus = 404;
}

@Controller()
class FailingHandlers {
  @CommandHandler(Subjects.FunctionsExecutionRun)
  async run(request: FunctionRunRequest): Promise<FunctionRunResponse> {
    await Promise.resolve();
    if (request.functionName === 'missing') throw new FunctionMissing(`function not found: '${request.functionName}'`);
    throw new Error('secret detail');
  }
}

@Module({ controllers: [FailingHandlers] })
class HandlersModule {}

@Module({})
class CallerModule {}

const runRequest = (functionName: string): FunctionRunRequest => ({ appId: 'app-1', functionName, args: [], caller: { type: 'user', user: { id: 'u1' } }, metadata: { origin: 'client' } });

// The host connects its message transport with the HTTP app's config, this filter included: a handler's
// error must still reach the caller with its code, as Nest's own RPC filter sends it (it once arrived as a
// transport failure, 503, whatever the handler said).
describe('AppServicesExceptionFilter on message handlers', () => {
  let handlers: INestMicroservice;
  let caller: INestApplicationContext;
  let bus: MessageBus;

  beforeAll(async () => {
    const options = { transport: 'in-process' as const, bus: new InProcessBus(), defaultTimeoutMs: 5_000 };
    handlers = await NestFactory.createMicroservice(HandlersModule, { ...microserviceOptions({ ...options, queue: 'filter-test' }), logger: false, abortOnError: false });
    handlers.useGlobalFilters(new AppServicesExceptionFilter());
    await handlers.listen();
    caller = await NestFactory.createApplicationContext({ module: CallerModule, imports: [MessagingModule.forRoot(options)] }, { logger: false, abortOnError: false });
    bus = caller.get(MessageBus);
  });

  afterAll(async () => {
    await caller?.close();
    await handlers?.close();
  });

  it("answers a handler's typed error with its code, and an unknown one as HandlerFailed without its detail, every time", async () => {
    for (let round = 0; round < 3; round++) {
      const missing = await bus.request(Subjects.FunctionsExecutionRun, runRequest('missing')).catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(RemoteHandlerError);
      expect(missing).toMatchObject({ errorCode: 'FunctionNotFound', httpStatus: 404, message: "function not found: 'missing'" });
      const crash = await bus.request(Subjects.FunctionsExecutionRun, runRequest('crash'), { headers: { [MessageHeaders.CorrelationId]: `corr-${round}` } }).catch((error: unknown) => error);
      expect(crash).toBeInstanceOf(RemoteHandlerError);
      expect(crash).toMatchObject({ errorCode: 'HandlerFailed', httpStatus: 500 });
      expect((crash as Error).message).toContain(`corr-${round}`);
      expect((crash as Error).message).not.toContain('secret');
    }
  });
});
