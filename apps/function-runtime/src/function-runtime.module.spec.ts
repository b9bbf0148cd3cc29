import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { InMemoryExecutionLogStore } from './testing/in-memory-execution-logs';
import { FunctionRuntimeModule } from './function-runtime.module';
import { FunctionRuntimeService } from './function-runtime.service';
import { NodeHttpPort } from './ports/http.port';
import { InMemoryAppFunctions, InMemoryDataAccess, InMemoryValues } from './testing/in-memory-ports';

describe('FunctionRuntimeModule', () => {
  it('provides a working FunctionRuntimeService from its ports', async () => {
    const functions = new InMemoryAppFunctions();
    functions.deploy('app', { hi: 'exports = () => "hi";' });
    const dependencies = { functions, dataAccess: new InMemoryDataAccess(), values: new InMemoryValues(), http: new NodeHttpPort(), logs: new InMemoryExecutionLogStore() };
    const app = await NestFactory.createApplicationContext(
      FunctionRuntimeModule.registerAsync({ useFactory: () => ({ dependencies, options: { memoryLimitMb: 32 } }) }),
      { logger: false },
    );
    try {
      const runtime = app.get(FunctionRuntimeService);
      const out = await runtime.execute({ appId: 'app', name: 'hi', arguments: [], caller: { type: 'system' }, origin: 'system' });
      expect(out.result).toBe('hi');
      expect(runtime.sandboxCount('app')).toBe(1);
    } finally {
      await app.close();
    }
    expect(app.get(FunctionRuntimeService).sandboxCount('app')).toBe(0);
  });
});
