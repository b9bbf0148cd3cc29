/**
 * The NATS leg of the function runtime bench: a runtime replica answering `functions.execution.run` over a
 * real nats-server, called through the MessageBus, the way the HTTP edge calls it in distributed mode.
 */
import { Controller, Module, type INestApplicationContext, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Subjects, type CommandRequest, type CommandResponseInput } from '@tessera/contracts';
import { FunctionRuntimeModule, FunctionRuntimeService, type FunctionRuntimeConfig } from '@tessera/function-runtime';
import { CommandHandler, MessageBus, MessagingModule, microserviceOptions } from '@tessera/messaging';
import { findNatsServer, natsSkipReason, startNatsServer } from '@tessera/testing';
import { EJSON } from 'bson';

type RunRequest = CommandRequest<typeof Subjects.FunctionsExecutionRun>;
type RunResponse = CommandResponseInput<typeof Subjects.FunctionsExecutionRun>;

/** A minimal edge for the bench (the service's real handler needs the platform's deployed apps). */
@Controller()
class BenchRunHandler {
  constructor(private readonly runtime: FunctionRuntimeService) {}

  @CommandHandler(Subjects.FunctionsExecutionRun)
  async run(request: RunRequest): Promise<RunResponse> {
    const result = await this.runtime.execute({
      appId: request.appId,
      name: request.functionName,
      arguments: request.args.map((arg): unknown => EJSON.deserialize(arg as never, { relaxed: false })),
      caller: request.caller,
      origin: 'client',
    });
    return { ok: true, result: JSON.parse(result.resultEjson) as never };
  }
}

export interface NatsLeg {
  call(i: number): Promise<unknown>;
  close(): Promise<void>;
}

/** Starts nats-server, a runtime replica and a caller; undefined (with the reason printed) without nats-server. */
export async function startNatsLeg(config: FunctionRuntimeConfig, appId: string, functionName: string): Promise<NatsLeg | undefined> {
  if (!findNatsServer()) {
    console.log(`runtime over NATS                  skipped: ${natsSkipReason}`);
    return undefined;
  }
  const nats = await startNatsServer({ jetstream: false });
  const options = { transport: 'nats' as const, url: nats.url, defaultTimeoutMs: 10_000 };

  @Module({ imports: [FunctionRuntimeModule.register(config)], controllers: [BenchRunHandler] })
  class RuntimeReplicaModule {}
  @Module({ imports: [MessagingModule.forRoot(options)] })
  class CallerModule {}

  const replica: INestMicroservice = await NestFactory.createMicroservice(RuntimeReplicaModule, {
    ...microserviceOptions({ ...options, queue: 'bench-function-runtime' }),
    logger: false,
  });
  await replica.listen();
  const caller: INestApplicationContext = await NestFactory.createApplicationContext(CallerModule, { logger: false });
  await caller.init();
  const bus = caller.get(MessageBus);
  return {
    call: async (i) => {
      const response = await bus.request(Subjects.FunctionsExecutionRun, {
        appId,
        functionName,
        args: [`id-${i}`],
        caller: { type: 'user', user: { id: 'bench-user' } },
        metadata: { origin: 'client' },
      });
      if (!response.ok) throw new Error(response.error.message);
      return response.result;
    },
    close: async () => {
      await caller.close();
      await replica.close();
      await nats.stop();
    },
  };
}
